// gdb's names of Rust functions and its printing of references
// (e2e/gdb_compare_test.go): a method taking &mut self, closures, a
// generic function, a trait method, core's wrapping_mul inlined into a
// closure an iterator calls. Nothing is printed before the end, so that
// the answers of the commands hold no output of the program.
struct Counter {
    total: u64,
    steps: u32,
}

impl Counter {
    fn bump(&mut self, by: u64) -> u64 {
        self.total = self.total.wrapping_mul(3).wrapping_add(by);
        self.steps += 1;
        self.total
    }
}

trait Area {
    fn area(&self) -> u64;
}

struct Rect {
    w: u64,
    h: u64,
}

impl Area for Rect {
    fn area(&self) -> u64 {
        self.w * self.h
    }
}

fn largest<T: PartialOrd + Copy>(items: &[T]) -> T {
    let mut best = items[0];
    for &it in items {
        if it > best {
            best = it;
        }
    }
    best
}

fn main() {
    let mut c = Counter { total: 1, steps: 0 };
    let scale = 7u64;
    let mul = |x: u64| x.wrapping_mul(scale);
    let mut sum = 0u64;
    for k in 1..4u64 {
        sum += c.bump(mul(k));
    }
    let squares: u64 = (1..5u64).map(|v| v.wrapping_mul(v)).sum();
    let best = largest(&[3u32, 9, 4]);
    let r = Rect { w: 3, h: 4 };
    let a = r.area();
    println!("{} {} {} {} {}", sum, c.steps, squares, best, a);
}
