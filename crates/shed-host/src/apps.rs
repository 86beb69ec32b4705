//! An app's life after its first deploy, for the person managing it: the
//! apps of their spaces (trashed ones too), an app's versions with the
//! commands each added and removed, rolling back to a version (a new deploy
//! of its files), putting an app in the trash and taking it out, and purging
//! it. The rule book decides who may (`Act::SeeVersions`, `Rollback`,
//! `Trash`, `Purge`); what being in the trash means for every door is
//! decided where reach is (`reach`). The CLI's `shed app …` and the
//! platform's pages call these.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::access::{Act, Standing, may};
use crate::answer::{Answer, SpaceApp};
use crate::answer::{
    AppActs, AppChange, AppList, AppOfMine, AppOverview, AppVersion, AppVersions, Deployed, Stamp,
};
use crate::deploy::{Made, Target};
use crate::names::{AppName, shown};
use crate::reach::Reach;
use crate::registry::LiveApp;
use crate::texts::count;
use crate::{Caller, Host, HostError};

impl Host {
    /// The apps of the caller's spaces, those in the trash too: title,
    /// access, version, the last deploy and who made it, its commands, and
    /// the caller's role.
    pub async fn apps(&self, caller: &Caller) -> Result<Answer<AppList>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let apps = reach
            .apps_and_trashed(&snapshot)
            .into_iter()
            .map(|app| mine(app, &reach))
            .collect();
        Ok(listed(apps, "in your spaces"))
    }

    /// Every app on the data folder, those in the trash too: what whoever
    /// runs `shed` on it sees.
    pub async fn all_apps(&self) -> Result<Answer<AppList>, HostError> {
        let snapshot = self.snapshot().await?;
        let apps = snapshot
            .apps
            .iter()
            .map(|app| AppOfMine {
                app: SpaceApp::of(app),
                role: None,
                may: AppActs::default(),
            })
            .collect();
        Ok(listed(apps, "on this shed"))
    }

    /// What an app's page shows of `app` (`space/app`), trashed or not: the
    /// app, the caller's role and what they may do to it, and its versions.
    pub async fn app_overview(&self, caller: &Caller, app: &str) -> Result<AppOverview, HostError> {
        let versions = self.app_versions(caller, app).await?.data;
        let (live, reach) = self.managed_app(caller, app, Act::SeeVersions).await?;
        Ok(AppOverview {
            app: mine(&live, &reach),
            versions,
            agent_writes_need_approval: live.agent_writes_need_approval,
        })
    }

    /// Every version of `app` (`space/app`), newest first: who deployed it
    /// and when, the version a roll back brought back, and the commands it
    /// added and removed against the version before.
    pub async fn app_versions(
        &self,
        caller: &Caller,
        app: &str,
    ) -> Result<Answer<AppVersions>, HostError> {
        let (app, _) = self.managed_app(caller, app, Act::SeeVersions).await?;
        let store = &self.inner.store;
        let mut versions = Vec::new();
        let mut before: Vec<String> = Vec::new();
        for record in store.app_versions(&app.space, &app.slug).await? {
            let files = store
                .deploy_files_with_contents_of(record.deploy, shed_manifest::MANIFEST_FILES)
                .await?;
            // A version that no longer reads offered no commands, as the registry says.
            let commands: Vec<String> = shed_manifest::read_app(&files, &app.name)
                .map(|manifest| manifest.commands.into_iter().map(|c| c.name).collect())
                .unwrap_or_default();
            let (added, removed) = command_changes(&before, &commands);
            before.clone_from(&commands);
            versions.push(AppVersion {
                version: record.version,
                deployed: Stamp::of(&record.at, &record.by),
                rolls_back_to: record.rolls_back_to,
                commands,
                added,
                removed,
            });
        }
        versions.reverse();
        let mut lines = vec![format!(
            "{}: {}, v{} answers{}",
            app.name,
            count(versions.len(), "version", "versions"),
            app.version,
            if app.trashed.is_some() {
                " — it is in the trash"
            } else {
                ""
            }
        )];
        lines.extend(versions.iter().map(version_line));
        Ok(Answer {
            text: lines.join("\n"),
            data: AppVersions {
                app: app.name.clone(),
                current: app.version,
                trashed: app.trashed.is_some(),
                versions,
            },
        })
    }

    /// Deploys the files of `app`'s version `version` again, as its next
    /// version, made by the caller. The tool list does not move; sessions
    /// that reach its views hear `resources/list_changed`, as for any deploy.
    pub async fn app_rollback(
        &self,
        caller: &Caller,
        app: &str,
        version: i64,
    ) -> Result<Answer<Deployed>, HostError> {
        let (app, reach) = self.managed_app(caller, app, Act::Rollback).await?;
        reach.reachable(&app)?;
        let versions = self.inner.store.app_versions(&app.space, &app.slug).await?;
        let Some(wanted) = versions.iter().find(|record| record.version == version) else {
            return Err(HostError::BadInput(format!(
                "{} has no version {version} — it has v1 to v{}; {}",
                app.name,
                app.version,
                reach.suggest().versions(&app.name)
            )));
        };
        if version == app.version {
            return Err(HostError::BadInput(format!(
                "{} v{version} is the version answering now — roll back to an earlier one ({})",
                app.name,
                reach.suggest().versions(&app.name)
            )));
        }
        let files = self.inner.store.deploy_files(wanted.deploy).await?;
        let target = Target {
            space: app.space.clone(),
            slug: app.slug.clone(),
            standing: reach.standing(&app.space),
            person: reach.person,
        };
        let made = Made {
            rolls_back_to: Some(version),
            ..Made::default()
        };
        let deployed = self.deploy(&target, files, made).await?;
        Ok(Answer {
            text: format!(
                "rolled {} back to v{version}: now v{}, at {}\ncommands: {}",
                app.name,
                deployed.data.version,
                deployed.data.address,
                if deployed.data.commands.is_empty() {
                    "none".to_string()
                } else {
                    deployed.data.commands.join(", ")
                }
            ),
            data: deployed.data,
        })
    }

    /// Puts `app` in the trash: its commands, pages, views and data are out
    /// of everybody's reach, and its name stays taken, until it is restored
    /// or purged. Its data is kept.
    pub async fn app_trash(
        &self,
        caller: &Caller,
        app: &str,
    ) -> Result<Answer<AppChange>, HostError> {
        let (app, reach) = self.managed_app(caller, app, Act::Trash).await?;
        let name = &app.name;
        let trashed = self
            .inner
            .store
            .trash_app(&app.space, &app.slug, &reach.person.eid)
            .await?;
        if !trashed {
            return Err(HostError::BadInput(format!(
                "{name} is in the trash already — restore takes it out ({})",
                reach.suggest().restore(name)
            )));
        }
        tracing::info!(app = %name, by = %reach.person.handle, "trashed");
        Ok(Answer {
            text: format!(
                "{name} is in the trash: its commands, pages, views and data are out of reach, \
                 and its data is kept — restore it to bring it all back ({}), or purge it to \
                 delete it for good ({})",
                reach.suggest().restore(name),
                reach.suggest().purge(name)
            ),
            data: changed(&app, "trashed", &reach),
        })
    }

    /// Takes `app` out of the trash: everything of it answers again.
    pub async fn app_restore(
        &self,
        caller: &Caller,
        app: &str,
    ) -> Result<Answer<AppChange>, HostError> {
        let (app, reach) = self.managed_app(caller, app, Act::Trash).await?;
        let name = &app.name;
        let restored = self
            .inner
            .store
            .restore_app(&app.space, &app.slug, &reach.person.eid)
            .await?;
        if !restored {
            return Err(HostError::BadInput(format!(
                "{name} is not in the trash — it answers as it is"
            )));
        }
        tracing::info!(app = %name, by = %reach.person.handle, "restored");
        Ok(Answer {
            text: format!(
                "{name} is out of the trash: its commands, pages, views and data answer again (v{})",
                app.version
            ),
            data: changed(&app, "restored", &reach),
        })
    }

    /// Deletes `app`, which must be in the trash, for good — its deploys,
    /// drafts and data — when `typed` is its name exactly; its name is free
    /// after.
    pub async fn app_purge(
        &self,
        caller: &Caller,
        app: &str,
        typed: &str,
    ) -> Result<Answer<AppChange>, HostError> {
        let (app, reach) = self.managed_app(caller, app, Act::Purge).await?;
        let name = &app.name;
        if app.trashed.is_none() {
            return Err(HostError::BadInput(format!(
                "only an app in the trash is purged, and {name} is not in it — put it there first \
                 ({})",
                reach.suggest().trash(name)
            )));
        }
        if typed != name.as_str() {
            return Err(HostError::BadInput(format!(
                "to purge {name}, type its name exactly: {name} (you typed {}) — nothing was deleted",
                if typed.is_empty() {
                    "nothing".to_string()
                } else {
                    shown(typed)
                }
            )));
        }
        let Some(purged) = self
            .inner
            .store
            .purge_app(&app.space, &app.slug, &reach.person.eid)
            .await?
        else {
            return Err(HostError::BadInput(format!(
                "{name} is not in the trash any more — nothing was deleted"
            )));
        };
        tracing::info!(app = %name, by = %reach.person.handle, "purged");
        Ok(Answer {
            text: format!(
                "purged {name}: {} and {} deleted for good; the name {name} is free",
                count(purged.versions as usize, "version", "versions"),
                count(purged.entities as usize, "entity", "entities"),
            ),
            data: AppChange {
                versions: Some(purged.versions),
                entities: Some(purged.entities),
                ..changed(&app, "purged", &reach)
            },
        })
    }

    /// The app `name` (`space/app`) names, trashed or not, once the rule
    /// book lets the caller do `act` to it; and the caller's reach.
    async fn managed_app(
        &self,
        caller: &Caller,
        name: &str,
        act: Act,
    ) -> Result<(Arc<LiveApp>, Reach), HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let AppName::Full { space, .. } = AppName::parse(name)? else {
            return Err(HostError::BadInput(format!(
                "say the app with its space, like demo/{name}"
            )));
        };
        let standing = reach.standing(space);
        // The same sentence as for a private app outside the caller's spaces.
        let app = snapshot
            .app(name)
            .cloned()
            .ok_or_else(|| HostError::NotFound(format!("no app {name}")))?;
        may(app.subject(), standing, act)?;
        Ok((app, reach))
    }
}

