//! The words the agents' command layer shares between listing commands
//! (`rows`), the built-ins (`builtins`) and running a call (`run`): a
//! command's row, its effect and scope, a command's name, and the call an
//! agent makes with where it comes from.

use serde::Serialize;
use serde_json::{Map, Value};

/// What running a command does to the person's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// A query act; changes nothing.
    Read,
    /// An apply act, or a built-in that changes the platform.
    Write,
}

impl Effect {
    /// `read` or `write`: the word a command's row says.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
        }
    }
}

/// What a built-in acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Nothing the call names: the caller's own things.
    Global,
    /// The app the call names with `--loom <space/app>`.
    Loom,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Loom => "loom",
        }
    }
}

/// One command as the protocol lists it.
#[derive(Clone, Debug)]
pub struct CommandRow {
    /// `demo/runs.log_run`, `graph.query`.
    pub(crate) name: String,
    /// Whether running it reads or changes data: what a job's scope and
    /// its read-only grant are checked against.
    pub(crate) effect: Effect,
    /// The inputs the host fills with a job's person, whatever the call
    /// says: a built-in's own (`apps.list`'s `person`); an app's command
    /// has none.
    pub(crate) job_person: &'static [&'static str],
    /// The row as listed (name, title, description, inputSchema, outputs,
    /// effect, scope, and a built-in's declarations); a job's listing adds
    /// its `readOnlyGranted` stamp.
    pub row: Map<String, Value>,
}

/// A row written as a JSON object, as a map (empty for any other value).
pub(super) fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `demo/runs.log_run` → (`demo/runs`, `log_run`); `None` for a built-in's
/// name (no `/`) or a name of no such shape.
pub(crate) fn split_app_command(name: &str) -> Option<(&str, &str)> {
    let slash = name.find('/')?;
    let dot = name.get(slash..)?.find('.')? + slash;
    Some((name.get(..dot)?, name.get(dot + 1..)?))
}

/// Where a call comes from, as the command layer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A session's agent; every call the broker stamps.
    Session,
    /// A piece's verb, called through the piece (a page) that holds it.
    Pattern,
}

impl Origin {
    /// `session` or `pattern`: the word a built-in's declarations name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Origin::Session => "session",
            Origin::Pattern => "pattern",
        }
    }
}

/// One call to run.
#[derive(Clone, Debug)]
pub struct AgentCall {
    /// `demo/runs.log_run` or a built-in's name.
    pub name: String,
    /// The command's arguments, an object.
    pub args: Value,
    /// The app a built-in of scope loom acts on (`--loom`); for an app
    /// command, when given, it must name the command's own app.
    pub loom: Option<String>,
    /// Refuse unless the app's data version is this (`--expect`).
    pub expect: Option<u64>,
    /// Where the call comes from: a built-in may refuse one origin
    /// (`app.files` from a session) or run only from another (a piece's
    /// verb, through its piece). A job's calls are always `Session`.
    pub origin: Origin,
    /// The commands the person consented to for this call (a row's `grant`).
    pub consented: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_command_name_splits_at_the_first_dot_after_the_app() {
        assert_eq!(
            split_app_command("demo/runs.log_run"),
            Some(("demo/runs", "log_run"))
        );
        assert_eq!(split_app_command("graph.query"), None);
        assert_eq!(split_app_command("demo/runs"), None);
        assert_eq!(split_app_command("a.b/c.d"), Some(("a.b/c", "d")));
    }

    proptest::proptest! {
        #[test]
        fn splitting_any_name_never_panics(name in ".{0,40}") {
            let _ = split_app_command(&name);
        }
    }
}
