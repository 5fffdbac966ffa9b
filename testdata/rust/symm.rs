// The symmetry check's Rust program (e2e/symmetry_test.go): calls, a
// method, a closure and recursion. More rounds with more arguments.
struct Acc {
    total: u64,
}

impl Acc {
    fn add(&mut self, v: u64) {
        self.total = self.total.wrapping_mul(31).wrapping_add(v);
    }
}

fn depth(n: u64) -> u64 {
    if n == 0 {
        return 1;
    }
    let r = depth(n - 1) + n;
    r
}

fn main() {
    let rounds: u64 = std::env::args().count() as u64 * 200;
    let mut acc = Acc { total: 0 };
    let twice = |x: u64| x * 2;
    for k in 0..rounds {
        let d = depth(k % 5);
        acc.add(twice(d));
    }
    std::process::exit((acc.total & 1) as i32);
}
