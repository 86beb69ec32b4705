//! Slow and idle clients, black-box: the real `shed up` under a low limit of
//! open files, held by sockets that send half a request head and wait, must
//! still answer a whole request, and must close the half-sent and the idle
//! kept-alive connections by itself. Loopback only; every wait is bounded.

use crate::data_place::DataIn;
use crate::listening::{free_port, under_file_limit, wait_until_listening};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SHED: &str = env!("CARGO_BIN_EXE_shed");
/// The open-file limit the server runs under (soft and hard).
const FILE_LIMIT: libc::rlim_t = 256;
/// Half-open sockets: more than the server could hold with every file it may open.
const SLOW_CLIENTS: usize = 300;
/// A request head that never ends.
const HALF_HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\n";
/// How long a whole request may take to be answered while the slow clients
/// hold on: several of the server's head timeouts (5 s), since the slow ones
/// queued before it are let in a batch at a time; without the timeout it
/// never is.
const ANSWER_BOUND: Duration = Duration::from_secs(60);
/// How long a connection left waiting may stay open.
const CLOSE_BOUND: Duration = Duration::from_secs(60);

/// `shed up` on a new data folder, killed when dropped.
struct Shed {
    child: Child,
    port: u16,
    _data: tempfile::TempDir,
}

impl Drop for Shed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Shed {
    /// Starts `shed up` allowed at most [`FILE_LIMIT`] open files.
    fn start() -> Shed {
        let data = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new(SHED);
        command
            .args([
                "up",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--public-url",
                &format!("http://localhost:{port}"),
            ])
            .data_in(data.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null());
        let child = under_file_limit(&mut command, FILE_LIMIT).spawn().unwrap();
        wait_until_listening(port);
        Shed {
            child,
            port,
            _data: data,
        }
    }

    fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).unwrap()
    }
}

/// Reads `stream` until the server closes it, at most until `deadline`:
/// what it sent, and whether it closed.
fn read_until_closed(stream: &mut TcpStream, deadline: Instant) -> (Vec<u8>, bool) {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (received, false);
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buffer) {
            Ok(0) => return (received, true),
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return (received, true),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (received, false);
            }
            Err(e) => panic!("reading from shed failed: {e}"),
        }
    }
}

#[test]
fn half_sent_heads_neither_starve_a_whole_request_nor_stay_open() {
    let shed = Shed::start();
    let mut slow: Vec<TcpStream> = (0..SLOW_CLIENTS)
        .map(|_| {
            let mut stream = shed.connect();
            stream.write_all(HALF_HEAD).unwrap();
            stream
        })
        .collect();

    let started = Instant::now();
    let mut whole = shed.connect();
    whole
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (answer, closed) = read_until_closed(&mut whole, started + ANSWER_BOUND);
    assert!(
        answer.starts_with(b"HTTP/1.1 ") && closed,
        "a whole request behind {SLOW_CLIENTS} half-sent ones was not answered within {ANSWER_BOUND:?} (got {:?})",
        String::from_utf8_lossy(&answer)
    );

    let deadline = Instant::now() + CLOSE_BOUND;
    let still_open = slow
        .iter_mut()
        .map(|stream| read_until_closed(stream, deadline).1)
        .filter(|closed| !closed)
        .count();
    assert_eq!(
        still_open, 0,
        "half-sent requests still open {CLOSE_BOUND:?} after a whole one was answered"
    );
}

#[test]
fn an_idle_kept_alive_connection_is_closed() {
    let shed = Shed::start();
    let mut stream = shed.connect();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (answer, closed) = read_until_closed(&mut stream, Instant::now() + CLOSE_BOUND);
    assert!(
        answer.starts_with(b"HTTP/1.1 "),
        "no answer to a whole request: {:?}",
        String::from_utf8_lossy(&answer)
    );
    assert!(
        closed,
        "a kept-alive connection left idle was still open after {CLOSE_BOUND:?}"
    );
}
