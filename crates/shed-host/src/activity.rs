//! What happened in the spaces a person reaches, as the activity pages ask
//! it: every write to an app's data newest first (one row of `ec_writes`
//! each — who, which agent job or client, which door and command, which
//! entities) and, beside them, the calls the rule book or a job's scope
//! refused, and the approvals asked, denied or expired (an approval left
//! unanswered past its expiry is kept expired as its app's activity is
//! read, so it shows, once, though nobody touched it since).
//! [`Host::activity`] reads everything the caller reaches, one space, or
//! one app, narrowed by person, agent job, app or command.
//!
//! Which apps' rows a caller sees is the rule book's: an app whose data
//! they may read (`Act::Read`) and whose history they may see
//! (`Act::SeeVersions`, its members') — so a private app's rows never
//! appear on another person's activity, and somebody outside a space sees
//! none of its activity (not even a public app's: who wrote what is the
//! space's to know). An outsider asking for a space's activity reads what
//! a space nobody made answers ([`not_a_space_of_yours`]); for an app's,
//! what a made-up app answers. An agent job writes as the person it runs
//! for, so its writes are on that person's activity.
//!
//! Each space is read by its index, newest first, `limit + 1` rows past the
//! cursor; write ids are one sequence across spaces, so the spaces' pages
//! merge by id and the cursor of the next page is the last id shown.

use std::sync::Arc;

pub use shed_store::Through;
use shed_store::activity::{Narrow, REFUSALS_PER_SPACE};
pub use shed_store::activity::{RefusalRecord, WriteRecord};

use crate::access::{Act, Standing, may};
use crate::own::not_a_space_of_yours;
use crate::reach::Reach;
use crate::registry::{LiveApp, Snapshot};
use crate::texts::count;
use crate::{Answer, Caller, Host, HostError};

/// The agent job a write's `via` names (`agent:job-3` → `job-3`), if it
/// names one: the job an agent's write was made through.
pub fn job_of(via: Option<&str>) -> Option<&str> {
    via.and_then(|via| via.strip_prefix("agent:"))
}

/// The most writes one page of activity shows: a screenful a person reads,
/// and `limit + 1` rows per space read by index.
pub const ACTIVITY_PAGE_WRITES: usize = 50;

/// The most refusals shown beside the first page of writes: the newest
/// ones, enough to see what an agent tried and was not let do.
pub const ACTIVITY_PAGE_REFUSALS: usize = 20;

/// What an activity page covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActivityScope<'a> {
    /// Every space the caller belongs to (`/activity`).
    Everything,
    /// One space (`/spaces/<space>/activity`).
    Space(&'a str),
    /// One app, `space/slug` (the activity tab of the app's page).
    App(&'a str),
}

/// What narrows an activity page, as a person writes it; each `None` (or
/// blank) narrows nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActivityNarrow {
    /// Only the writes made as this person (their handle, `@` or not).
    pub person: Option<String>,
    /// Only the writes an agent job made (`job-3`).
    pub job: Option<String>,
    /// Only this app's writes: `space/slug`, or a slug of any space in scope.
    pub app: Option<String>,
    /// Only the writes through this command or tool (`log_run`, `apply`).
    pub command: Option<String>,
}

/// One page of activity.
#[derive(Clone, Debug, Default)]
pub struct ActivityPage {
    /// The writes, newest first, at most [`ACTIVITY_PAGE_WRITES`].
    pub writes: Vec<WriteRecord>,
    /// The cursor of the next (older) page: the last write's id; `None`
    /// when no older write is left.
    pub older: Option<i64>,
    /// The refused calls, newest first, at most
    /// [`ACTIVITY_PAGE_REFUSALS`]; on the first page only (`before` none).
    pub refusals: Vec<RefusalRecord>,
    /// The apps shown whose writes the rule book lets the caller undo
    /// (`Act::Undo`: the owners and editors of their spaces), for the
    /// rows' Undo buttons.
    pub may_undo: Vec<String>,
}

/// The words of a narrowing, trimmed; blank ones narrow nothing.
fn given(word: &Option<String>) -> Option<&str> {
    word.as_deref().map(str::trim).filter(|w| !w.is_empty())
}

