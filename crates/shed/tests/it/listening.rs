//! Starting a `shed` server under test: a free loopback port to give it, a
//! bounded wait until it listens there, `shed up` started that way with
//! the token it prints, and a limit of open files it cannot raise.

use crate::data_place::DataIn;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to start listening (it deploys the example
/// and opens its database first).
const START_BOUND: Duration = Duration::from_secs(30);

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
