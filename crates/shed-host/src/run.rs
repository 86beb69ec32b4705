//! `command`: find a command by its name (and the app, where two in reach
//! spell it), fill its template from the call's arguments, and run it through
//! the app's ordinary doors as the person calling — the app's access decides,
//! and the write is recorded as theirs.

use std::sync::Arc;

use serde_json::Value;

use crate::act::AppAct;
use crate::answer::{Acted, Answer};
use crate::names::and_list;
use crate::reach::Reach;
use crate::registry::{LiveApp, Snapshot};
use crate::texts::bounded_list;
use crate::{Caller, Host, HostError};

impl Host {
    /// Runs the command `name` with `args` (an object of its arguments), in the
    /// app `app` names or the one app in reach that has it.
    pub async fn command(
        &self,
        caller: &Caller,
        name: &str,
        args: Value,
        app: Option<&str>,
    ) -> Result<Answer<Acted>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let app = find(&reach, &snapshot, name, app)?;
        let parts = self.parts(&app).await?;
        crate::measure::command_run(&app.name, name, async {
            let Some(command) = parts.manifest.command(name) else {
                return Err(HostError::Internal(format!(
                    "{} lost its command {name}",
                    app.name
                )));
            };
            let standing = reach.standing(&app.space);
            let acted = self
                .act_on_app(
                    caller,
                    None,
                    &app,
                    standing,
                    AppAct::Command { command, args },
                    None,
                )
                .await?;
            Ok(Answer {
                text: acted.sentence(&app.name, Some(&command.name)),
                data: acted,
            })
        })
        .await
    }
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
        if app.offers(name) {
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
        .filter(|app| app.offers(name))
        .collect();
    match having.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            // A command of an app in the trash is refused with its sentence.
            let trashed = reach
                .apps_and_trashed(snapshot)
                .into_iter()
                .find(|app| app.trashed.is_some() && app.offers(name));
            match trashed {
                Some(app) => reach.reachable(app).map(|()| app.clone()),
                None => Err(HostError::NotFound(no_command(name, &in_reach))),
            }
        }
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
    if app.commands.is_empty() {
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
        .filter(|app| !app.commands.is_empty())
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
