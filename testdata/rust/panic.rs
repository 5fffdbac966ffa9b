// An out-of-bounds index that panics (built with -C panic=abort, so the
// panic ends in SIGABRT with the whole panic path on the stack).
fn pick(v: &[i32], i: usize) -> i32 {
    v[i]
}

fn main() {
    let v = vec![10, 20, 30];
    let idx = std::env::args().count() + 4;
    let x = pick(&v, idx);
    println!("{}", x);
}
