//! Starting a `shed` server under test: a free port to give it, a
//! bounded wait until it listens there, `shed up` started that way with
//! the token it prints, and a limit of open files it cannot raise.

use crate::data_place::DataIn;
use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server may take to start listening (it deploys the example
/// and opens its database first).
const START_BOUND: Duration = Duration::from_secs(30);

/// A port nobody listens on now, on any address, and one this process has
/// not handed out before.
///
/// It is chosen below the range the kernel gives outgoing connections:
/// a port from that range can be taken by a client socket (one of the many
/// connections to PostgreSQL the tests make, say) between this check and
/// the server's bind, and the server then cannot listen.
pub fn free_port() -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let below = first_outgoing_port().max(LOWEST_PORT + 1_000);
    let mut handed_out = HANDED_OUT.lock().unwrap();
    loop {
        let random = RandomState::new().build_hasher().finish();
        let port = LOWEST_PORT + (random % u64::from(below - LOWEST_PORT)) as u16;
        if !handed_out.contains(&port) && TcpListener::bind(("0.0.0.0", port)).is_ok() {
            handed_out.insert(port);
            return port;
        }
    }
}

/// The lowest port [`free_port`] gives: above the well-known and the
/// commonly configured ones.
const LOWEST_PORT: u16 = 10_000;

/// The first port of the kernel's range for outgoing connections
/// (`ip_local_port_range`), or Linux's default when it cannot be read.
fn first_outgoing_port() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// Starts `command` allowed at most `files` open files, soft and hard, so
/// the server cannot raise the limit itself.
pub fn under_file_limit(command: &mut Command, files: libc::rlim_t) -> &mut Command {
    // SAFETY: setrlimit is async-signal-safe, and the closure touches
    // nothing else between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: files,
                rlim_max: files,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
    }
}

/// Waits until something listens on `port`, at most [`START_BOUND`].
pub fn wait_until_listening(port: u16) {
    let deadline = Instant::now() + START_BOUND;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "shed did not start listening on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `shed up` on `data` at a free loopback port with `extra` flags and
/// `envs`, waits until it listens, and reads the token it prints: the
/// child, its port and the token.
pub fn shed_up(data: &Path, extra: &[&str], envs: &[(&str, &str)]) -> (Child, u16, String) {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shed"))
        .args(["up", "--listen", &format!("127.0.0.1:{port}")])
        .args(extra)
        .data_in(data)
        .env("RUST_LOG", "warn")
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let token = lines
        .find_map(|line| line.strip_prefix("Token:").map(|t| t.trim().to_string()))
        .expect("shed up prints a token");
    // Keep reading what it prints, so it never writes into a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    wait_until_listening(port);
    (child, port, token)
}
