//! The run's record on disk: the `--transcript` file the `run` and `tool`
//! subcommands write when they end, and `mcp` rewrites after every call.

use std::path::Path;

use serde_json::Value;

/// Writes the run's record to `path` (nothing when `None`); returns the exit
/// code: 1 when it could not be written, 0 otherwise.
pub fn write(path: Option<&Path>, record: Value) -> i32 {
    let Some(path) = path else {
        return 0;
    };
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    match std::fs::write(path, text) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write the transcript {}: {e}", path.display());
            1
        }
    }
}
