//! The run's record on disk: the `--transcript` file the `run` and `tool`
//! subcommands write when they end, and `mcp` rewrites after every call. It
//! holds what the run read — private rows among it — so a file the harness
//! makes, the transcript or the policy trace, is its owner's alone.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::Value;

/// The mode of a file the harness makes (`--transcript`, `--policy-trace`):
/// read and written by its owner alone. A file already there keeps its own.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Writes the run's record to `path` (nothing when `None`); returns the exit
/// code: 1 when it could not be written, 0 otherwise.
pub fn write(path: Option<&Path>, record: Value) -> i32 {
    let Some(path) = path else {
        return 0;
    };
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(PRIVATE_FILE_MODE)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write the transcript {}: {e}", path.display());
            1
        }
    }
}
