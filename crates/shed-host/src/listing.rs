//! `commands`: what the apps in the caller's spaces can do, grouped by app
//! under `## space/app`, each command's call shape, description, and the
//! app's title and address; its data, one row per command. Each app's part is
//! rendered once per deploy (see the registry), so a listing is a join.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::registry::LiveApp;
use crate::{Answer, Caller, Host, HostError};

impl Host {
    /// The commands of every app in reach, or of the one app `app` names (a
    /// slug, or `space/app` where two spaces spell one).
    pub async fn commands(&self, caller: &Caller, app: Option<&str>) -> Result<Answer, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let apps: Vec<Arc<LiveApp>> = match app {
            Some(name) => vec![reach.resolve(&snapshot, name)?],
            None => reach.apps(&snapshot).into_iter().cloned().collect(),
        };
        let with_commands: Vec<&Arc<LiveApp>> = apps
            .iter()
            .filter(|app| !app.manifest.commands.is_empty())
            .collect();
        let text = match (app, with_commands.is_empty()) {
            (Some(_), true) => apps.first().map_or_else(String::new, |app| {
                format!(
                    "## {name}\n{name} offers no commands — a tools.json or a kind in its vocab.json gives it some",
                    name = app.name
                )
            }),
            (None, true) => "the apps in your spaces offer no commands yet — app_deploy puts an app in a \
                             space you edit, and every kind its vocab.json declares is two commands"
                .to_string(),
            (_, false) => {
                let parts: Vec<&str> = with_commands.iter().map(|app| app.listing.as_str()).collect();
                parts.join("\n\n")
            }
        };
        // Each app's rows were built at its deploy; a call copies them into
        // one array sized at once. The copy is the answer's whole cost: the
        // door hands MCP an owned JSON value.
        let mut rows = Vec::with_capacity(with_commands.iter().map(|app| app.rows.len()).sum());
        for app in &with_commands {
            rows.extend(app.rows.iter().cloned());
        }
        // Moved in, not through `json!`, which would serialize the rows into
        // a second copy.
        let mut data = Map::with_capacity(1);
        data.insert("commands".into(), Value::Array(rows));
        Ok(Answer {
            text,
            data: Value::Object(data),
        })
    }
}
