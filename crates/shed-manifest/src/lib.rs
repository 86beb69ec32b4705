//! shed-manifest: reads an app's `vocab.json` and `tools.json` (or `tools.yml`)
//! into the commands the app offers, and fills a command's template from a call.
//!
//! A pure library: it reads the files it is handed and answers; it touches no
//! database and no network. The host calls [`read_app`] at every deploy — the
//! whole manifest is checked and every problem comes back in one sentence — and
//! [`Command::fill`] at every command call.

mod args;
mod document;
mod fill;
mod generated;
mod holes;
mod names;
mod read;
mod schema;
mod tools;
mod types;
mod vocab;

pub use read::{read_app, read_app_with};
pub use types::{ArgType, ColumnType};

/// The clock [`Command::fill`] reads a `time` argument's `now`, `today` and
/// `yesterday` by, handed in by the caller.
pub use jiff::Timestamp;

/// The files whose contents [`read_app`] reads; of every other file it only
/// asks whether the app has it (a command's `view`).
pub const MANIFEST_FILES: &[&str] = &["vocab.json", "tools.json", "tools.yml"];

/// The components the platform itself says, known in every app.
pub const PLATFORM_COMPONENTS: &[&str] = &["doc", "comment"];

/// The wire's own words in an apply bundle, beside the components. They are
/// not components, so no `vocab.json` may declare one.
pub const WIRE_WORDS: &[&str] = &["entity", "edges", "tombstone", "was"];

/// The store's own components of every entity; no app may declare one.
pub const STORE_COMPONENTS: &[&str] = &["created", "updated"];

pub use shed_words::STORE_COLUMNS;

/// A deploy's refusal: one sentence naming every problem the manifest has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(
    /// The sentence.
    pub String,
);

/// What an app's manifest says: its components and its commands.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The components `vocab.json` declares.
    pub vocab: Vocab,
    /// Hand-written commands in file order, then the generated ones
    /// (`add_<kind>`, `find_<kind>` for each kind, in `vocab.json` order).
    pub commands: Vec<Command>,
}

impl Manifest {
    /// The command of that name, if the app has one.
    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }
}

/// The components an app's `vocab.json` declares: component → column → type,
/// in file order. Each one is a kind.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    /// Component → column → type, in file order.
    pub components: indexmap::IndexMap<String, indexmap::IndexMap<String, ColumnType>>,
}

/// One command an app offers, hand-written or generated for a kind.
#[derive(Debug, Clone)]
pub struct Command {
    /// The command's name, as a tool call names it.
    pub name: String,
    /// The sentence a model chooses the command by (the host appends the
    /// app's title and address).
    pub description: String,
    /// The arguments, in declaration order.
    pub input: Vec<Argument>,
    /// What it does: the template a call fills.
    pub act: Act,
    /// A page of the app's own files the answer draws itself in.
    pub view: Option<String>,
    /// Made from a kind in `vocab.json` rather than written in `tools.json`.
    pub generated: bool,
    /// `"confirm": true` in `tools.json`: the command changes something its
    /// person should see first, so an agent's call of it waits for their
    /// approval (the host decides; a read never waits).
    pub confirm: bool,
}

/// A command's argument.
#[derive(Debug, Clone)]
pub struct Argument {
    /// The argument's name, as a call's JSON object keys it.
    pub name: String,
    /// Its type.
    pub ty: ArgType,
    /// Every hand-written argument is required; a generated command's are
    /// optional but for `add_<kind>`'s `title`.
    pub required: bool,
    /// The least a `number` may be (`"minimum"` in `tools.json`), as
    /// written there; a call below it is refused.
    pub minimum: Option<serde_json::Number>,
    /// The most a `number` may be (`"maximum"`); a call above it is refused.
    pub maximum: Option<serde_json::Number>,
}

/// What a command does: write a bundle (or a list of them), or read a filter
/// line. Both are templates holding `{{arg}}` holes.
#[derive(Debug, Clone)]
pub enum Act {
    /// A bundle (or a list of them) to write.
    Apply(serde_json::Value),
    /// A filter line to read.
    Query(String),
}

/// A command's template filled from a call: the apply body or the filter line
/// the host runs as the person calling.
#[derive(Debug, Clone, PartialEq)]
pub enum Filled {
    /// The bundle to write.
    Apply(serde_json::Value),
    /// The filter line to read.
    Query(String),
}

/// Everything wrong with one call's arguments, each a sentence naming the
/// argument (`miles is a number`); shown joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct ArgErrors(pub Vec<String>);

impl Command {
    /// A query act reads; an apply act writes.
    pub fn read_only(&self) -> bool {
        matches!(self.act, Act::Query(_))
    }
}
