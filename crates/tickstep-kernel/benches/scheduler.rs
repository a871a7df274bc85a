//! Criterion benches for the kernel scheduler (filled in below).
fn main() {}
