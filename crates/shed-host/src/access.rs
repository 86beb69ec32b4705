//! The rule book: every "may they?" of the platform, in one table, and the
//! sentence each refusal says. Nothing else in shed (no other module, no
//! door) compares a role or an access: it asks [`may`], or reads a label
//! [`readers_of`] and [`trusted`] derive from the same table.
//!
//! | act \ standing        | signed out | outsider            | viewer | editor | owner |
//! |-----------------------|------------|---------------------|--------|--------|-------|
//! | read, private         | sign in    | hidden              | yes    | yes    | yes   |
//! | read, public/open     | yes        | yes                 | yes    | yes    | yes   |
//! | write, private        | sign in    | hidden              | viewer | yes    | yes   |
//! | write, public         | sign in    | public, members only| viewer | yes    | yes   |
//! | write, open           | sign in    | yes                 | yes    | yes    | yes   |
//! | files (read `app_files`) | sign in | hidden             | yes    | yes    | yes   |
//! | deploy / draft        | sign in    | not your space      | viewer | yes    | yes   |
//! | change access         | sign in    | not your space      | viewer | owner  | yes   |
//! | invite to the space   | sign in    | owner only          | owner  | owner  | yes   |
//! | remove a member       | sign in    | owner only          | owner  | owner  | yes   |
//! | see versions          | sign in    | hidden              | yes    | yes    | yes   |
//! | roll back             | sign in    | not your space      | viewer | yes    | yes   |
//! | trash / restore       | sign in    | not your space      | viewer | yes    | yes   |
//! | purge                 | sign in    | not your space      | owner  | owner  | yes   |
//! | set agents' approval  | sign in    | not your space      | viewer | owner  | yes   |
//!
//! A write always needs a person (it is recorded as theirs), so a signed-out
//! caller is asked to sign in. A private app does not exist for somebody
//! outside its space: they read "no app …", exactly as for a name nobody
//! used; and somebody deploying into a space not theirs reads the same
//! sentence whether it exists or not. Who may read an app is its space
//! owner's choice: an editor's deploy keeps the app's access (asking for the
//! one it has is no change), and an editor making a new app chooses its
//! access, since it holds no data yet. Only an owner takes a member out of a
//! space (themselves too), and a space never loses its last owner, whoever
//! asks ([`may_remove_member`]); whoever runs `shed` on the data folder
//! stands as an owner of every space.
//!
//! An app's versions (who deployed each, when, what commands came and went)
//! are its members' to see, like its files. Those who may deploy an app may
//! roll it back (a roll back is a deploy) and put it in the trash or take it
//! out — nothing is lost either way; only an owner purges, which deletes its
//! data for good. An app in the trash is out of everybody's reach, through
//! every door ([`reachable`]): its commands are listed nowhere, and naming
//! it — its commands, pages, views, data or files — is refused with the
//! sentence saying it is in the trash and who may restore it, to whoever
//! could read it before (anybody else reads what they would have read).
//! Its name is not free until it is purged ([`name_in_the_trash`]).
//!
//! An agent's write may wait for its person ([`needs_approval`]): when the
//! caller is an agent — any MCP client (an OAuth client, a pasted token,
//! `shed mcp --as`) or a job through the broker — and the command says
//! `"confirm": true` or the app's owner said that writes by agents need
//! approval ([`Act::SetAgentApproval`]). The person's own writes (the
//! app's pages, the platform's pages, `shed` at the terminal) never wait.
//! Only the person the call acts for may approve or deny it
//! ([`may_decide_approval`]); to anybody else it does not exist.
//!
//! An agent's job adds a second table, [`job_verdict`]: what the job lets
//! its agent run, whatever the person's standing (which the first table
//! then decides as for the person).
//!
//! | job \ run  | outside its scope | in scope | `--read-only`, a read its grant names | `--read-only`, a read it does not | `--read-only`, a write |
//! |------------|-------------------|----------|---------------------------------------|-----------------------------------|------------------------|
//! | running    | outside           | yes      | yes                                   | no grant                          | reads only             |
//! | ended      | ended             | ended    | ended                                 | ended                             | ended                  |
//! | expired    | expired           | expired  | expired                               | expired                           | expired                |

