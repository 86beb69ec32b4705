//! The `shed-harness` binary: see `shed-harness --help`.

use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    let code = shed_harness::cli::binary_main().await;
    std::process::exit(code);
}
