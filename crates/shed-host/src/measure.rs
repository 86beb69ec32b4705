//! What a command run leaves for the operator: a `command run` span (the app
//! and the command's name as attributes — never an argument's value) and the
//! count of command calls by app and outcome. Both cost nothing unless
//! `shed serve` installed a metrics recorder or a trace exporter.

use std::future::Future;

use tracing::Instrument;

use crate::HostError;

/// The counter of command calls, by `app` and `outcome`.
const COMMAND_CALLS: &str = "shed_command_calls_total";

/// The outcome label of a call: `ok`, or the kind of refusal.
fn outcome<T>(answered: &Result<T, HostError>) -> &'static str {
    match answered {
        Ok(_) => "ok",
        Err(HostError::SignIn(_)) => "sign_in",
        Err(HostError::Refused(_)) => "refused",
        Err(HostError::BadInput(_)) => "bad_input",
        Err(HostError::NotFound(_)) => "not_found",
        Err(HostError::Conflict(_) | HostError::ChangedSince(_)) => "conflict",
        Err(HostError::Busy(_)) => "busy",
        Err(HostError::Internal(_)) => "internal",
        Err(HostError::Waiting(_)) => "waiting",
    }
}

/// Runs one command of `app` inside its span, and counts it.
pub(crate) async fn command_run<T>(
    app: &str,
    command: &str,
    run: impl Future<Output = Result<T, HostError>>,
) -> Result<T, HostError> {
    let span = tracing::debug_span!("command run", app, command);
    let answered = run.instrument(span).await;
    metrics::counter!(COMMAND_CALLS, "app" => app.to_string(), "outcome" => outcome(&answered))
        .increment(1);
    answered
}