use crate::{Access, HostError, Role};

/// How to sign in, the tail of every "sign in first" sentence.
pub const SIGN_IN_HOW: &str = "send a bearer token from `shed token create <handle>` in the \
Authorization header, or run `shed mcp --as <handle>` over stdio";

/// The viewer's sentence, the one the page would have shown them.
pub const VIEWER_SENTENCE: &str =
    "you can read this app but not change it — its owner can make you an editor";

/// "sign in first — …how…", for a call that needs a person and has none.
pub fn sign_in_first() -> HostError {
    HostError::SignIn(format!("sign in first — {SIGN_IN_HOW}"))
}

/// Where the caller stands towards one space (and so its apps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Standing {
    /// Nobody is calling.
    SignedOut,
    /// A person (or their agent) who is no member of the space.
    Outsider,
    /// A member, with their role.
    Member(Role),
}

impl Standing {
    /// From whether a person calls and their role in the space, if any.
    pub fn of(signed_in: bool, role: Option<Role>) -> Standing {
        match (signed_in, role) {
            (_, Some(role)) => Standing::Member(role),
            (true, None) => Standing::Outsider,
            (false, None) => Standing::SignedOut,
        }
    }
}

/// What a caller wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Act {
    /// Read an app's data, pages and files (`graph_query`, a query command,
    /// the web).
    Read,
    /// Write an app's data (`graph_apply`, an apply command, the page api).
    Write,
    /// Read an app's own files, its inside too (`app_files`).
    ReadFiles,
    /// Deploy an app of the space, or draft its files.
    Deploy,
    /// Deploy asking for an access; `changes` when it is not the one the
    /// app has (a new app has none to change).
    SetAccess {
        /// The access asked differs from the app's own; `false` when it is
        /// the same, or when the app is new.
        changes: bool,
    },
    /// Make a person a member of the space.
    Invite,
    /// Take a member out of the space.
    RemoveMember,
    /// See an app's versions: who deployed each, when, its commands.
    SeeVersions,
    /// Deploy an earlier version's files again.
    Rollback,
    /// Put an app in the trash, or take it out.
    Trash,
    /// Delete an app in the trash, with its data, for good.
    Purge,
    /// Undo one write to an app's data (`shed undo`, the Undo button): the
    /// owners and editors of its space, whatever its access — an open app
    /// lets anyone write, not anyone take back another's write.
    Undo,
    /// Say whether writes by agents to an app need its person's approval:
    /// the space's owners, as they say who may read it.
    SetAgentApproval,
}

/// One cell of the table: allowed, or why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The caller may do it.
    Allow,
    /// Nobody is calling and a person is needed.
    SignIn,
    /// The app is private and the caller is outside its space: it is not
    /// confirmed to exist.
    Hidden,
    /// A viewer asked to change something.
    Viewer,
    /// Somebody outside the space wrote to a public app.
    PublicMembersWrite,
    /// Somebody outside the space deployed into it.
    NotYourSpace,
    /// An editor asked to change who may read an app.
    OwnerSetsAccess,
    /// An editor asked to change whether agents' writes need approval.
    OwnerSetsApproval,
    /// Somebody but an owner asked to invite.
    OwnerInvites,
    /// Somebody but an owner asked to take a member out.
    OwnerRemoves,
    /// Somebody but an owner asked to purge an app.
    OwnerPurges,
}

