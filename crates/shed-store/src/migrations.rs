//! What both backends' migrations share: the one line they log. A new
//! database says it was made, at which schema version; an older one says
//! from which version to which it was brought; each migration is a line at
//! debug.

/// Logs, once a database's pending migrations are applied, what they did:
/// `from` the schema version it was at, `to` the one it is at now.
pub(crate) fn log_applied(from: usize, to: usize) {
    match from {
        _ if from == to => {}
        0 => tracing::info!("made the store at schema version {to}"),
        _ => tracing::info!(
            "brought the store from schema version {from} to {to} ({} migrations)",
            to - from
        ),
    }
}
