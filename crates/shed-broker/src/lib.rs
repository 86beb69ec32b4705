//! shed-broker: the host-command protocol, seen from the host — what
//! `spec/host-commands.md` calls the host's CLI and its broker.
//!
//! - [`Queue`]: the broker's Unix socket (mode 0600), one JSON request and one
//!   JSON answer per connection, held by `shed serve` under an exclusive lock
//!   on the data directory.
//! - [`Broker`]: answers a request for a job by one call to shed-host
//!   (`Host::job_commands`, `Host::job_run`), which decides everything — the
//!   job, its scope and read-only grant, the inputs filled from the job, and
//!   the person's access — and turns the typed answer into the wire's JSON
//!   and its [`Code`] words ([`Outcome`]). The door adds no rule of its own.
//! - [`client`]: the CLI's side (`shed command list|run`): std only, no
//!   runtime, so a process starts, asks and exits fast.
//! - [`jobs`]: what `shed job create|end|list` needs beside the host.

mod broker;
pub mod client;
pub mod jobs;
mod outcome;
pub mod protocol;
mod queue;

pub use broker::Broker;
pub use outcome::{Answered, Code, Outcome};
pub use queue::{Queue, QueueError, REQUEST_TIMEOUT};

/// The variable naming the broker's queue (a Unix socket path).
pub const QUEUE_ENV_VAR: &str = "LOOM_PAGE_RPC_QUEUE";
/// The variable carrying the job id of a request.
pub const JOB_ENV_VAR: &str = "LOOM_COMMAND_JOB_ID";
/// The queue's file name in the data directory, by default.
pub const DEFAULT_QUEUE_NAME: &str = "command-queue.sock";
/// The lock file `shed serve` holds in the data directory.
pub const SERVE_LOCK_NAME: &str = "serve.lock";