/// The table: what `standing` may do with `act` on an app of `access`.
/// (`access` matters only for reading and writing data.)
pub fn verdict(access: Access, standing: Standing, act: Act) -> Verdict {
    use Standing::{Member, Outsider, SignedOut};
    let editor = |role: Role| matches!(role, Role::Owner | Role::Editor);
    match (act, standing) {
        (Act::Read, _) if access != Access::Private => Verdict::Allow,
        (Act::Read | Act::ReadFiles | Act::SeeVersions, Member(_)) => Verdict::Allow,
        (_, SignedOut) => Verdict::SignIn,
        (Act::Read | Act::ReadFiles | Act::SeeVersions, Outsider) => Verdict::Hidden,
        (Act::Undo, Outsider) if access == Access::Private => Verdict::Hidden,
        (Act::Write, _) if access == Access::Open => Verdict::Allow,
        (Act::Write, Outsider) if access == Access::Private => Verdict::Hidden,
        (Act::Write, Outsider) => Verdict::PublicMembersWrite,
        (Act::Write | Act::Deploy | Act::Rollback | Act::Trash | Act::Undo, Member(role))
            if editor(role) =>
        {
            Verdict::Allow
        }
        (Act::SetAccess { changes: false }, Member(role)) if editor(role) => Verdict::Allow,
        (Act::SetAccess { changes: true } | Act::SetAgentApproval, Member(Role::Owner)) => {
            Verdict::Allow
        }
        (Act::SetAccess { .. }, Member(Role::Editor)) => Verdict::OwnerSetsAccess,
        (Act::SetAgentApproval, Member(Role::Editor)) => Verdict::OwnerSetsApproval,
        (
            Act::Write
            | Act::Deploy
            | Act::Rollback
            | Act::Trash
            | Act::SetAccess { .. }
            | Act::SetAgentApproval
            | Act::Undo,
            Member(_),
        ) => Verdict::Viewer,
        (
            Act::Deploy
            | Act::Rollback
            | Act::Trash
            | Act::Purge
            | Act::SetAccess { .. }
            | Act::SetAgentApproval
            | Act::Undo,
            Outsider,
        ) => Verdict::NotYourSpace,
        (Act::Purge, Member(Role::Owner)) => Verdict::Allow,
        (Act::Purge, Member(_)) => Verdict::OwnerPurges,
        (Act::Invite, Member(Role::Owner)) => Verdict::Allow,
        (Act::Invite, _) => Verdict::OwnerInvites,
        (Act::RemoveMember, Member(Role::Owner)) => Verdict::Allow,
        (Act::RemoveMember, _) => Verdict::OwnerRemoves,
    }
}

/// The app (or space) a decision is about, for its sentence.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// `space/slug` (the space alone for a space act).
    pub name: &'a str,
    /// The space the app is in (or the space itself): whose members the
    /// sentence names as the ones who may.
    pub space: &'a str,
    /// The app's access; `Private` for a space act or an app not made yet.
    pub access: Access,
}

