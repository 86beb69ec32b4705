//! `spaces`: the caller's spaces, their role in each, and each space's apps
//! (title, access, address, version). Its first line counts them, so a text
//! bounded to its first line and its first apps still says what is there.

use crate::answer::{Answer, SpaceApp, SpaceEntry, SpaceList};
use crate::texts::{NO_APPS_YET, bounded_list, count};
use crate::{Caller, Host, HostError};

impl Host {
    /// The caller's spaces with their role and apps.
    pub async fn spaces(&self, caller: &Caller) -> Result<Answer<SpaceList>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        if reach.roles.is_empty() {
            return Ok(Answer {
                text: format!(
                    "you belong to no space yet — an owner of a space can add you (shed member add <space> {} --role editor)",
                    reach.person.handle
                ),
                data: SpaceList { spaces: Vec::new() },
            });
        }
        let mut parts = Vec::new();
        let mut spaces = Vec::new();
        let mut counted = Vec::new();
        let mut all_apps = 0;
        for (space, role) in &reach.roles {
            let apps = snapshot.apps_in(space);
            let mut lines = vec![format!("## {space} — you are {}", role.with_article())];
            if apps.is_empty() {
                lines.push(NO_APPS_YET.to_string());
            }
            for app in &apps {
                lines.push(format!(
                    "{} — {}, {}, v{} — {}",
                    app.name, app.title, app.access, app.version, app.address
                ));
            }
            parts.push(lines.join("\n"));
            all_apps += apps.len();
            counted.push(format!(
                "{space} ({}, {})",
                role.as_str(),
                count(apps.len(), "app", "apps")
            ));
            spaces.push(SpaceEntry {
                space: space.clone(),
                role: role.as_str(),
                apps: apps.iter().map(|app| SpaceApp::of(app)).collect(),
            });
        }
        let first = format!(
            "you belong to {}, with {} in them: {}",
            count(counted.len(), "space", "spaces"),
            count(all_apps, "app", "apps"),
            bounded_list(&counted)
        );
        Ok(Answer {
            text: format!("{first}\n\n{}", parts.join("\n\n")),
            data: SpaceList { spaces },
        })
    }
}