/// An app as the caller sees it in a list: with their role, and what the
/// rule book lets them do to it.
fn mine(app: &LiveApp, reach: &Reach) -> AppOfMine {
    let standing = reach.standing(&app.space);
    AppOfMine {
        app: SpaceApp::of(app),
        role: reach.role(&app.space).map(|role| role.as_str()),
        may: acts(app, standing),
    }
}

/// What the rule book lets one of `standing` do to `app`'s life.
fn acts(app: &LiveApp, standing: Standing) -> AppActs {
    let may = |act| may(app.subject(), standing, act).is_ok();
    AppActs {
        rollback: may(Act::Rollback),
        trash: may(Act::Trash),
        purge: may(Act::Purge),
    }
}

/// A version as a person writes it, `2` or `v2`; anything else refused
/// with the sentence saying how.
pub fn parse_version(word: &str) -> Result<i64, HostError> {
    let word = word.trim();
    word.strip_prefix('v')
        .unwrap_or(word)
        .parse::<i64>()
        .ok()
        .filter(|version| *version > 0)
        .ok_or_else(|| {
            HostError::BadInput(format!(
                "{} is not a version — say one like 2 or v2",
                shown(word)
            ))
        })
}

/// `jeff/runs: 3 apps in your spaces` and a line per app.
fn listed(apps: Vec<AppOfMine>, where_: &str) -> Answer<AppList> {
    let mut lines = vec![format!("{} {where_}", count(apps.len(), "app", "apps"))];
    lines.extend(apps.iter().map(app_line));
    Answer {
        text: lines.join("\n"),
        data: AppList { apps },
    }
}