impl<'a> Subject<'a> {
    /// A space, for a space act (deploy into it, invite to it).
    pub fn space(space: &'a str) -> Subject<'a> {
        Subject {
            name: space,
            space,
            access: Access::Private,
        }
    }
}

/// The one function that answers "may they?": `Ok` or the sentence.
pub fn may(subject: Subject<'_>, standing: Standing, act: Act) -> Result<(), HostError> {
    let Subject {
        name,
        space,
        access,
    } = subject;
    match verdict(access, standing, act) {
        Verdict::Allow => Ok(()),
        Verdict::SignIn => Err(sign_in_first()),
        Verdict::Hidden => Err(HostError::NotFound(format!("no app {name}"))),
        Verdict::Viewer => Err(HostError::Refused(VIEWER_SENTENCE.to_string())),
        Verdict::PublicMembersWrite => Err(HostError::Refused(format!(
            "{name} is public: anyone reads it, and only the owners and editors of {space} \
             change it — an owner of {space} can add you"
        ))),
        // What to do next depends on the door (`Suggest::deploy_into`).
        Verdict::NotYourSpace => Err(HostError::NotFound(format!(
            "{space} is not a space you own or edit"
        ))),
        Verdict::OwnerSetsAccess => Err(HostError::Refused(format!(
            "only an owner of {space} changes who may read {name} (it is {}) — deploy without an \
             access to keep it {}, or ask an owner of {space}",
            access.as_str(),
            access.as_str()
        ))),
        Verdict::OwnerSetsApproval => Err(HostError::Refused(format!(
            "only an owner of {space} says whether writes by agents to {name} need approval — \
             ask an owner of {space}"
        ))),
        Verdict::OwnerInvites => Err(HostError::Refused(format!(
            "only an owner of {} invites people to it",
            crate::names::shown(space)
        ))),
        Verdict::OwnerRemoves => Err(HostError::Refused(format!(
            "only an owner of {} takes people out of it",
            crate::names::shown(space)
        ))),
        Verdict::OwnerPurges => Err(HostError::Refused(format!(
            "only an owner of {space} purges its apps — {} may restore {name} from the trash",
            who_may(Act::Trash, space)
        ))),
    }
}

/// Who in a space the table lets do `act` to its apps: `an owner or an
/// editor of jeff`.
fn who_may(act: Act, space: &str) -> String {
    let roles: Vec<&str> = [Role::Owner, Role::Editor, Role::Viewer]
        .into_iter()
        .filter(|role| verdict(Access::Private, Standing::Member(*role), act) == Verdict::Allow)
        .map(Role::with_article)
        .collect();
    format!("{} of {space}", roles.join(" or "))
}

/// Whether an app can be reached at all: not while it is in the trash. To
/// somebody the table would not let read it, the refusal they would have
/// read (so nobody learns a private app exists); to anyone else, the
/// sentence saying it is in the trash and who may restore it — and, for a
/// caller who may restore it, how (`restore`, as their door does it).
pub fn reachable(
    subject: Subject<'_>,
    standing: Standing,
    trashed: bool,
    restore: Option<&str>,
) -> Result<(), HostError> {
    if !trashed {
        return Ok(());
    }
    may(subject, standing, Act::Read)?;
    let Subject { name, space, .. } = subject;
    let how = restore
        .filter(|_| may(subject, standing, Act::Trash).is_ok())
        .map_or_else(String::new, |how| format!(" ({how})"));
    Err(HostError::Refused(format!(
        "{name} is in the trash — {} can restore it{how}",
        who_may(Act::Trash, space)
    )))
}

/// The sentence refusing a deploy (or a draft) to the name of an app in the
/// trash: its name is not free until it is purged. `restore` and `purge`
/// say how, as the caller's door does it.
pub fn name_in_the_trash(subject: Subject<'_>, restore: &str, purge: &str) -> HostError {
    let Subject { name, space, .. } = subject;
    HostError::Refused(format!(
        "{name} is in the trash, and its name stays taken until it is purged — {} can restore \
         it ({restore}), and an owner of {space} can purge it ({purge}) to use the name again",
        who_may(Act::Trash, space)
    ))
}

/// Whether a call must wait for its person's approval: an `agent` (any
/// MCP client, or a job) asks to write (`writes`), and the command says
/// `confirm` or the app's owner said that writes by agents need approval
/// (`app_says`). The person's own writes never wait.
pub fn needs_approval(agent: bool, writes: bool, confirm: bool, app_says: bool) -> bool {
    agent && writes && (confirm || app_says)
}

/// Whether the person `deciding` (eid) may approve or deny approval `id`,
/// asked for `person` (eid): only they may; to anybody else it is what an
/// approval nobody asked for is.
pub fn may_decide_approval(deciding: &str, person: &str, id: i64) -> Result<(), HostError> {
    if deciding == person {
        Ok(())
    } else {
        Err(no_approval(id))
    }
}

/// "no approval 17 …": for an approval that does not exist, or is not the
/// caller's.
pub fn no_approval(id: i64) -> HostError {
    HostError::NotFound(format!(
        "no approval {id} of yours — your approvals are listed at /approvals"
    ))
}

/// Where whoever runs `shed` on the data folder stands: an owner of every space.
pub const OPERATOR: Standing = Standing::Member(Role::Owner);

/// Whether a member of `role` is the last owner of a space whose members
/// have `roles` (theirs among them).
fn last_owner(role: Role, roles: &[Role]) -> bool {
    role == Role::Owner && roles.iter().filter(|r| **r == Role::Owner).count() <= 1
}

/// The sentence refusing to take `handle` out of the spaces they are the
/// last owner of.
pub fn last_owner_stays(handle: &str, spaces: &str, example_space: &str) -> HostError {
    HostError::Refused(format!(
        "the last owner of {spaces} is @{handle}, and a space keeps at least one — make another \
         owner first (`shed member add {example_space} <handle> --role owner`)"
    ))
}

/// The sentence refusing to take `handle` out of `space`, or to make them
/// less than an owner of it, while they are its last owner.
pub fn last_owner_of_space(handle: &str, space: &str) -> HostError {
    let space = crate::names::shown(space);
    last_owner_stays(handle, &space, &space)
}

/// Whether `standing` may take `handle`, who is `role` of `space`, out of
/// it, when its members have `roles`: the table's [`Act::RemoveMember`],
/// and never the last owner.
pub fn may_remove_member(
    space: &str,
    standing: Standing,
    handle: &str,
    role: Role,
    roles: &[Role],
) -> Result<(), HostError> {
    may(Subject::space(space), standing, Act::RemoveMember)?;
    if last_owner(role, roles) {
        return Err(last_owner_of_space(handle, space));
    }
    Ok(())
}

/// Where an agent's job stands at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Neither ended nor past its expiry: its agent may run what its scope
    /// admits.
    Running,
    /// Ended before its time (`shed job end`, or by its person on their
    /// page), whether or not it had expired too.
    Ended,
    /// Not ended, but its expiry has passed.
    Expired,
}

