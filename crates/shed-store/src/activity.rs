//! What happened in a space: every write to an app's data is one row of
//! activity (`ec_writes`, kept by the apply that commits it — who, via
//! which agent, through which door, command and client, which entities),
//! and the calls refused by the rule book or a job's scope are kept beside
//! them (`refusals`), bounded ([`REFUSALS_PER_SPACE`],
//! [`REFUSALS_KEPT_FOR`]), and at most [`REFUSALS_KEPT_PER_CALLER`] of one
//! caller's in a space each [`REFUSAL_RATE_WINDOW`], so no caller pushes
//! out the others' (nor their own older ones) by being refused fast. Both are read newest first by a keyset on
//! their ids (one sequence per table, so spaces' pages merge by id); the
//! statements, once for both backends: `records/activity.rs`.

use std::time::Duration;

use crate::{Person, StoreError, Through};

/// The most refusals a space keeps: past it the oldest is forgotten.
pub const REFUSALS_PER_SPACE: i64 = 1_000;

/// How long a refusal is kept.
pub const REFUSALS_KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// The most refusals of one caller — a person, or one agent of theirs
/// (`via`) — a space keeps within [`REFUSAL_RATE_WINDOW`]: past it a
/// refusal is still answered, but not kept, so a flood of one caller's
/// refused calls cannot push out what the space kept before it.
pub const REFUSALS_KEPT_PER_CALLER: i64 = 100;

/// The window [`REFUSALS_KEPT_PER_CALLER`] counts a caller's kept refusals
/// over.
pub const REFUSAL_RATE_WINDOW: Duration = Duration::from_secs(3600);

/// One write to an app's data, as its row of activity keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// Its place among every write: newer writes have larger ids.
    pub id: i64,
    /// The app it wrote (`space/slug`).
    pub app: String,
    /// The app data version it committed as: the write's name within its
    /// app (`demo/runs@12`).
    pub version: u64,
    /// When (RFC 3339, UTC, to the microsecond).
    pub at: String,
    /// The person it was written as (an agent writes as its person).
    pub by: Person,
    /// The agent that wrote for the person (`agent:job-3`), or what the
    /// write was (`undo of demo/runs@12`).
    pub via: Option<String>,
    /// The door, command and client it came through.
    pub through: Through,
    /// The eids of the entities it wrote, in the order it first wrote them.
    pub entities: Vec<String>,
    /// The version of the undo that stands over it (`demo/runs@13`'s 13),
    /// if it is undone: its newest undo not undone since. (An undo of that
    /// undo's undo is not followed here; an undo of the write says.)
    pub undone_by: Option<u64>,
}

/// What narrows a space's activity; each `None` narrows nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narrow {
    /// Only this app's writes (`space/slug`).
    pub app: Option<String>,
    /// Only the writes made as this person (eid).
    pub by: Option<String>,
    /// Only the writes made via this (`agent:job-3`).
    pub via: Option<String>,
    /// Only the writes through this command or tool.
    pub command: Option<String>,
}

/// A call refused, to keep: no argument value is kept, only what was
/// asked and the sentence it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRefusal {
    /// The app it asked for (`space/slug`), which exists.
    pub app: String,
    /// The person who asked (eid), or for whom the agent asked.
    pub by: String,
    /// The agent that asked (`agent:job-3`), if one did.
    pub via: Option<String>,
    /// The door, the command or tool asked for, the client.
    pub through: Through,
    /// The sentence the caller got.
    pub sentence: String,
}

/// A call refused, as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusalRecord {
    /// Its place among every refusal: newer ones have larger ids.
    pub id: i64,
    /// The app it asked for.
    pub app: String,
    /// When (RFC 3339, UTC, to the microsecond).
    pub at: String,
    /// The person who asked, or for whom the agent asked.
    pub by: Person,
    /// The agent that asked, if one did.
    pub via: Option<String>,
    /// The door, command or tool, and client.
    pub through: Through,
    /// The sentence the caller got.
    pub sentence: String,
}

/// The space an app's name (`space/slug`) is in.
pub(crate) fn space_of(app: &str) -> &str {
    app.split_once('/').map_or(app, |(space, _)| space)
}

interface! {
    /// A space's activity: its writes and the calls refused in it.
    trait Activity {
        /// A space's writes newest first, at most `limit`, of the apps
        /// named in `apps` only (the caller's reach decides them; none
        /// named, none answered), narrowed by `narrow`, older than the
        /// write `before` (an id) when given.
        async fn writes(
            &self,
            space: &str,
            apps: &[String],
            narrow: &Narrow,
            before: Option<i64>,
            limit: usize,
        ) -> Result<Vec<WriteRecord>, StoreError>;
        /// An app's writes after app data version `after`, oldest first,
        /// at most `limit`: what a page watching the app missed since
        /// `after` (read by the key `(app, version)`).
        async fn writes_since(
            &self,
            app: &str,
            after: u64,
            limit: usize,
        ) -> Result<Vec<WriteRecord>, StoreError>;
        /// The write that committed an app's data as `version`, if kept.
        async fn write_of(&self, app: &str, version: u64) -> Result<Option<WriteRecord>, StoreError>;
        /// Keeps a refused call in its app's space, forgetting that space's
        /// refusals older than [`REFUSALS_KEPT_FOR`] and the oldest past
        /// [`REFUSALS_PER_SPACE`] — unless its caller (`by` and `via`)
        /// already has [`REFUSALS_KEPT_PER_CALLER`] kept there within
        /// [`REFUSAL_RATE_WINDOW`]: then nothing changes. Counted in the
        /// same write, the table held against other servers' refusals, so
        /// the bound holds however many servers share the database.
        /// Answers whether it was kept.
        async fn record_refusal(&self, refusal: NewRefusal) -> Result<bool, StoreError>;
        /// A space's refusals newest first, of the apps named in `apps`,
        /// at most `limit`, older than `before` (an id) when given; none
        /// older than [`REFUSALS_KEPT_FOR`], though the space's next
        /// refusal has not yet forgotten them.
        async fn refusals(
            &self,
            space: &str,
            apps: &[String],
            before: Option<i64>,
            limit: usize,
        ) -> Result<Vec<RefusalRecord>, StoreError>;
    }
}