/// `demo/runs — Run club, private, v3, deployed 2026-… by ada — commands:
/// log_run, board — you are an owner`
fn app_line(mine: &AppOfMine) -> String {
    let app = &mine.app;
    let commands = if app.commands.is_empty() {
        "no commands".to_string()
    } else {
        format!("commands: {}", app.commands.join(", "))
    };
    let mut line = format!(
        "{} — {}, {}, v{}, deployed {} by {} — {commands}",
        app.at, app.title, app.access, app.version, app.last_deploy.at, app.last_deploy.handle
    );
    if let Some(trashed) = &app.trashed {
        line.push_str(&format!(
            " — in the trash since {} (by {})",
            trashed.at, trashed.handle
        ));
    }
    if let Some(role) = mine.role {
        line.push_str(&format!(" — you are {role}"));
    }
    line
}

/// `v4 — 2026-… by ada — back to v2 — added: since; removed: board`
fn version_line(version: &AppVersion) -> String {
    let mut line = format!(
        "v{} — {} by {}",
        version.version, version.deployed.at, version.deployed.handle
    );
    if let Some(earlier) = version.rolls_back_to {
        line.push_str(&format!(" — back to v{earlier}"));
    }
    let listed = |names: &[String]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    line.push_str(&format!(
        " — added: {}; removed: {}",
        listed(&version.added),
        listed(&version.removed)
    ));
    line
}

