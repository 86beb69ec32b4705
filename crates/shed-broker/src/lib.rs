//! shed-broker: the host-command protocol, seen from the host — what
//! `spec/host-commands.md` calls the host's CLI and its broker.
//!
//! - [`Queue`]: the broker's Unix socket (mode 0600), one JSON request and one
//!   JSON answer per connection, held by `shed serve` under an exclusive lock
//!   on the data directory.
//! - [`Broker`]: answers a request for a job. It checks the job (there is one,
//!   it is not ended or expired), narrows the person's commands to the job's
//!   [`Scope`], stamps `readOnlyGranted`, refuses a `--read-only` run the
//!   grant does not cover, fills `x-source` inputs from the job, and runs the
//!   command as the job's agent through shed-host — the door adds no rule of
//!   access but the job's scope.
//! - [`client`]: the CLI's side (`shed command list|run`): std only, no
//!   runtime, so a process starts, asks and exits fast.
//! - [`jobs`]: what `shed job create|end|list` needs beside the host.

mod broker;
pub mod client;
pub mod jobs;
mod outcome;
pub mod protocol;
mod queue;
mod scope;

pub use broker::Broker;
pub use outcome::{Code, Outcome};
pub use queue::{Queue, QueueError};
pub use scope::{BadGlob, Scope};

/// The variable naming the broker's queue (a Unix socket path).
pub const QUEUE_ENV_VAR: &str = "LOOM_PAGE_RPC_QUEUE";
/// The variable carrying the job id of a request.
pub const JOB_ENV_VAR: &str = "LOOM_COMMAND_JOB_ID";
/// The queue's file name in the data directory, by default.
pub const DEFAULT_QUEUE_NAME: &str = "command-queue.sock";
/// The lock file `shed serve` holds in the data directory.
pub const SERVE_LOCK_NAME: &str = "serve.lock";