impl Host {
    /// One page of the activity `scope` covers as the caller may see it,
    /// narrowed by `narrow`, older than the write `before` when given:
    /// `12 writes` (the refusals on the first page beside them).
    pub async fn activity(
        &self,
        caller: &Caller,
        scope: ActivityScope<'_>,
        narrow: &ActivityNarrow,
        before: Option<i64>,
    ) -> Result<Answer<ActivityPage>, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let mut spaces: Vec<(String, Vec<String>)> = match scope {
            ActivityScope::Everything => reach
                .roles
                .keys()
                .map(|space| (space.clone(), visible_apps(&reach, &snapshot, space)))
                .collect(),
            ActivityScope::Space(space) => {
                if reach.role(space).is_none() {
                    return Err(not_a_space_of_yours(space));
                }
                vec![(space.to_string(), visible_apps(&reach, &snapshot, space))]
            }
            ActivityScope::App(name) => {
                let (app, standing) = self.named_app(caller, name).await?;
                may(app.subject(), standing, Act::Read)?;
                may(app.subject(), standing, Act::SeeVersions)?;
                vec![(app.space.clone(), vec![app.name.clone()])]
            }
        };
        if let Some(wanted) = given(&narrow.app) {
            for (_, apps) in &mut spaces {
                apps.retain(|app| {
                    app == wanted || app.split_once('/').map(|(_, s)| s) == Some(wanted)
                });
            }
        }
        spaces.retain(|(_, apps)| !apps.is_empty());
        let may_undo = spaces
            .iter()
            .flat_map(|(_, apps)| apps)
            .filter(|name| {
                snapshot.app(name).is_some_and(|app| {
                    may(app.subject(), reach.standing(&app.space), Act::Undo).is_ok()
                })
            })
            .cloned()
            .collect();
        let Some(store_narrow) = self.store_narrow(narrow).await? else {
            // A handle nobody has: nothing was written as them.
            return Ok(Answer {
                text: "0 writes".to_string(),
                data: ActivityPage::default(),
            });
        };
        let mut writes = Vec::new();
        for (space, apps) in &spaces {
            let page = self
                .inner
                .store
                .writes(space, apps, &store_narrow, before, ACTIVITY_PAGE_WRITES + 1)
                .await?;
            writes.extend(page);
        }
        writes.sort_by_key(|write| std::cmp::Reverse(write.id));
        let more = writes.len() > ACTIVITY_PAGE_WRITES;
        writes.truncate(ACTIVITY_PAGE_WRITES);
        let older = more.then(|| writes.last().map(|w| w.id)).flatten();
        let refusals = match before {
            None => {
                let apps: Vec<String> = spaces.iter().flat_map(|(_, a)| a.clone()).collect();
                self.expire_approvals(&apps).await?;
                self.refusals_of(&spaces, &store_narrow).await?
            }
            Some(_) => Vec::new(),
        };
        let text = format!(
            "{}{}",
            count(writes.len(), "write", "writes"),
            match refusals.len() {
                0 => String::new(),
                n => format!(", {} refused", count(n, "call", "calls")),
            }
        );
        Ok(Answer {
            text,
            data: ActivityPage {
                writes,
                older,
                refusals,
                may_undo,
            },
        })
    }

    /// The store's narrowing for a person's: a handle becomes the person's
    /// eid, a job its `via`. `None` when the handle is nobody's.
    async fn store_narrow(&self, narrow: &ActivityNarrow) -> Result<Option<Narrow>, HostError> {
        let by = match given(&narrow.person) {
            Some(handle) => {
                let handle = handle.trim_start_matches('@');
                match self.inner.store.present_person(handle).await? {
                    Some(person) => Some(person.eid),
                    None => return Ok(None),
                }
            }
            None => None,
        };
        Ok(Some(Narrow {
            app: None,
            by,
            via: given(&narrow.job).map(|job| format!("agent:{job}")),
            command: given(&narrow.command).map(str::to_string),
        }))
    }

    /// The newest refusals of `spaces`' apps, narrowed as the writes are.
    /// Narrowed by who or what asked, a space's kept refusals are read
    /// whole — at most `REFUSALS_PER_SPACE`, the bound the store keeps.
    async fn refusals_of(
        &self,
        spaces: &[(String, Vec<String>)],
        narrow: &Narrow,
    ) -> Result<Vec<RefusalRecord>, HostError> {
        let narrowed = narrow.by.is_some() || narrow.via.is_some() || narrow.command.is_some();
        let read = if narrowed {
            usize::try_from(REFUSALS_PER_SPACE).unwrap_or(usize::MAX)
        } else {
            ACTIVITY_PAGE_REFUSALS
        };
        let mut refusals = Vec::new();
        for (space, apps) in spaces {
            let kept = self.inner.store.refusals(space, apps, None, read).await?;
            refusals.extend(kept.into_iter().filter(|refusal| {
                narrow.by.as_ref().is_none_or(|by| *by == refusal.by.eid)
                    && narrow
                        .via
                        .as_ref()
                        .is_none_or(|via| refusal.via.as_ref() == Some(via))
                    && narrow
                        .command
                        .as_ref()
                        .is_none_or(|command| refusal.through.command.as_ref() == Some(command))
            }));
        }
        refusals.sort_by_key(|refusal| std::cmp::Reverse(refusal.id));
        refusals.truncate(ACTIVITY_PAGE_REFUSALS);
        Ok(refusals)
    }
}

/// The apps of `space` whose activity the caller sees: those the rule book
/// lets them read and see the history of, out of the trash.
fn visible_apps(reach: &Reach, snapshot: &Snapshot, space: &str) -> Vec<String> {
    let standing: Standing = reach.standing(space);
    snapshot
        .apps_in(space)
        .into_iter()
        .filter(|app: &&Arc<LiveApp>| {
            may(app.subject(), standing, Act::Read).is_ok()
                && may(app.subject(), standing, Act::SeeVersions).is_ok()
        })
        .map(|app| app.name.clone())
        .collect()
}
