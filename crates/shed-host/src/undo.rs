//! Undoing a write: [`Host::undo`] takes a write's name (`jeff/runs@12`,
//! as activity and an entity's history name it) and, where the rule book
//! lets the caller (`Act::Undo`: the owners and editors of the app's
//! space), writes every entity it changed back as it was — what it made
//! tombstoned, what it tombstoned revived — as a new write attributed to
//! the caller `via: undo of jeff/runs@12`, through the `undo` command; an
//! entity changed since refuses it, naming the entity by its title and who
//! changed it how long ago. The write itself, and the read of that name,
//! are the act's (`act.rs`), its plan the store's (`shed_store::undo`).

use serde::Serialize;

use crate::answer::Answer;
use crate::texts::count;
use crate::{Caller, Host, HostError};

/// What an undo wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Undone {
    /// The write undone: `jeff/runs@12`.
    pub write: String,
    /// The undo's own write, itself undoable: `jeff/runs@15`.
    pub undo: String,
    /// The entities it wrote back, tombstoned or revived.
    pub entities: Vec<String>,
}

/// `jeff/runs@12` read as the app's name and the write's version.
fn write_named(write: &str) -> Result<(&str, u64), HostError> {
    write
        .rsplit_once('@')
        .and_then(|(app, version)| Some((app, version.parse::<u64>().ok()?)))
        .filter(|(app, version)| !app.is_empty() && *version > 0)
        .ok_or_else(|| {
            HostError::BadInput(format!(
                "{write} is not a write — name one as <space>/<app>@<version>, as its activity \
                 and its entities' history do (e.g. jeff/runs@12)"
            ))
        })
}

impl Host {
    /// Undoes `write` (`<space>/<app>@<version>`, or `<app>@<version>` for
    /// an app of the caller's spaces) as `caller`: `undid jeff/runs@12: 2
    /// entities back as they were (jeff/runs@15)`. Refused with the rule
    /// book's sentence (a viewer's, `no app …` for an outsider of a private
    /// app), or — nothing written — `cannot undo jeff/runs@12: "Run by Ada"
    /// changed since — @bob (agent:job-3) wrote it 2 minutes ago
    /// (jeff/runs@14); undo that first`.
    pub async fn undo(&self, caller: &Caller, write: &str) -> Result<Answer<Undone>, HostError> {
        let (app, version) = write_named(write)?;
        let (app, standing) = self.named_app(caller, app).await?;
        let undone = self.undo_write(caller, &app, standing, version).await?;
        let undo = format!("{}@{}", app.name, undone.applied.version);
        let entities = undone.applied.entities;
        Ok(Answer {
            text: format!(
                "undid {}: {} back as they were ({undo})",
                undone.write,
                count(entities.len(), "entity", "entities")
            ),
            data: Undone {
                write: undone.write,
                undo,
                entities,
            },
        })
    }
}

impl Host {
    /// Whether the rule book lets `caller` undo a write of `app` (an owner
    /// or editor of its space): for a page's Undo button beside a write of
    /// an app it already shows. `false` too for an app out of the caller's
    /// reach.
    pub async fn may_undo(&self, caller: &Caller, app: &str) -> bool {
        self.named_app(caller, app)
            .await
            .is_ok_and(|(app, standing)| {
                crate::access::may(app.subject(), standing, crate::access::Act::Undo).is_ok()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_named_by_its_app_and_version() {
        assert_eq!(write_named("jeff/runs@12").unwrap(), ("jeff/runs", 12));
        assert_eq!(write_named("runs@3").unwrap(), ("runs", 3));
        for bad in [
            "jeff/runs",
            "jeff/runs@",
            "jeff/runs@0",
            "@4",
            "jeff/runs@-1",
            "jeff/runs@x",
        ] {
            let said = write_named(bad).unwrap_err().to_string();
            assert!(
                said.starts_with(&format!("{bad} is not a write — ")),
                "{said}"
            );
        }
    }
}
