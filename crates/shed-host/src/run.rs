//! `command`: find a command by its name (and the app, where two in reach
//! spell it), fill its template from the call's arguments, and run it through
//! the app's ordinary doors as the person calling — the app's access decides,
//! and the write is recorded as theirs.

use std::sync::Arc;

use serde_json::Value;
use shed_manifest::{Command, Filled};

use crate::access::{Act, Standing, may};
use crate::names::and_list;
use crate::reach::Reach;
use crate::registry::{LiveApp, Snapshot};
use crate::texts::{bounded_list, count, wrote};
use crate::{Answer, Caller, Host, HostError};

impl Host {
    /// Runs the command `name` with `args` (an object of its arguments), in the
    /// app `app` names or the one app in reach that has it.
    pub async fn command(
        &self,
        caller: &Caller,
        name: &str,
        args: Value,
        app: Option<&str>,
    ) -> Result<Answer, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let app = find(&reach, &snapshot, name, app)?;
        crate::measure::command_run(&app.name, name, async {
            let Some(command) = app.manifest.command(name) else {
                return Err(HostError::Internal(format!(
                    "{} lost its command {name}",
                    app.name
                )));
            };
            let filled = decide_and_fill(&reach, &app, command, args)?;
            self.run_filled(caller, &app, command, filled, None).await
        })
        .await
    }

    /// Runs a filled template on `app` as the caller; `expect: Some(n)`
    /// refuses a write unless the app's data version is `n` (the broker's
    /// `--expect`).
    pub(crate) async fn run_filled(
        &self,
        caller: &Caller,
        app: &LiveApp,
        command: &Command,
        filled: Filled,
        expect: Option<u64>,
    ) -> Result<Answer, HostError> {
        let store = &self.inner.store;
        match filled {
            Filled::Apply(body) => {
                let actor = caller.actor().ok_or_else(crate::access::sign_in_first)?;
                let applied = store.apply(&app.name, &actor, body, expect).await?;
                let (how_many, ids) = wrote(&applied);
                let text = format!("{}: wrote {how_many} in {}{ids}", command.name, app.name);
                Ok(Answer {
                    text,
                    data: serde_json::to_value(&applied).map_err(internal)?,
                })
            }
            Filled::Query(line) => {
                let listing = store.query(&app.name, &line).await?;
                let text = format!(
                    "{}: {} in {}",
                    command.name,
                    count(listing.rows.len(), "row", "rows"),
                    app.name
                );
                Ok(Answer {
                    text,
                    data: listing.into(),
                })
            }
        }
    }
}

/// The app's access decides for the caller's standing (a read for a query
/// act, a write for an apply act); then `args` fills its template (the
/// manifest reads them, and refuses anything but an object or nothing).
pub(crate) fn decide_and_fill(
    reach: &Reach,
    app: &LiveApp,
    command: &Command,
    args: Value,
) -> Result<Filled, HostError> {
    let act = if command.read_only() {
        Act::Read
    } else {
        Act::Write
    };
    may(
        app.subject(),
        Standing::of(true, reach.role(&app.space)),
        act,
    )?;
    command
        .fill(&args)
        .map_err(|errors| HostError::BadInput(errors.to_string()))
}

fn internal(e: serde_json::Error) -> HostError {
    HostError::Internal(e.to_string())
}

/// The one app in reach whose command `name` a call means, or the sentence
/// saying why there is none.
fn find(
    reach: &Reach,
    snapshot: &Snapshot,
    name: &str,
    app: Option<&str>,
) -> Result<Arc<LiveApp>, HostError> {
    if let Some(app_name) = app {
        let app = reach.resolve(snapshot, app_name)?;
        if app.manifest.command(name).is_some() {
            return Ok(app);
        }
        return Err(HostError::NotFound(format!(
            "no command {name} in {} — {}. commands lists them with their arguments.",
            app.name,
            offers_of_one(&app)
        )));
    }
    let in_reach = reach.apps(snapshot);
    let having: Vec<&Arc<LiveApp>> = in_reach
        .iter()
        .copied()
        .filter(|app| app.manifest.command(name).is_some())
        .collect();
    match having.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(HostError::NotFound(no_command(name, &in_reach))),
        many => {
            let mut names: Vec<String> = many.iter().map(|app| app.name.clone()).collect();
            names.sort();
            Err(HostError::BadInput(format!(
                "{name} is a command of {} — say which app",
                and_list(&names)
            )))
        }
    }
}

fn offers_of_one(app: &LiveApp) -> String {
    if app.manifest.commands.is_empty() {
        "it offers no commands".to_string()
    } else {
        format!("it offers {}", bounded_list(&app.command_names()))
    }
}

/// "no command add_run — the apps here offer jeff/runs: log_run, leaderboard,
/// since. commands lists them with their arguments."
fn no_command(name: &str, in_reach: &[&Arc<LiveApp>]) -> String {
    let offering: Vec<String> = in_reach
        .iter()
        .filter(|app| !app.manifest.commands.is_empty())
        .map(|app| format!("{}: {}", app.name, bounded_list(&app.command_names())))
        .collect();
    if offering.is_empty() {
        return format!(
            "no command {name} — the apps in your spaces offer no commands yet; app_deploy puts an app in a space you edit"
        );
    }
    let shown = if offering.len() > 8 {
        format!(
            "{}; and {} more apps",
            offering[..8].join("; "),
            offering.len() - 8
        )
    } else {
        offering.join("; ")
    };
    format!(
        "no command {name} — the apps here offer {shown}. commands lists them with their arguments."
    )
}