impl JobState {
    /// `running`, `ended`, `expired`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Ended => "ended",
            JobState::Expired => "expired",
        }
    }
}

/// What a job's agent asks to run, as the job table reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JobRun {
    /// The job's scope admits the command (its globs name it, for its effect).
    pub in_scope: bool,
    /// The command changes data.
    pub writes: bool,
    /// The run asks for `--read-only`.
    pub read_only: bool,
    /// The job's read-only grant names the command.
    pub granted_read_only: bool,
}

/// One cell of the job table: allowed, or why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobVerdict {
    /// The job's agent may run it (or, asked of no command, may run
    /// something).
    Allow,
    /// The job was ended: its agent runs nothing more.
    Ended,
    /// The job's time ran out.
    Expired,
    /// The job's scope does not admit the command.
    OutsideScope,
    /// A `--read-only` run of a command that changes data.
    ReadOnlyRunsReads,
    /// A `--read-only` run of a read the grant does not name.
    NoReadOnlyGrant,
}

/// The job table: whether a job in `state` lets its agent run `run` (`None`:
/// whether it lets its agent do anything, as its listing asks).
pub fn job_verdict(state: JobState, run: Option<JobRun>) -> JobVerdict {
    match (state, run) {
        (JobState::Ended, _) => JobVerdict::Ended,
        (JobState::Expired, _) => JobVerdict::Expired,
        (JobState::Running, None) => JobVerdict::Allow,
        (JobState::Running, Some(run)) if !run.in_scope => JobVerdict::OutsideScope,
        (JobState::Running, Some(run)) if run.read_only && run.writes => {
            JobVerdict::ReadOnlyRunsReads
        }
        (JobState::Running, Some(run)) if run.read_only && !run.granted_read_only => {
            JobVerdict::NoReadOnlyGrant
        }
        (JobState::Running, Some(_)) => JobVerdict::Allow,
    }
}

/// Whether the table lets anyone, signed out too, read an app's data.
pub fn public(access: Access) -> bool {
    verdict(access, Standing::SignedOut, Act::Read) == Verdict::Allow
}

/// Who may read an app's data, as a label's readers: `public` when anyone
/// may, else its space.
pub fn readers_of(access: Access, space: &str) -> Vec<String> {
    if public(access) {
        vec!["public".to_string()]
    } else {
        vec![format!("space:{space}")]
    }
}

