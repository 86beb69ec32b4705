//! An app's life after its first deploy, and where the platform is served —
//! what migration 10 made, behind the `Lifecycle` interface, written once
//! for both backends (`records/lifecycle.rs`):
//!
//! - **Versions**: every deploy of an app, with who made it and when, and
//!   the version a roll back brought back (`deploys.rolls_back_to`); a deploy
//!   keeps its files, so any version can be deployed again.
//! - **Trash**: an app in the trash (`apps.trashed_at`, `trashed_by`; read as
//!   [`Trashed`](crate::platform::Trashed) on its `AppRecord`) keeps its
//!   deploys and data; restoring it clears the mark; purging it deletes its
//!   deploys, drafts, view keys and every row and table of its data, and
//!   frees its name. Each of the three is a row of `app_changes`, whose id
//!   only grows — as is a change of the app's settings (whether agents'
//!   writes need approval, migration 20), which every server reads from
//!   the app's record.
//! - **The generation**: the last deploy's id and the last app change's id,
//!   read on every call, so any process notices a deploy, a trash, a
//!   restore, a purge or a setting changed by another process on the same
//!   database.
//! - **The served address**: the public URL the last `shed serve` or `shed
//!   up` served at (`served_at`), which the CLI's links use when it is not
//!   given one.
//!
//! Plain storage: who may do which is decided in shed-host.

use crate::platform::{AppRecord, Membership};
use crate::{Person, StoreError};

/// Where the platform's apps stand: the last deploy, and the last trash,
/// restore, purge or change of settings. Any of them makes it another generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// The id of the last deploy (0 before the first).
    pub deploy: i64,
    /// The id of the last app change (0 before the first).
    pub change: i64,
}

/// What changed after a generation: the apps deployed, trashed, restored or
/// purged (`space/slug`, deploys first, each in order), the generation
/// they bring, and how many memberships there are now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changes {
    /// The generation these changes bring the platform to: where the next
    /// look starts (the generation looked after, when nothing changed).
    pub now: Generation,
    /// The apps changed, as `space/slug`: one entry per deploy, in the
    /// order made, then one per trash, restore or purge, in order; an app
    /// changed twice is named twice.
    pub apps: Vec<String>,
    /// The memberships the platform holds now, in every space: when the
    /// count moves, somebody's reach has changed.
    pub members: i64,
}

/// One deploy of an app, as its versions list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRecord {
    /// The app's version this deploy made: 1 for its first deploy, one more
    /// for each after (a roll back is a new version too).
    pub version: i64,
    /// The deploy's id, whose files [`Store::deploy_files`](crate::Store::deploy_files) reads.
    pub deploy: i64,
    /// RFC 3339.
    pub at: String,
    /// The person who made the deploy.
    pub by: Person,
    /// The version whose files this deploy brought back, for a roll back.
    pub rolls_back_to: Option<i64>,
}

/// The rows of one table a purge deletes in one transaction, at most: a
/// purged app's rows go in batches, each its own transaction, so a large
/// app's purge never holds up another app's writes for long (SQLite's one
/// writer takes turns between them).
pub const PURGE_BATCH_ROWS: i64 = 1_000;

/// What a purge deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Purged {
    /// The app's deploys deleted, with their files.
    pub versions: i64,
    /// The entities the app's data held, every one deleted with its
    /// components, edges and history.
    pub entities: i64,
}

/// What a row of `app_changes` says happened to an app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Trash,
    Restore,
    Purge,
    /// The app's settings changed (whether agents' writes need approval):
    /// every server reads its record again.
    Settings,
}

impl Change {
    /// The word `app_changes.change` keeps.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Change::Trash => "trash",
            Change::Restore => "restore",
            Change::Purge => "purge",
            Change::Settings => "settings",
        }
    }
}

interface! {
    /// Versions, the trash, purges, the generation that any of them (or a
    /// deploy) moves, and the public URL the platform was last served at.
    trait Lifecycle {
        /// The platform's generation now: it moves with every deploy, trash,
        /// restore and purge, by any process.
        async fn generation(&self) -> Result<Generation, StoreError>;
        /// A person's memberships and the generation, read together: what a
        /// call needs to know who reaches what, for one trip to the database.
        async fn memberships_and_generation(
            &self,
            person_eid: &str,
        ) -> Result<(Vec<Membership>, Generation), StoreError>;
        /// What changed after `after`: the apps deployed, trashed, restored or
        /// purged, and the count of memberships (a change of the count is a
        /// change of somebody's reach), in one read.
        async fn changes_since(&self, after: Generation) -> Result<Changes, StoreError>;
        /// Every app, trashed ones too (by space slug, then in the order they
        /// were made), and the generation they stand for, read together.
        async fn platform_apps(&self) -> Result<(Generation, Vec<AppRecord>), StoreError>;
        /// Every deploy of an app, oldest first; none for an app never deployed.
        async fn app_versions(
            &self,
            space: &str,
            slug: &str,
        ) -> Result<Vec<VersionRecord>, StoreError>;
        /// Puts an app in the trash, as the person `by` (eid); false when it
        /// was there already or is no app.
        async fn trash_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError>;
        /// Takes an app out of the trash, as the person `by` (eid); false when
        /// it was not in it.
        async fn restore_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError>;
        /// Deletes an app in the trash — its deploys with their files, drafts,
        /// view keys, and all its data with its tables — in one write, as the
        /// person `by` (eid); its name is free after. `None` when the app is not
        /// in the trash (nothing is deleted).
        async fn purge_app(
            &self,
            space: &str,
            slug: &str,
            by: &str,
        ) -> Result<Option<Purged>, StoreError>;
        /// Records the public URL a server serves at, for the CLI's links.
        async fn record_public_url(&self, url: &str) -> Result<(), StoreError>;
        /// The public URL the last server recorded, if one did.
        async fn recorded_public_url(&self) -> Result<Option<String>, StoreError>;
    }
}
