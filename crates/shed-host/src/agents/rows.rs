//! The protocol's command rows (`shed command list --json`): every command of
//! every app in the person's reach, named `<space>/<app>.<command>` with
//! scope `app`, and the built-in commands beside them. The broker narrows
//! them to a job's scope and stamps `readOnlyGranted`; the rest is here.

use serde::Serialize;
use serde_json::{Map, Value, json};
use shed_manifest::Command;

use super::builtins::{BUILTINS, builtin};
use crate::address::without_scheme;
use crate::registry::LiveApp;
use crate::{Caller, Host, HostError};

/// What running a command does to the person's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// A query act; changes nothing.
    Read,
    /// An apply act, or a built-in that changes the platform.
    Write,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
        }
    }
}

/// One command as the protocol lists it.
#[derive(Clone, Debug)]
pub struct CommandRow {
    /// `demo/runs.log_run`, `graph.query`.
    pub name: String,
    pub effect: Effect,
    /// The row as listed (name, title, description, inputSchema, outputs,
    /// effect, scope, and a built-in's declarations), without the broker's
    /// `readOnlyGranted` stamp.
    pub row: Map<String, Value>,
}

/// `demo/runs.log_run` → (`demo/runs`, `log_run`); `None` for a built-in's
/// name (no `/`) or a name of no such shape.
pub(crate) fn split_app_command(name: &str) -> Option<(&str, &str)> {
    let slash = name.find('/')?;
    let dot = name.get(slash..)?.find('.')? + slash;
    Some((name.get(..dot)?, name.get(dot + 1..)?))
}

impl Host {
    /// Every command the caller's person reaches: the apps' commands, in the
    /// `commands` listing's order, then the built-ins.
    pub async fn agent_commands(&self, caller: &Caller) -> Result<Vec<CommandRow>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let mut rows: Vec<CommandRow> = reach
            .apps(&snapshot)
            .into_iter()
            .flat_map(|app| {
                app.manifest
                    .commands
                    .iter()
                    .map(|command| app_row(app, command))
            })
            .collect();
        rows.extend(BUILTINS.iter().map(|builtin| builtin.row()));
        Ok(rows)
    }

    /// The row of one command the caller's person reaches, if there is one.
    pub async fn agent_command(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<Option<CommandRow>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let Some((app_name, command)) = split_app_command(name) else {
            return Ok(builtin(name).map(|builtin| builtin.row()));
        };
        let app = reach
            .apps(&snapshot)
            .into_iter()
            .find(|app| app.name == app_name)
            .cloned();
        Ok(app.and_then(|app| {
            app.manifest
                .command(command)
                .map(|command| app_row(&app, command))
        }))
    }
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
    let row = json!({
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
    CommandRow {
        name,
        effect,
        row: into_map(row),
    }
}

pub(super) fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_command_name_splits_at_the_first_dot_after_the_app() {
        assert_eq!(
            split_app_command("demo/runs.log_run"),
            Some(("demo/runs", "log_run"))
        );
        assert_eq!(split_app_command("graph.query"), None);
        assert_eq!(split_app_command("demo/runs"), None);
        assert_eq!(split_app_command("a.b/c.d"), Some(("a.b/c", "d")));
    }

    proptest::proptest! {
        #[test]
        fn splitting_any_name_never_panics(name in ".{0,40}") {
            let _ = split_app_command(&name);
        }
    }
}