/// Whether an app's data may be trusted: not when the table lets somebody
/// outside its space write it.
pub fn trusted(access: Access) -> bool {
    verdict(access, Standing::Outsider, Act::Write) != Verdict::Allow
}

#[cfg(test)]
mod tests {
    use super::*;

    const STANDINGS: [Standing; 5] = [
        Standing::SignedOut,
        Standing::Outsider,
        Standing::Member(Role::Viewer),
        Standing::Member(Role::Editor),
        Standing::Member(Role::Owner),
    ];

    /// The whole table, a row per act and access, a column per standing
    /// (signed out, outsider, viewer, editor, owner): what each may do.
    const TABLE: &[(Act, Access, [&str; 5])] = {
        use Access::{Open, Private, Public};
        const ALL: [&str; 5] = ["ok", "ok", "ok", "ok", "ok"];
        const MEMBERS: [&str; 5] = ["sign-in", "hidden", "ok", "ok", "ok"];
        const EDITORS: [&str; 5] = ["sign-in", "not-your-space", "viewer", "ok", "ok"];
        const OWNERS: [&str; 5] = [
            "sign-in",
            "not-your-space",
            "viewer",
            "owner-sets-access",
            "ok",
        ];
        const APPROVAL: [&str; 5] = [
            "sign-in",
            "not-your-space",
            "viewer",
            "owner-sets-approval",
            "ok",
        ];
        const INVITE: [&str; 5] = [
            "sign-in",
            "owner-invites",
            "owner-invites",
            "owner-invites",
            "ok",
        ];
        const REMOVE: [&str; 5] = [
            "sign-in",
            "owner-removes",
            "owner-removes",
            "owner-removes",
            "ok",
        ];
        const PURGE: [&str; 5] = [
            "sign-in",
            "not-your-space",
            "owner-purges",
            "owner-purges",
            "ok",
        ];
        &[
            (Act::Read, Private, MEMBERS),
            (Act::Read, Public, ALL),
            (Act::Read, Open, ALL),
            (
                Act::Write,
                Private,
                ["sign-in", "hidden", "viewer", "ok", "ok"],
            ),
            (
                Act::Write,
                Public,
                ["sign-in", "public-members-write", "viewer", "ok", "ok"],
            ),
            (Act::Write, Open, ["sign-in", "ok", "ok", "ok", "ok"]),
            (Act::ReadFiles, Private, MEMBERS),
            (Act::ReadFiles, Public, MEMBERS),
            (Act::ReadFiles, Open, MEMBERS),
            (Act::Deploy, Private, EDITORS),
            (Act::Deploy, Public, EDITORS),
            (Act::Deploy, Open, EDITORS),
            (Act::SetAccess { changes: false }, Private, EDITORS),
            (Act::SetAccess { changes: false }, Public, EDITORS),
            (Act::SetAccess { changes: false }, Open, EDITORS),
            (Act::SetAccess { changes: true }, Private, OWNERS),
            (Act::SetAccess { changes: true }, Public, OWNERS),
            (Act::SetAccess { changes: true }, Open, OWNERS),
            (Act::Invite, Private, INVITE),
            (Act::Invite, Public, INVITE),
            (Act::Invite, Open, INVITE),
            (Act::RemoveMember, Private, REMOVE),
            (Act::RemoveMember, Public, REMOVE),
            (Act::RemoveMember, Open, REMOVE),
            (Act::SeeVersions, Private, MEMBERS),
            (Act::SeeVersions, Public, MEMBERS),
            (Act::SeeVersions, Open, MEMBERS),
            (Act::Rollback, Private, EDITORS),
            (Act::Rollback, Public, EDITORS),
            (Act::Rollback, Open, EDITORS),
            (Act::Trash, Private, EDITORS),
            (Act::Trash, Public, EDITORS),
            (Act::Trash, Open, EDITORS),
            (Act::Purge, Private, PURGE),
            (Act::Purge, Public, PURGE),
            (Act::Purge, Open, PURGE),
            (
                Act::Undo,
                Private,
                ["sign-in", "hidden", "viewer", "ok", "ok"],
            ),
            (Act::Undo, Public, EDITORS),
            (Act::Undo, Open, EDITORS),
            (Act::SetAgentApproval, Private, APPROVAL),
            (Act::SetAgentApproval, Public, APPROVAL),
            (Act::SetAgentApproval, Open, APPROVAL),
        ]
    };

