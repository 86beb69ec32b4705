//! The protocol's command rows (`shed command list --json`): every command of
//! every app in the person's reach, named `<space>/<app>.<command>` with
//! scope `app`, and the built-in commands beside them, each with the label
//! (`ifc`) of its title and description. A job's listing (`job_calls`)
//! narrows them to its scope and stamps `readOnlyGranted`.

use serde_json::{Value, json};
use shed_manifest::Command;

use super::builtins::Builtin;
use super::command::{CommandRow, Effect, into_map};
use super::label::Label;
use crate::address::without_scheme;
use crate::reach::Reach;
use crate::registry::{LiveApp, Snapshot};
use crate::{Caller, Host, HostError};

impl Host {
    /// Every command the caller's person reaches: the apps' commands, in the
    /// `commands` listing's order, then the built-ins; each app's rows
    /// labelled as the caller reads what its deployer wrote, a built-in's as
    /// the platform's own (public, trusted).
    pub(super) async fn agent_commands(
        &self,
        caller: &Caller,
    ) -> Result<Vec<CommandRow>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let apps = reach.apps(&snapshot);
        let parts = self.parts_of(&apps).await?;
        let mut rows: Vec<CommandRow> = apps
            .into_iter()
            .zip(&parts)
            .flat_map(|(app, parts)| {
                let label = Label::of_listing(app, caller);
                parts
                    .manifest
                    .commands
                    .iter()
                    .map(move |command| labelled(app_row(app, command), &label))
            })
            .collect();
        let platform = Label::public();
        rows.extend(Builtin::ALL.map(|builtin| labelled(builtin.row(), &platform)));
        Ok(rows)
    }
}

/// The row of `app_name`'s command `command` (`demo/runs`, `log_run`), if
/// the app is in reach and has one; the trash's sentence when the app is in
/// the trash.
pub(super) async fn app_command_row(
    host: &Host,
    reach: &Reach,
    snapshot: &Snapshot,
    (app_name, command): (&str, &str),
) -> Result<Option<CommandRow>, HostError> {
    let Some(app) = reach
        .apps_and_trashed(snapshot)
        .into_iter()
        .find(|app| app.name == app_name)
    else {
        return Ok(None);
    };
    reach.reachable(app)?;
    if !app.offers(command) {
        return Ok(None);
    }
    Ok(host
        .parts(app)
        .await?
        .manifest
        .command(command)
        .map(|command| app_row(app, command)))
}

/// The row with its label as `ifc`.
fn labelled(mut row: CommandRow, label: &Label) -> CommandRow {
    if let Ok(ifc) = serde_json::to_value(label) {
        row.row.insert("ifc".into(), ifc);
    }
    row
}

/// An app command's row.
fn app_row(app: &LiveApp, command: &Command) -> CommandRow {
    let name = format!("{}.{}", app.name, command.name);
    let effect = if command.read_only() {
        Effect::Read
    } else {
        Effect::Write
    };
    let outputs = match effect {
        Effect::Read => json!({
            "rows": { "type": "array", "description": "the rows the command's filter line matched" },
            "next": { "type": "string", "description": "the cursor of the next page, where there is one" },
        }),
        Effect::Write => json!({
            "entities": { "type": "array", "description": "the eids written, in the bundles' order" },
            "aliases": { "type": "object", "description": "each $name the command minted, with its eid" },
            "version": { "type": "integer", "description": "the app's data version after the write" },
        }),
    };
    let mut row = json!({
        "name": name,
        "title": format!("{} — {}", command.name, app.title),
        "description": format!(
            "{} — {}, an app at {}",
            command.description,
            app.title,
            without_scheme(&app.address)
        ),
        "inputSchema": command.input_schema(),
        "outputs": outputs,
        "effect": effect.as_str(),
        "scope": "app",
    });
    if let (true, Some(fields)) = (command.confirm, row.as_object_mut()) {
        fields.insert("confirm".into(), Value::Bool(true));
    }
    CommandRow {
        name,
        effect,
        job_person: &[],
        row: into_map(row),
    }
}
