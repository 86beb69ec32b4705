//! `commands`: what the apps in the caller's spaces can do, grouped by app
//! under `## space/app`, each command's call shape, description, and the
//! app's title and address; its data, one row per command. Each app's part is
//! rendered once per deploy (see the registry), so a listing is a join.

use std::sync::Arc;

use crate::answer::{Answer, CommandList};
use crate::registry::LiveApp;
use crate::{Caller, Host, HostError};

impl Host {
    /// The commands of every app in reach, or of the one app `app` names (a
    /// slug, or `space/app` where two spaces spell one).
    pub async fn commands(
        &self,
        caller: &Caller,
        app: Option<&str>,
    ) -> Result<Answer<CommandList>, HostError> {
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
        let apps = with_commands.into_iter().cloned().collect();
        Ok(Answer {
            text,
            data: CommandList { apps },
        })
    }
}
