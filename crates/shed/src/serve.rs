//! `shed serve` and `shed mcp`: open the host on a data folder and run its
//! doors — the HTTP server (the MCP door at /mcp, with room for more routes)
//! or MCP on stdio as one person.

use std::path::{Path, PathBuf};

use anyhow::Context;
use shed_host::{Host, HostConfig};

use crate::ServeArgs;

/// Where shed keeps its data: the data folder (the broker's socket, and the
/// SQLite database unless `database` names a server).
pub struct Place {
    pub data: PathBuf,
    /// `--database` / `SHED_DATABASE_URL`.
    pub database: Option<String>,
}

/// Opens the host on `place`, creating the data folder (mode 0700) when missing.
pub async fn open(place: &Place, public_url: &str) -> anyhow::Result<Host> {
    let opened = Host::open(HostConfig {
        data_dir: place.data.clone(),
        public_url: public_url.to_string(),
        database: place.database.clone(),
    })
    .await;
    match &place.database {
        // The store's sentence names the server and what to do.
        Some(_) => Ok(opened?),
        None => opened
            .with_context(|| format!("could not open the data folder {}", place.data.display())),
    }
}

/// The whole HTTP server's routes. Other doors merge theirs here.
pub fn routes(host: &Host, args: &ServeArgs) -> anyhow::Result<axum::Router> {
    let mcp = shed_mcp::router(host.clone(), args.listen)?;
    Ok(shed_web::router(host.clone(), mcp))
}

/// Serves `host` over HTTP until Ctrl-C.
pub async fn run_server(host: Host, data: &Path, args: &ServeArgs) -> anyhow::Result<()> {
    let _queue = crate::command_cli::start_queue(&host, data, args.queue.as_deref())?;
    let routes = routes(&host, args)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("could not listen on {} — is another shed running there? pass --listen with a free port", args.listen))?;
    let address = listener
        .local_addr()
        .context("could not read the listening address")?;
    tracing::info!(
        "shed is serving {} on http://{address} — MCP at {}{}",
        data.display(),
        host.public_url(),
        shed_mcp::MCP_PATH
    );
    crate::http::serve(listener, routes, async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shed is stopping");
    })
    .await
    .context("the server stopped")
}

/// `shed serve`.
pub async fn serve(place: &Place, args: &ServeArgs) -> anyhow::Result<()> {
    let host = open(place, &args.public_url()).await?;
    run_server(host, &place.data, args).await
}

/// `shed mcp --as <handle>`.
pub async fn stdio(place: &Place, handle: &str, public_url: &str) -> anyhow::Result<()> {
    let host = open(place, public_url.trim_end_matches('/')).await?;
    let caller = host.caller_for_handle(handle).await?;
    shed_mcp::serve_stdio(host, caller).await?;
    Ok(())
}
