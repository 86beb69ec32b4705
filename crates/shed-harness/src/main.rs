//! The `shed-harness` binary.
fn main() {}
