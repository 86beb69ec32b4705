//! The platform's own records as callers see them: spaces and their
//! members, apps and their deploys. Plain shapes (their statements:
//! `records/platform.rs`); who may do what is decided in shed-host. The
//! columns an app is read from are here too.

use std::collections::BTreeMap;

use crate::Person;

/// An app's columns and the tables they come from, in the order
/// `app_record` reads them.
pub(crate) const APP_COLUMNS: &str = "s.slug, a.slug, a.title, a.access, a.version, a.deploy,
    d.at, dp.eid, dp.handle, dp.name, a.trashed_at, tp.eid, tp.handle, tp.name, w.app IS NOT NULL
    FROM apps a JOIN spaces s ON s.id = a.space JOIN deploys d ON d.id = a.deploy
    JOIN people dp ON dp.eid = d.by LEFT JOIN people tp ON tp.eid = a.trashed_by
    LEFT JOIN agent_writes_need_approval w ON w.app = s.slug || '/' || a.slug";

/// A space a person belongs to, and their role there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The space's slug, its name on the platform (e.g. `jeff`).
    pub space: String,
    /// `owner`, `editor` or `viewer`.
    pub role: String,
}

/// An app as it answers now: its last good deploy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppRecord {
    /// The slug of the space the app lives in: the first half of its name.
    pub space: String,
    /// The app's slug within its space: the second half of its name.
    pub slug: String,
    /// The title people see: the one the last deploy that gave one set, or
    /// the slug when none ever did.
    pub title: String,
    /// `private`, `public` or `open`.
    pub access: String,
    /// The version of the deploy that answers: 1, 2, …
    pub version: i64,
    /// The id of that deploy, which only ever grows across the platform.
    pub deploy: i64,
    /// When that deploy was made (RFC 3339), and by whom.
    pub deployed_at: String,
    /// The person who made that deploy.
    pub deployed_by: Person,
    /// Set while the app is in the trash (see `lifecycle`).
    pub trashed: Option<Trashed>,
    /// Writes by agents to the app wait for their person's approval (the
    /// app's setting, `approvals`).
    pub agent_writes_need_approval: bool,
}

impl AppRecord {
    /// `space/slug`, the app's name in the store.
    pub fn name(&self) -> String {
        format!("{}/{}", self.space, self.slug)
    }
}

/// An app in the trash: when, and who put it there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trashed {
    /// RFC 3339.
    pub at: String,
    /// The person who put the app in the trash.
    pub by: Person,
}

/// What a deploy records: the files and, where said, a new title or access.
#[derive(Clone, Debug)]
pub struct NewDeploy {
    /// The slug of the space the app is deployed in; the space must exist.
    pub space: String,
    /// The app's slug in that space; the first deploy of a slug makes the
    /// app.
    pub slug: String,
    /// Kept as it was when None (the slug for a new app).
    pub title: Option<String>,
    /// Kept as it was when None (`private` for a new app).
    pub access: Option<String>,
    /// The person deploying (eid).
    pub by: String,
    /// The app's files whole, each path within the app (e.g. `index.html`)
    /// to its bytes: this deploy's version holds exactly these.
    pub files: BTreeMap<String, Vec<u8>>,

    /// Forget the app's drafts: they are what was deployed.
    pub clear_drafts: bool,
    /// The version whose files these are again, for a roll back.
    pub rolls_back_to: Option<i64>,
}
