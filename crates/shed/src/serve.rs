//! `shed serve` and `shed mcp`: open the host on a data folder and run its
//! doors — the HTTP server (the MCP door at /mcp, the web door, the health
//! routes) or MCP on stdio as one person.
//!
//! A server stops on SIGTERM or SIGINT: it stops accepting (HTTP and the
//! broker's queue), ends the streams no call waits on, lets the calls in
//! flight finish for at most `--drain-seconds` (a second signal cuts them at
//! once), commits every write made and closes the database, logs what it
//! waited for, and exits 0.

use std::path::{Path, PathBuf};

use anyhow::Context;
use shed_host::{Host, HostConfig};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::http::{Drained, Ended, Stop};
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
pub(crate) fn terminal_flags(place: &Place) -> String {
    let from_env = std::env::var_os("SHED_DATA").is_some_and(|data| place.data == data);
    if place.data == std::path::Path::new(DEFAULT_DATA) || from_env {
        return String::new();
    }
    format!(
        "--data {}",
        shed_host::shell_word(&place.data.to_string_lossy())
    )
}

/// The data folder `--data` defaults to.
pub const DEFAULT_DATA: &str = "shed-data";

/// Opens the host on `place` for a CLI command, at its public URL when
/// given, else at the address the last server on the data recorded, so the
/// links it prints point where the server is. A data folder that is not
/// there is refused with the host's sentence (how to make one), and none
/// is made.
pub async fn open_for_cli(place: &Place) -> anyhow::Result<Host> {
    refuse_a_file(place)?;
    let opened = Host::open_at_served_url(
        &place.data,
        place.database.as_deref(),
        place.public_url.as_deref(),
    )
    .await;
    match opened {
        Err(missing @ shed_host::HostError::NotFound(_)) => Err(missing.into()),
        opened => Ok(said_where(place, opened)?.at_terminal(&terminal_flags(place))),
    }
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
/// theirs here; the platform's host answers the MCP door, the health routes
/// and what the `operator` publishes.
pub fn routes(
    host: &Host,
    listen: std::net::SocketAddr,
    operator: shed_web::Operator,
) -> anyhow::Result<axum::Router> {
    let platform =
        shed_mcp::router(host.clone(), listen)?.merge(crate::health::routes(host.clone()));
    Ok(shed_web::router(host.clone(), platform, operator)
        .layer(tower::layer::layer_fn(crate::telemetry::Measured)))
}

/// How many connections the kernel holds for the server before it accepts
/// them: tokio's own `TcpListener::bind` figure, which the server listened
/// with before it bound its port apart from listening.
const LISTEN_BACKLOG: u32 = 1024;

/// Takes the port `args` say — first, before a server sets anything up, so
/// a port already taken changes nothing: it is refused with a sentence
/// naming it and the flag that picks another. The socket is bound, not yet
/// listening: [`run_server`] listens once it serves, so a client that
/// connects is served. Taking every address with no public URL given says
/// the links will name localhost, and how to set the address others reach.
pub fn bind(args: &ServeArgs, public_url: Option<&str>) -> anyhow::Result<tokio::net::TcpSocket> {
    let at = args.listen();
    let bound = (|| {
        let socket = match at {
            std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        socket.bind(at)?;
        Ok::<_, std::io::Error>(socket)
    })();
    let socket = match bound {
        Ok(socket) => socket,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "port {port} on {ip} is taken: another program (another shed?) listens there — choose another port with --port {free} (or --listen {ip}:{free}); nothing was changed",
            port = at.port(),
            ip = at.ip(),
            free = free_port(at).map_or("PORT".to_string(), |port| port.to_string()),
        ),
        Err(e) => anyhow::bail!(
            "could not listen on {at}: {e} — choose another address with --listen or --port; nothing was changed"
        ),
    };
    if at.ip().is_unspecified() && public_url.is_none() {
        tracing::warn!(
            "shed listens on every address ({at}), but the links it prints and serves use http://localhost:{port}, which only this machine reaches — pass --public-url http://<this machine's name>:{port} (or set SHED_PUBLIC_URL) to the address others reach it at",
            port = at.port()
        );
    }
    Ok(socket)
}

/// A port free on `at`'s address now, to suggest in place of a taken one.
fn free_port(at: std::net::SocketAddr) -> Option<u16> {
    std::net::TcpListener::bind((at.ip(), 0))
        .and_then(|free| free.local_addr())
        .map(|free| free.port())
        .ok()
}

/// Serves `host` over HTTP on `socket` (see [`bind`]), with what the
/// `operator` publishes, until SIGTERM or SIGINT, then stops as the module
/// says.
pub async fn run_server(
    host: Host,
    data: &Path,
    args: &ServeArgs,
    socket: tokio::net::TcpSocket,
    operator: shed_web::Operator,
) -> anyhow::Result<()> {
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
    let address = socket
        .local_addr()
        .context("could not read the listening address")?;
    let _metrics = match args.telemetry.metrics_listen {
        Some(listen) => Some(crate::telemetry::serve_metrics(listen, address).await?),
        None => None,
    };
    let routes = routes(&host, address, operator)?;
    let listener = socket
        .listen(LISTEN_BACKLOG)
        .with_context(|| format!("could not listen on {address}"))?;
    host.record_public_url()
        .await
        .context("could not record the public URL")?;
    tracing::info!(
        "shed is serving {} on http://{address} — MCP at {}{}",
        data.display(),
        host.public_url(),
        shed_mcp::MCP_PATH
    );
    let proxies = crate::forwarded::TrustedProxies::new(
        args.trusted_proxies.clone(),
        args.trusted_proxy_header,
    );
    if let Some(believed) = proxies.believed() {
        tracing::info!("{believed}");
    }
    let (stop, stops) = tokio::sync::watch::channel(Stop::Serving);
    let drain_seconds = args.drain_seconds;
    tokio::spawn(async move {
        let name = first_signal(&mut terminate, &mut interrupt).await;
        tracing::info!(
            "shed is stopping ({name}): it accepts nothing new, closes the streams no call waits on, and answers the calls in flight for at most {drain_seconds} s; Ctrl-C again (SIGINT or SIGTERM) stops it at once"
        );
        drop(queue);
        stop.send_replace(Stop::Draining);
        let name = first_signal(&mut terminate, &mut interrupt).await;
        tracing::info!(
            "shed is stopping at once ({name} again): the calls still in flight are cut"
        );
        stop.send_replace(Stop::Now);
    });
    let drained =
        crate::http::serve_at_most(listener, routes, proxies, budget.http, stops, args.drain())
            .await
            .context("the server stopped")?;
    host.close().await.context("could not close the database")?;
    tracing::info!(
        "shed stopped: {}; every write is committed and the database closed",
        what_it_waited_for(&drained, drain_seconds)
    );
    Ok(())
}

/// What a stop waited for, said in a few words: `no calls in flight`,
/// `waited 0.4 s for 2 calls in flight`, and what it cut and why.
fn what_it_waited_for(drained: &Drained, drain_seconds: u64) -> String {
    let calls = |n: usize| match n {
        1 => "1 call".to_string(),
        n => format!("{n} calls"),
    };
    let waited = match drained.calls {
        0 => "no calls in flight".to_string(),
        n => format!(
            "waited {:.1} s for {} in flight",
            drained.took.as_secs_f64(),
            calls(n)
        ),
    };
    match (drained.ended, drained.cut) {
        (Ended::Answered, _) | (_, 0) => waited,
        (Ended::Bound, cut) => format!(
            "{waited}, and cut the {} still running after {drain_seconds} s (--drain-seconds)",
            calls(cut)
        ),
        (Ended::AskedAgain, cut) => format!(
            "{waited}, and cut the {} still running when asked again",
            calls(cut)
        ),
    }
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

/// Refuses a data folder that is a file, before anything is bound,
/// printed or made: the sentence names it and what to give instead.
pub fn refuse_a_file(place: &Place) -> anyhow::Result<()> {
    if std::fs::metadata(&place.data).is_ok_and(|meta| !meta.is_dir()) {
        anyhow::bail!(
            "{} is a file, not a folder — give --data (or SHED_DATA) a folder: `shed up` makes it when missing; nothing was changed",
            place.data.display()
        );
    }
    Ok(())
}

/// Refuses, before anything is bound or printed, to start a server on a
/// data folder another process serves — the one holding its
/// `serve.lock` —, naming the address it serves at and its process: its
/// one sentence alone on stderr, exit 1.
pub async fn refuse_if_served(place: &Place) {
    let Some(process) = serving_process(&place.data) else {
        return;
    };
    let url = match Host::open_at_served_url(&place.data, place.database.as_deref(), None).await {
        Ok(host) => host.public_url().to_string(),
        Err(_) => "its address".to_string(),
    };
    let process = if process.is_empty() {
        String::new()
    } else {
        format!(" (process {process})")
    };
    eprintln!(
        "shed already serves {} at {url}{process} — use that one, or stop it first",
        place.data.display()
    );
    std::process::exit(1);
}

/// The id a server holding `<data>/serve.lock` wrote in it (empty when it
/// wrote none yet), or `None` when no process holds it. The lock is tried
/// and let go at once; the server that starts takes it for good.
fn serving_process(data: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(data.join(shed_broker::SERVE_LOCK_NAME)).ok()?;
    match file.try_lock_shared() {
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            Some(holder.trim().to_string())
        }
        Ok(()) | Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// `shed serve`.
pub async fn serve(place: &Place, args: &ServeCommandArgs) -> anyhow::Result<()> {
    refuse_a_file(place)?;
    refuse_if_served(place).await;
    let operator = args.serving.operator()?;
    let socket = bind(&args.serving, place.public_url.as_deref())?;
    let host = open_server(place, &args.serving).await?;
    if args.oauth_allow_loopback_documents {
        host.allow_loopback_client_documents()?;
        tracing::warn!(
            "OAuth client metadata documents are fetched from loopback addresses too (--oauth-allow-loopback-documents): for development and tests only"
        );
    }
    run_server(host, &place.data, &args.serving, socket, operator).await
}

/// `shed mcp --as <handle>`.
pub async fn stdio(place: &Place, handle: &str) -> anyhow::Result<()> {
    let host = open_for_cli(place).await?;
    let caller = host.caller_for_handle(handle).await?;
    shed_mcp::serve_stdio(host, caller).await?;
    Ok(())
}
