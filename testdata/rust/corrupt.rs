// corrupt.rs: the demo's bug in Rust. set_name copies a name into
// name[8] through a raw pointer without a bound, past its end into next;
// sum walks the list and faults on the corrupted pointer.
#[repr(C)]
struct Node {
    name: [u8; 8],
    next: *const Node,
    value: i64,
}

#[inline(never)]
fn set_name(n: &mut Node, s: &str) {
    let p = n.name.as_mut_ptr();
    for (i, b) in s.bytes().enumerate() {
        unsafe { *p.add(i) = b } // no bound: runs into next
    }
}

#[inline(never)]
fn sum(head: *const Node) -> i64 {
    let mut total = 0;
    let mut n = head;
    while !n.is_null() {
        unsafe {
            total += (*n).value;
            n = (*n).next;
        }
    }
    total
}

fn main() {
    let mut c = Box::new(Node { name: [0; 8], next: std::ptr::null(), value: 3 });
    let mut b = Box::new(Node { name: [0; 8], next: &*c, value: 2 });
    let mut a = Box::new(Node { name: [0; 8], next: &*b, value: 1 });
    set_name(&mut a, "alpha");
    set_name(&mut b, "bravo-overflowing");
    set_name(&mut c, "charlie");
    println!("sum {}", sum(&*a));
}
