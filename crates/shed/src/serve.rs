//! `shed serve` and `shed mcp`: open the host on a data folder and run its
//! doors — the HTTP server (the MCP door at /mcp, the web door, the health
//! routes) or MCP on stdio as one person.
//!
//! A server stops on SIGTERM or SIGINT: it stops accepting (HTTP and the
//! broker's queue), lets the calls in flight finish for at most
//! `--drain-seconds`, commits every write made and closes the database,
//! prints how long the drain took, and exits 0.

use std::path::{Path, PathBuf};

use anyhow::Context;
use shed_host::{Host, HostConfig};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::{ServeArgs, ServeCommandArgs};

/// Where shed keeps its data — the data folder (the broker's socket, and
/// the SQLite database unless `database` names a server) — and the address
/// it is reached at, when given.
pub struct Place {
    pub data: PathBuf,
    /// `--database` / `SHED_DATABASE_URL`.
    pub database: Option<String>,
    /// `--public-url` / `SHED_PUBLIC_URL`.
    pub public_url: Option<String>,
}

/// Opens the host on `place` at `public_url`, creating the data folder
/// (mode 0700) when missing: what a server opens.
pub async fn open(place: &Place, public_url: &str) -> anyhow::Result<Host> {
    let opened = Host::open(HostConfig {
        data_dir: place.data.clone(),
        public_url: public_url.to_string(),
        database: place.database.clone(),
    })
    .await;
    said_where(place, opened)
}

/// The flags a `shed` command the host suggests needs, besides `--as`, to
/// reach this data again when pasted into the same shell: `--data <folder>`
/// unless it is the default folder or the one `SHED_DATA` names.
fn terminal_flags(place: &Place) -> String {
    let from_env = std::env::var_os("SHED_DATA").is_some_and(|data| place.data == data);
    if place.data == std::path::Path::new(DEFAULT_DATA) || from_env {
        return String::new();
    }
    format!("--data {}", shell_word(&place.data.to_string_lossy()))
}

/// The data folder `--data` defaults to.
pub const DEFAULT_DATA: &str = "shed-data";

/// `word` as one word of a POSIX shell: as it is when it holds nothing a
/// shell reads, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+:=@%,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Opens the host on `place` for a CLI command, at its public URL when
/// given, else at the address the last server on the data recorded, so the
/// links it prints point where the server is.
pub async fn open_for_cli(place: &Place) -> anyhow::Result<Host> {
    let opened = Host::open_at_served_url(
        &place.data,
        place.database.as_deref(),
        place.public_url.as_deref(),
    )
    .await;
    Ok(said_where(place, opened)?.at_terminal(&terminal_flags(place)))
}

/// What a CLI command answered: printed on stdout, or the host's refusal —
/// its one sentence alone on stderr, as the spec words it — and a failing
/// exit.
pub fn print_or_refuse(answered: Result<String, shed_host::HostError>) -> anyhow::Result<()> {
    match answered {
        Ok(printed) => {
            println!("{printed}");
            Ok(())
        }
        Err(refusal) => {
            eprintln!("{refusal}");
            std::process::exit(1);
        }
    }
}

/// A host that did not open, said with where: the store's own sentence for
/// a database server (it names the server and what to do), the data
/// folder's for a file.
fn said_where(place: &Place, opened: Result<Host, shed_host::HostError>) -> anyhow::Result<Host> {
    match &place.database {
        Some(_) => Ok(opened?),
        None => opened
            .with_context(|| format!("could not open the data folder {}", place.data.display())),
    }
}

/// The whole HTTP server's routes, each request measured. Other doors merge
/// theirs here; the platform's host answers the MCP door and the health
/// routes.
pub fn routes(host: &Host, args: &ServeArgs) -> anyhow::Result<axum::Router> {
    let platform =
        shed_mcp::router(host.clone(), args.listen)?.merge(crate::health::routes(host.clone()));
    Ok(shed_web::router(host.clone(), platform)
        .layer(tower::layer::layer_fn(crate::telemetry::Measured)))
}

