//! The `shed-harness` binary: see `shed-harness --help`.

use tracing_subscriber::EnvFilter;

/// The harness allocates and frees many small strings per listing row;
/// mimalloc does that faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