    /// Each verdict's kind of refusal and sentence, for jeff/runs of `access`.
    fn said(verdict: &str, access: Access) -> Option<(&'static str, String)> {
        let sentence = match verdict {
            "ok" => return None,
            "sign-in" => ("sign-in", format!("sign in first — {SIGN_IN_HOW}")),
            "hidden" => ("not-found", "no app jeff/runs".to_string()),
            "viewer" => ("refused", VIEWER_SENTENCE.to_string()),
            "public-members-write" => (
                "refused",
                "jeff/runs is public: anyone reads it, and only the owners and editors of jeff \
                 change it — an owner of jeff can add you"
                    .to_string(),
            ),
            "not-your-space" => (
                "not-found",
                "jeff is not a space you own or edit".to_string(),
            ),
            "owner-sets-access" => (
                "refused",
                format!(
                    "only an owner of jeff changes who may read jeff/runs (it is {0}) — deploy \
                     without an access to keep it {0}, or ask an owner of jeff",
                    access.as_str()
                ),
            ),
            "owner-sets-approval" => (
                "refused",
                "only an owner of jeff says whether writes by agents to jeff/runs need approval \
                 — ask an owner of jeff"
                    .to_string(),
            ),
            "owner-invites" => (
                "refused",
                "only an owner of jeff invites people to it".to_string(),
            ),
            "owner-removes" => (
                "refused",
                "only an owner of jeff takes people out of it".to_string(),
            ),
            "owner-purges" => (
                "refused",
                "only an owner of jeff purges its apps — an owner or an editor of jeff may \
                 restore jeff/runs from the trash"
                    .to_string(),
            ),
            other => panic!("no verdict {other}"),
        };
        Some(sentence)
    }

