//! Who is calling, and the words for roles and access levels.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

pub use shed_store::Person;
use shed_store::lifecycle::Generation;
use shed_store::platform::Membership;

pub use crate::suggest::Door;
use crate::texts::is_plain;

/// The most characters of the name a client gives itself that its writes
/// keep (an OAuth client's registered name has the same bound).
const MOST_CLAIMED_CHARS: usize = 100;

/// An agent's door, for [`Caller::door`].
static AGENT_DOOR: Door = Door::Agent;

/// The one calling the host: nobody (signed out), a person, or an agent acting
/// for a person. An agent never has more than its person.
#[derive(Clone, Debug)]
pub enum Caller {
    /// Signed out.
    Nobody,
    /// A person, with the id of the bearer token used, and the door they
    /// came in by (what a suggestion must suit).
    Person {
        /// Who is calling: what they reach is their spaces and roles.
        person: Person,
        /// The store's id of the bearer token the call carried (pasted, or
        /// an OAuth access token): the tool list is remembered per token.
        /// `None` when no token was used — a web session, a view key,
        /// `shed mcp --as`, or a command at the server's terminal.
        token: Option<i64>,
        /// How they came in, so a sentence suggests what they can do there.
        door: Door,
        /// The client they call through, as their writes' activity names
        /// it: an OAuth client's registered name, or the name an MCP
        /// client's `initialize` gave, marked `(claimed)`; `None` where
        /// nothing names one (a browser, a terminal).
        client: Option<String>,
        /// The person's spaces and the registry's generation as the
        /// token's own read found them, for the request's first look at
        /// its reach; empty where nothing came with the credential.
        read_with_credential: ReadWithCredential,
    },
    /// An agent acting for the person, as `agent:<job>`.
    Agent {
        /// The person the job was made for: the agent reaches what they
        /// reach, held to the job's scope, and writes in their name.
        person: Person,
        /// The job's public name (`job-3`), never its secret: its writes
        /// are stamped `agent:job-3`.
        job: String,
    },
}

/// A caller's spaces and roles and the registry's generation, read in the
/// same statement as their token: the request's first look at its reach
/// takes them (one trip to the database fewer on every call); any later
/// look reads afresh, so what the request itself changed is seen.
#[derive(Clone, Debug, Default)]
pub struct ReadWithCredential(Arc<Mutex<Option<Reached>>>);

/// A person's spaces and roles, and the registry's generation as of the
/// same read.
type Reached = (Vec<Membership>, Generation);

impl ReadWithCredential {
    /// What a token's read found, for the first look to take.
    pub(crate) fn of(memberships: Vec<Membership>, generation: Generation) -> Self {
        ReadWithCredential(Arc::new(Mutex::new(Some((memberships, generation)))))
    }

    /// What was read with the credential, once: `None` after the first
    /// take, or when nothing was.
    pub(crate) fn take(&self) -> Option<Reached> {
        self.0.lock().ok()?.take()
    }
}

impl Caller {
    /// A person signed in by `door`, with the token used (`None` where
    /// none was), nothing read with it beforehand.
    pub fn signed_in(person: Person, token: Option<i64>, door: Door) -> Caller {
        Caller::Person {
            person,
            token,
            door,
            client: None,
            read_with_credential: ReadWithCredential::default(),
        }
    }

    /// What the credential's read found of the caller's reach, taken by
    /// the request's first look at it (`None` after, and for a caller whose
    /// credential brought none).
    pub(crate) fn take_read_with_credential(&self) -> Option<Reached> {
        match self {
            Caller::Person {
                read_with_credential,
                ..
            } => read_with_credential.take(),
            _ => None,
        }
    }

    /// The person behind the call, if any.
    pub fn person(&self) -> Option<&Person> {
        match self {
            Caller::Nobody => None,
            Caller::Person { person, .. } | Caller::Agent { person, .. } => Some(person),
        }
    }

    /// The door the caller came in by; none for nobody.
    pub fn door(&self) -> Option<&Door> {
        match self {
            Caller::Nobody => None,
            Caller::Person { door, .. } => Some(door),
            Caller::Agent { .. } => Some(&AGENT_DOOR),
        }
    }

    /// Whether the caller is an agent acting for its person: an MCP client
    /// (an OAuth client, a pasted token, `shed mcp --as`) or a job through
    /// the broker — whose writes may wait for the person's approval.
    pub fn is_agent(&self) -> bool {
        matches!(self, Caller::Agent { .. }) || matches!(self.door(), Some(Door::Mcp))
    }

    /// Who is asking, as approvals are counted per agent: `job:job-3`,
    /// `token:12`, `client:<name>`, or `person:<eid>` over stdio; none for
    /// nobody.
    pub(crate) fn asker(&self) -> Option<String> {
        match self {
            Caller::Nobody => None,
            Caller::Agent { job, .. } => Some(format!("job:{job}")),
            Caller::Person {
                token: Some(id), ..
            } => Some(format!("token:{id}")),
            Caller::Person {
                client: Some(client),
                ..
            } => Some(format!("client:{client}")),
            Caller::Person { person, .. } => Some(format!("person:{}", person.eid)),
        }
    }

