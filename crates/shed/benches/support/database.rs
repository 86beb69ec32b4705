//! What the benches that run on a PostgreSQL server share: the server they
//! were named (`--database URL` or `SHED_BENCH_DATABASE`) and `psql` on it
//! (to make and drop the database a run works in).

/// The server `--database URL` or SHED_BENCH_DATABASE names, if any.
pub fn database_flag() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--database")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var("SHED_BENCH_DATABASE").ok())
        .filter(|url| !url.is_empty())
}

/// Runs `sql` on the server with `psql`.
pub fn psql(server: &str, sql: &str) {
    let status = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", server, "-c", sql])
        .status()
        .expect("psql runs");
    assert!(status.success(), "psql: {sql}");
}