/// Serves `host` over HTTP until SIGTERM or SIGINT, then stops as the
/// module says.
pub async fn run_server(host: Host, data: &Path, args: &ServeArgs) -> anyhow::Result<()> {
    let mut terminate = signal(SignalKind::terminate()).context("could not listen for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("could not listen for SIGINT")?;
    if let Some(roots) = &args.oauth_extra_ca {
        let pem = std::fs::read(roots).with_context(|| {
            format!(
                "could not read the extra root certificates {} (--oauth-extra-ca)",
                roots.display()
            )
        })?;
        host.trust_for_client_documents(&pem)
            .with_context(|| format!("--oauth-extra-ca {}", roots.display()))?;
    }
    let budget = crate::http::ConnectionBudget::of_this_process()?;
    tracing::info!(
        "shed serves at most {} connections at once, and {} on the broker's queue",
        budget.http,
        budget.queue
    );
    let queue = crate::command_cli::start_queue(&host, data, args.queue.as_deref(), budget.queue)?;
    let _metrics = match args.telemetry.metrics_listen {
        Some(listen) => Some(crate::telemetry::serve_metrics(listen, args.listen).await?),
        None => None,
    };
    let routes = routes(&host, args)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("could not listen on {} — is another shed running there? pass --listen with a free port", args.listen))?;
    let address = listener
        .local_addr()
        .context("could not read the listening address")?;
    host.record_public_url()
        .await
        .context("could not record the public URL")?;
    tracing::info!(
        "shed is serving {} on http://{address} — MCP at {}{}",
        data.display(),
        host.public_url(),
        shed_mcp::MCP_PATH
    );
    let stopping = async move {
        let name = first_signal(&mut terminate, &mut interrupt).await;
        tracing::info!(
            "shed is stopping ({name}): it accepts nothing new and answers the calls in flight"
        );
        drop(queue);
    };
    let drained = crate::http::serve_at_most(
        listener,
        routes,
        crate::forwarded::TrustedProxies::new(args.trusted_proxies.clone()),
        budget.http,
        stopping,
        args.drain(),
    )
    .await
    .context("the server stopped")?;
    host.close().await.context("could not close the database")?;
    let cut = if drained.whole {
        String::new()
    } else {
        format!(
            " (the connections still open after {} s were closed)",
            args.drain_seconds
        )
    };
    println!(
        "shed stopped: {} connections drained in {:.3} s{cut}; every write is committed and the database closed",
        drained.open,
        drained.took.as_secs_f64()
    );
    Ok(())
}

/// Waits for SIGTERM or SIGINT; the name of the one that came.
async fn first_signal(terminate: &mut Signal, interrupt: &mut Signal) -> &'static str {
    tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    }
}

/// Opens the host a server on `place` serves, at its public URL, else
/// http://localhost:<listen port>.
pub async fn open_server(place: &Place, args: &ServeArgs) -> anyhow::Result<Host> {
    open(place, &args.public_url(place.public_url.as_deref())).await
}

/// `shed serve`.
pub async fn serve(place: &Place, args: &ServeCommandArgs) -> anyhow::Result<()> {
    let host = open_server(place, &args.serving).await?;
    if args.oauth_allow_loopback_documents {
        host.allow_loopback_client_documents()?;
        tracing::warn!(
            "OAuth client metadata documents are fetched from loopback addresses too (--oauth-allow-loopback-documents): for development and tests only"
        );
    }
    run_server(host, &place.data, &args.serving).await
}

/// `shed mcp --as <handle>`.
pub async fn stdio(place: &Place, handle: &str) -> anyhow::Result<()> {
    let host = open_for_cli(place).await?;
    let caller = host.caller_for_handle(handle).await?;
    shed_mcp::serve_stdio(host, caller).await?;
    Ok(())
}
