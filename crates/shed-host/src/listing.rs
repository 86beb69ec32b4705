//! `commands`: what the apps in the caller's spaces can do, grouped by app
//! under `## space/app`, each command's call shape, description, and the
//! app's title and address; its data, one row per command. Each app's part is
//! rendered once per deploy (see the registry), so a listing is a join. A
//! listing of every app too large for one answer ([`WHOLE_LISTING_BYTES`])
//! lists the apps instead, each with its commands by name, and says how to
//! list one app's.

use std::sync::Arc;

use crate::answer::{Answer, CommandList};
use crate::model_text::ANSWER_TEXT_BYTES;
use crate::registry::LiveApp;
use crate::texts::count;
use crate::{Caller, Host, HostError};

/// The most bytes the text of `commands` without `app` may take listing
/// every command — its lines and its rows as JSON; past it, the listing
/// names the apps instead. The answer's own text bound, so a listing that
/// fits one answer is never cut, and one that does not is never cut in the
/// middle of an app: one app's listing (`commands` with `app`) stays whole.
pub const WHOLE_LISTING_BYTES: usize = ANSWER_TEXT_BYTES;

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
        let with_commands: Vec<&Arc<LiveApp>> =
            apps.iter().filter(|app| !app.commands.is_empty()).collect();
        if app.is_none() && whole_listing_bytes(&with_commands) > WHOLE_LISTING_BYTES {
            let commands: usize = with_commands.iter().map(|app| app.commands.len()).sum();
            return Ok(Answer {
                text: format!(
                    "{} in your spaces offer {} — too many to list in one answer, so here are the apps \
                     with their commands by name; call commands with app (its slug, or space/app) for \
                     one app's commands, whole",
                    count(with_commands.len(), "app", "apps"),
                    count(commands, "command", "commands"),
                ),
                data: CommandList {
                    apps: with_commands.into_iter().cloned().collect(),
                    parts: Vec::new(),
                    every_command: false,
                },
            });
        }
        // At most a listing's bytes of apps: their parts, read for this
        // call where the registry keeps them no longer.
        let parts = self.parts_of(&with_commands).await?;
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
                let listings: Vec<&str> = parts.iter().map(|part| part.listing.as_str()).collect();
                listings.join("\n\n")
            }
        };
        let apps = with_commands.into_iter().cloned().collect();
        Ok(Answer {
            text,
            data: CommandList {
                apps,
                parts,
                every_command: true,
            },
        })
    }
}

/// The bytes of the text listing every command of `apps`: their parts,
/// a blank line between two, then `{"commands":[…]}`.
fn whole_listing_bytes(apps: &[&Arc<LiveApp>]) -> usize {
    apps.iter().map(|app| app.listing_bytes).sum::<usize>() + r#"{"commands":[]}"#.len()
}