    /// The store's actor for a write through `command` (an app's command,
    /// a tool, the page api's `apply`): the person, the agent where one
    /// acts, and the door and client it came through.
    pub(crate) fn actor(&self, command: &str) -> Option<shed_store::Actor> {
        let (person, via, client) = match self {
            Caller::Nobody => return None,
            Caller::Person { person, client, .. } => (person, None, client.clone()),
            Caller::Agent { person, job } => {
                (person, Some(format!("agent:{job}")), Some(job.clone()))
            }
        };
        Some(shed_store::Actor {
            person: person.eid.clone(),
            via,
            through: Some(shed_store::Through {
                door: self.door().map_or("store", Door::word).to_string(),
                command: Some(command.to_string()),
                client,
            }),
        })
    }

    /// The caller with `client` as the client it calls through, unless
    /// its credential named one already (an OAuth grant's client). The
    /// name is the client's own word, so it is kept plain ([`is_plain`]:
    /// what is not is left out) and cut to [`MOST_CLAIMED_CHARS`], as a
    /// registered client's name is bounded; a name with nothing plain in
    /// it names no client.
    pub fn with_claimed_client(mut self, claimed: Option<&str>) -> Caller {
        let plain = claimed.map(|name| {
            let kept: String = name.chars().filter(|c| is_plain(*c)).collect();
            kept.trim()
                .chars()
                .take(MOST_CLAIMED_CHARS)
                .collect::<String>()
        });
        if let (Caller::Person { client, .. }, Some(name)) = (&mut self, plain)
            && client.is_none()
            && !name.is_empty()
        {
            *client = Some(format!("{name} (claimed)"));
        }
        self
    }

    /// The key a tool-list fingerprint is remembered under: the token, or the
    /// person (stdio), or the agent's job.
    pub(crate) fn listing_key(&self) -> Option<String> {
        match self {
            Caller::Nobody => None,
            Caller::Person {
                token: Some(id), ..
            } => Some(format!("token:{id}")),
            Caller::Person {
                person,
                token: None,
                ..
            } => Some(format!("person:{}", person.eid)),
            Caller::Agent { job, .. } => Some(format!("agent:{job}")),
        }
    }
}

/// A member's role in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Does what an editor does, and also invites and removes members,
    /// changes an app's access, and purges apps from the trash.
    Owner,
    /// Reads the space's apps and writes their data, deploys them, rolls
    /// them back, and puts them in the trash and takes them out.
    Editor,
    /// Reads the space's apps, their files and versions; writes data only
    /// where anyone may (an `open` app), and deploys nothing.
    Viewer,
}

impl Role {
    /// Every role, the most trusted first, as a form offers them.
    pub const ALL: [Role; 3] = [Role::Owner, Role::Editor, Role::Viewer];

    /// The word stored and shown: `owner`, `editor`, `viewer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Editor => "editor",
            Role::Viewer => "viewer",
        }
    }

    /// `an owner`, `an editor`, `a viewer`.
    pub fn with_article(self) -> &'static str {
        match self {
            Role::Owner => "an owner",
            Role::Editor => "an editor",
            Role::Viewer => "a viewer",
        }
    }
}

/// The word was not one of the roles.
#[derive(Debug, thiserror::Error)]
#[error("{0} is not a role — say owner, editor or viewer")]
pub struct NotARole(String);

impl FromStr for Role {
    type Err = NotARole;
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        match word {
            "owner" => Ok(Role::Owner),
            "editor" => Ok(Role::Editor),
            "viewer" => Ok(Role::Viewer),
            other => Err(NotARole(other.to_string())),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who reads and who writes an app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Access {
    /// Members read; owners and editors write. The default.
    #[default]
    Private,
    /// Anyone reads; owners and editors write.
    Public,
    /// Anyone who can reach it writes.
    Open,
}

impl Access {
    /// The word stored and shown: `private`, `public`, `open`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Private => "private",
            Access::Public => "public",
            Access::Open => "open",
        }
    }
}

/// The word was not one of the access levels.
#[derive(Debug, thiserror::Error)]
#[error("{0} is not an access level — say private, public or open")]
pub struct NotAnAccess(String);

impl FromStr for Access {
    type Err = NotAnAccess;
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        match word {
            "private" => Ok(Access::Private),
            "public" => Ok(Access::Public),
            "open" => Ok(Access::Open),
            other => Err(NotAnAccess(other.to_string())),
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(name: &str) -> Option<String> {
        let ada = Person {
            eid: "p-ada".into(),
            handle: "ada".into(),
            name: "Ada".into(),
        };
        match Caller::signed_in(ada, None, Door::Mcp).with_claimed_client(Some(name)) {
            Caller::Person { client, .. } => client,
            _ => None,
        }
    }

    // A client's own name reaches a page or a terminal: its controls and
    // reordering characters are left out, its length bounded.
    #[test]
    fn a_claimed_name_is_kept_plain_and_bounded() {
        assert_eq!(
            claimed("Evil\u{1b}[31m\u{202e}Red\n").as_deref(),
            Some("Evil[31mRed (claimed)")
        );
        let long = claimed(&"a".repeat(300)).unwrap();
        assert_eq!(
            long,
            format!("{} (claimed)", "a".repeat(MOST_CLAIMED_CHARS))
        );
        assert_eq!(claimed("\u{1b}\u{2066} "), None);
    }
}