    fn kind(error: &HostError) -> &'static str {
        match error {
            HostError::SignIn(_) => "sign-in",
            HostError::NotFound(_) => "not-found",
            HostError::Refused(_) => "refused",
            _ => "other",
        }
    }

    #[test]
    fn every_cell_of_the_table_with_its_sentence() {
        let mut cells = 0;
        for (act, access, row) in TABLE {
            for (standing, expected) in STANDINGS.iter().zip(row) {
                let subject = Subject {
                    name: "jeff/runs",
                    space: "jeff",
                    access: *access,
                };
                let answer = may(subject, *standing, *act);
                let got = answer.as_ref().err().map(|e| (kind(e), e.to_string()));
                assert_eq!(
                    got,
                    said(expected, *access),
                    "{act:?} on {access:?} as {standing:?}"
                );
                cells += 1;
            }
        }
        // Every act the rule book knows, on every access, for every standing.
        assert_eq!(cells, 14 * 3 * 5);
    }

    #[test]
    fn an_app_in_the_trash_is_out_of_reach_and_says_who_restores_it() {
        let subject = |access| Subject {
            name: "jeff/runs",
            space: "jeff",
            access,
        };
        let viewer = Standing::Member(Role::Viewer);
        let restore = Some("`shed app restore jeff/runs --as ada`");
        assert!(reachable(subject(Access::Private), viewer, false, restore).is_ok());
        let trashed = reachable(subject(Access::Private), viewer, true, restore).unwrap_err();
        assert_eq!(kind(&trashed), "refused");
        // A viewer, who may not restore it, is told who may; an editor how.
        assert_eq!(
            trashed.to_string(),
            "jeff/runs is in the trash — an owner or an editor of jeff can restore it"
        );
        let editor = Standing::Member(Role::Editor);
        let trashed = reachable(subject(Access::Private), editor, true, restore).unwrap_err();
        assert_eq!(
            trashed.to_string(),
            "jeff/runs is in the trash — an owner or an editor of jeff can restore it \
             (`shed app restore jeff/runs --as ada`)"
        );
        // Nobody learns from the trash that a private app exists.
        let outsider =
            reachable(subject(Access::Private), Standing::Outsider, true, restore).unwrap_err();
        assert_eq!(outsider.to_string(), "no app jeff/runs");
        let signed_out = reachable(subject(Access::Private), Standing::SignedOut, true, None);
        assert_eq!(kind(&signed_out.unwrap_err()), "sign-in");
        // A public app was anyone's to read: anyone is told it is in the trash.
        let public =
            reachable(subject(Access::Public), Standing::SignedOut, true, None).unwrap_err();
        assert_eq!(
            public.to_string(),
            "jeff/runs is in the trash — an owner or an editor of jeff can restore it"
        );
        // The whole sentence, one space between its words.
        let restore = "`shed app restore jeff/runs`";
        let purge = "`shed app purge jeff/runs --confirm jeff/runs`";
        assert_eq!(
            name_in_the_trash(subject(Access::Private), restore, purge).to_string(),
            "jeff/runs is in the trash, and its name stays taken until it is purged — an owner \
             or an editor of jeff can restore it (`shed app restore jeff/runs`), and an owner of \
             jeff can purge it (`shed app purge jeff/runs --confirm jeff/runs`) to use the name \
             again"
        );
    }

    #[test]
    fn the_last_owner_stays_whoever_asks() {
        use Role::{Editor, Owner, Viewer};
        let last =
            may_remove_member("jeff", OPERATOR, "jeff", Owner, &[Owner, Viewer]).unwrap_err();
        assert_eq!(
            last.to_string(),
            "the last owner of jeff is @jeff, and a space keeps at least one — make another \
             owner first (`shed member add jeff <handle> --role owner`)"
        );
        assert!(may_remove_member("jeff", OPERATOR, "ada", Owner, &[Owner, Owner]).is_ok());
        assert!(may_remove_member("jeff", OPERATOR, "ada", Viewer, &[Owner, Viewer]).is_ok());
        let editor = Standing::Member(Editor);
        assert!(may_remove_member("jeff", editor, "ada", Viewer, &[Owner, Viewer]).is_err());
    }

    #[test]
    fn the_labels_follow_the_table() {
        assert_eq!(readers_of(Access::Private, "jeff"), ["space:jeff"]);
        assert_eq!(readers_of(Access::Public, "jeff"), ["public"]);
        assert_eq!(readers_of(Access::Open, "jeff"), ["public"]);
        assert!(trusted(Access::Private) && trusted(Access::Public) && !trusted(Access::Open));
    }

    #[test]
    fn every_cell_of_the_job_table() {
        use JobVerdict::*;
        let run = |in_scope, writes, read_only, granted_read_only| JobRun {
            in_scope,
            writes,
            read_only,
            granted_read_only,
        };
        // (in scope, writes, --read-only, granted) → the running job's verdict.
        let running = [
            (run(false, false, false, false), OutsideScope),
            (run(false, true, true, true), OutsideScope),
            (run(true, false, false, false), Allow),
            (run(true, true, false, false), Allow),
            (run(true, false, true, true), Allow),
            (run(true, false, true, false), NoReadOnlyGrant),
            (run(true, true, true, false), ReadOnlyRunsReads),
            (run(true, true, true, true), ReadOnlyRunsReads),
        ];
        assert_eq!(job_verdict(JobState::Running, None), Allow);
        for (asked, wanted) in running {
            assert_eq!(
                job_verdict(JobState::Running, Some(asked)),
                wanted,
                "{asked:?}"
            );
            assert_eq!(
                job_verdict(JobState::Ended, Some(asked)),
                Ended,
                "{asked:?}"
            );
            assert_eq!(
                job_verdict(JobState::Expired, Some(asked)),
                Expired,
                "{asked:?}"
            );
        }
        assert_eq!(job_verdict(JobState::Ended, None), Ended);
        assert_eq!(job_verdict(JobState::Expired, None), Expired);
    }
}
