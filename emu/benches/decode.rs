//! Decode throughput benchmark (filled in at M4).
fn main() {}