/// The commands `now` added to those of `before`, and those it removed,
/// each in the order its version lists them.
pub(crate) fn command_changes(before: &[String], now: &[String]) -> (Vec<String>, Vec<String>) {
    let had: BTreeSet<&String> = before.iter().collect();
    let has: BTreeSet<&String> = now.iter().collect();
    let added = now.iter().filter(|c| !had.contains(c)).cloned().collect();
    let removed = before
        .iter()
        .filter(|c| !has.contains(c))
        .cloned()
        .collect();
    (added, removed)
}

/// The change made to `app` by the caller.
fn changed(app: &LiveApp, change: &'static str, reach: &Reach) -> AppChange {
    AppChange {
        app: app.name.clone(),
        change,
        by: reach.person.handle.clone(),
        versions: None,
        entities: None,
    }
}

#[cfg(test)]
mod tests {
    use super::command_changes;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_version_is_a_positive_number_with_or_without_its_v() {
        assert_eq!(super::parse_version("2").unwrap(), 2);
        assert_eq!(super::parse_version(" v12 ").unwrap(), 12);
        for bad in ["", "0", "-1", "two", "v", "2.5", "V2"] {
            let refused = super::parse_version(bad).unwrap_err().to_string();
            assert!(
                refused.contains("is not a version — say one like 2 or v2"),
                "{bad}: {refused}"
            );
        }
    }

    #[test]
    fn the_first_version_adds_every_command() {
        let (added, removed) = command_changes(&[], &names(&["log_run", "board"]));
        assert_eq!(added, names(&["log_run", "board"]));
        assert!(removed.is_empty());
    }

    #[test]
    fn a_version_adds_and_removes_against_the_one_before_in_its_order() {
        let before = names(&["log_run", "board", "since"]);
        let now = names(&["since", "log_run", "longest", "add_jog"]);
        let (added, removed) = command_changes(&before, &now);
        assert_eq!(added, names(&["longest", "add_jog"]));
        assert_eq!(removed, names(&["board"]));
    }

    #[test]
    fn the_same_commands_in_another_order_change_nothing() {
        let (added, removed) = command_changes(&names(&["a", "b"]), &names(&["b", "a"]));
        assert!(added.is_empty() && removed.is_empty());
    }

    #[test]
    fn a_version_with_no_commands_removes_them_all() {
        let (added, removed) = command_changes(&names(&["a", "b"]), &[]);
        assert!(added.is_empty());
        assert_eq!(removed, names(&["a", "b"]));
    }
}
