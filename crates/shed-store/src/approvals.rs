//! Approvals: an agent's write that waits for its person (migration 18),
//! behind the `Approvals` interface, written once for both backends
//! (`records/approvals.rs`). An approval keeps what was asked — the app,
//! the command, its arguments as JSON, who asked — until it expires; its
//! person approves it (then it runs, once: the approval is claimed in one
//! statement, so two approvals of one row run it once) or denies it. Each
//! person, and each of their agents, holds a bounded number pending
//! ([`PENDING_PER_PERSON`], [`PENDING_PER_AGENT`]), counted in the write
//! that adds one. One left pending past its expiry reads expired at once,
//! and is kept expired when its app's activity is next read
//! (`expire_approvals`), once. Beside them, the apps whose owner said that
//! writes by agents need approval, and the key approvals' request states
//! are signed with (one a database, made by whoever asks first).
//!
//! Plain storage: who must approve and who may is decided in shed-host.

use crate::{Person, StoreError};

/// The most approvals one person has pending at once, whoever asked:
/// past it an agent's write that needs approval is refused until the
/// person decides some, or they expire.
pub const PENDING_PER_PERSON: i64 = 50;

/// The most approvals one agent (an MCP client, a job) of a person has
/// pending at once, so one agent cannot fill its person's list.
pub const PENDING_PER_AGENT: i64 = 10;

/// Where an approval stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalState {
    /// Waiting for its person, not yet expired.
    Pending,
    /// Its person approved it: it ran (or tried to; the outcome says).
    Approved,
    /// Its person denied it: nothing ran.
    Denied,
    /// Nobody decided it before it expired: nothing ran.
    Expired,
}

impl ApprovalState {
    /// The word the `state` column keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Denied => "denied",
            ApprovalState::Expired => "expired",
        }
    }

    pub(crate) fn of(word: &str) -> Result<ApprovalState, StoreError> {
        Ok(match word {
            "pending" => ApprovalState::Pending,
            "approved" => ApprovalState::Approved,
            "denied" => ApprovalState::Denied,
            "expired" => ApprovalState::Expired,
            other => {
                return Err(StoreError::Internal(format!(
                    "an approval's state is {other}"
                )));
            }
        })
    }
}

/// An approval to keep: what an agent asked to run for its person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewApproval {
    /// The person it acts for (eid): the one who may approve it.
    pub person: String,
    /// The app (`space/slug`).
    pub app: String,
    /// The command or tool asked for.
    pub command: String,
    /// Its arguments as JSON, exactly as they will run.
    pub args: String,
    /// Who asked, as the list counts them per agent: `client:<name>`,
    /// `token:<id>`, `job:<name>`.
    pub asker: String,
    /// The agent the write will be made via (`agent:job-3`), if a job.
    pub via: Option<String>,
    /// The door it came by (`mcp`, `broker`).
    pub door: String,
    /// The client it came through, as the write's activity will name it.
    pub client: Option<String>,
    /// When it was asked (Unix seconds).
    pub created_at: i64,
    /// When it expires unanswered (Unix seconds).
    pub expires_at: i64,
}

/// What asking for an approval came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// Kept, with this id.
    Kept(i64),
    /// The person has [`PENDING_PER_PERSON`] pending already: nothing kept.
    PersonFull,
    /// The agent has [`PENDING_PER_AGENT`] pending already: nothing kept.
    AgentFull,
}

/// An approval as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// Its id, its address's last part.
    pub id: i64,
    /// The person it acts for.
    pub person: Person,
    /// The app (`space/slug`).
    pub app: String,
    /// The command or tool asked for.
    pub command: String,
    /// Its arguments as JSON.
    pub args: String,
    /// Who asked (see [`NewApproval::asker`]).
    pub asker: String,
    /// The agent, for a job's write.
    pub via: Option<String>,
    /// The door it came by.
    pub door: String,
    /// The client it came through.
    pub client: Option<String>,
    /// When asked (Unix seconds).
    pub created_at: i64,
    /// When it expires unanswered (Unix seconds).
    pub expires_at: i64,
    /// Where it stands (a pending one past its expiry reads `Expired`).
    pub state: ApprovalState,
    /// When it was approved or denied (Unix seconds).
    pub decided_at: Option<i64>,
    /// What running it answered (or the sentence it was refused with),
    /// once approved and run.
    pub outcome: Option<String>,
    /// The app's data version its write committed as, once it ran.
    pub version: Option<i64>,
}

interface! {
    /// Approvals, and the apps whose writes by agents need them.
    trait Approvals {
        /// Keeps an approval unless its person or its asker has too many
        /// pending (counted in the same write, the table held against
        /// other servers' asks).
        async fn ask_approval(&self, new: NewApproval) -> Result<Asked, StoreError>;
        /// One approval, if kept.
        async fn approval(&self, id: i64, now: i64) -> Result<Option<ApprovalRecord>, StoreError>;
        /// A person's approvals pending at `now`, oldest first.
        async fn pending_approvals(
            &self,
            person: &str,
            now: i64,
        ) -> Result<Vec<ApprovalRecord>, StoreError>;
        /// How many approvals a person has pending at `now`.
        async fn count_pending_approvals(&self, person: &str, now: i64) -> Result<i64, StoreError>;
        /// Approves (`approve`) or denies the approval `id` of `person` if
        /// it is pending at `now`, in one statement: the record as it now
        /// stands, or `None` when it was not pending (decided, expired, not
        /// theirs, or no such approval) and nothing changed. Whoever gets
        /// the record runs it; a second approval gets `None`.
        async fn decide_approval(
            &self,
            id: i64,
            person: &str,
            approve: bool,
            now: i64,
        ) -> Result<Option<ApprovalRecord>, StoreError>;
        /// The approvals of `apps` (`space/slug` each) left pending past
        /// their expiry at `now`, now kept as expired, oldest first. The
        /// table is held against other servers' while they are turned, so
        /// each is answered to one caller once: its expiry becomes one row
        /// of activity however many look at once.
        async fn expire_approvals(
            &self,
            apps: &[String],
            now: i64,
        ) -> Result<Vec<ApprovalRecord>, StoreError>;
        /// Keeps what running an approved approval answered, and the
        /// version its write committed as.
        async fn approval_ran(
            &self,
            id: i64,
            outcome: String,
            version: Option<i64>,
        ) -> Result<(), StoreError>;
        /// Says whether writes by agents to `app` need approval, as the
        /// person `by` (eid). A change moves the platform's generation (a
        /// row of `app_changes`), so every server reads the app's setting
        /// again before its next call ([`crate::platform::AppRecord`]).
        async fn set_agent_writes_need_approval(
            &self,
            app: &str,
            on: bool,
            by: &str,
        ) -> Result<(), StoreError>;
        /// The key every server of this database signs an approval's
        /// request state with: `fresh` kept when there is none yet (the
        /// first to ask makes it), else the one kept. A signing key is a
        /// key, not a secret to compare, so it is kept as it is.
        async fn approval_key(&self, fresh: Vec<u8>) -> Result<Vec<u8>, StoreError>;
    }
}
