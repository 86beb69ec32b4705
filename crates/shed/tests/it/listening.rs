//! Starting a `shed` server under test: a free loopback port to give it, and
//! a bounded wait until it listens there.

use std::net::{TcpListener, TcpStream};
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
