//! What a host call answers: the sentence a person reads (the spec's lines)
//! and typed data a program reads. A door turns the data into its wire's
//! JSON with [`Data::into_json`] — MCP's `structuredContent`, the page api's
//! body, the broker's `body` — and reads the typed fields where it needs
//! one (the platform page its spaces, a job its written eids).
//!
//! **Invariant:** no door reads a field out of JSON the host built; the
//! doors' source names no answer field by its JSON key (the test
//! `doors_hold_no_rules::no_door_reads_the_hosts_json`).

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
pub use shed_store::{Applied, Listing};

use crate::model_text::{ANSWER_TEXT_BYTES, Rows, model_text};
use crate::registry::{AppParts, LiveApp};
use crate::texts::bounded_list;

/// A call's answer: the text a person reads and the data a program reads.
#[derive(Debug, Clone)]
pub struct Answer<T = Data> {
    /// The sentence and lines a person reads, as the spec writes them; a
    /// door shows it as it is (the model reads it with the data after it,
    /// [`Answer::said`]).
    pub text: String,
    /// The same answer typed, for a program: a door turns it into its
    /// wire's JSON, or reads its fields where it needs one.
    pub data: T,
}

/// An answer as a door hands it on: the text a model reads — the answer's
/// lines, then its data as compact JSON, bounded at [`ANSWER_TEXT_BYTES`] —
/// and the data as JSON, whole (MCP's `structuredContent`, the broker's
/// `body`).
#[derive(Debug, Clone)]
pub struct Said {
    /// What the model reads: the answer's lines, then its data as compact
    /// JSON, cut at whole rows to at most [`ANSWER_TEXT_BYTES`] bytes.
    pub text: String,
    /// The answer's data as JSON, never cut: MCP's `structuredContent`,
    /// the broker's `body`.
    pub json: Value,
}

impl Answer<Data> {
    /// The answer as every door hands it on, built here once so each door
    /// says the same.
    pub fn said(self) -> Said {
        let rows = self.data.rows();
        let json = self.data.into_json();
        Said {
            text: model_text(&self.text, &json, &rows, ANSWER_TEXT_BYTES),
            json,
        }
    }
}

impl<T: Into<Data>> Answer<T> {
    /// The answer with its data as [`Data`], for a door that answers any
    /// call the same way.
    pub fn widen(self) -> Answer<Data> {
        Answer {
            text: self.text,
            data: self.data.into(),
        }
    }

    /// The data as the JSON a door sends, the answer kept whole (for a test
    /// or a bench that looks into it).
    pub fn data_json(&self) -> Value
    where
        T: Clone,
    {
        self.data.clone().into().into_json()
    }
}

/// What acting on an app's data came to: the rows read, or what a write
/// wrote.
#[derive(Debug, Clone)]
pub enum Acted {
    /// A read: the rows the query matched (one page of them) and the
    /// cursor of the next page, if there is one.
    Read(Listing),
    /// A write: the entities it wrote, the eids its `$name`s became, and
    /// the app's data version after it.
    Wrote(Applied),
}

/// The apps in the caller's spaces, each with their role in its space.
#[derive(Debug, Clone, Serialize)]
pub struct AppList {
    /// The apps, those in the trash too, each with the caller's role in
    /// its space.
    pub apps: Vec<AppOfMine>,
}

/// An app as `apps.list` lists it: the space's listing of it and the
/// caller's role there (none for whoever runs `shed` on the data folder).
#[derive(Debug, Clone, Serialize)]
pub struct AppOfMine {
    /// The app as its space lists it; its fields are sent beside `role`,
    /// not nested.
    #[serde(flatten)]
    pub app: SpaceApp,
    /// The caller's role in the app's space: `owner`, `editor` or
    /// `viewer`. `None` (and not sent) for whoever runs `shed` on the
    /// data folder, who sees every app and holds no role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// What the rule book lets the caller do to it, for a page's buttons
    /// (not sent: a program asks by doing).
    #[serde(skip)]
    pub may: AppActs,
}

/// What the rule book lets a caller do to an app's life: roll it back, put
/// it in the trash and take it out, purge it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppActs {
    /// The caller may deploy an earlier version's files again (`app
    /// rollback`).
    pub rollback: bool,
    /// The caller may put the app in the trash and take it out again.
    pub trash: bool,
    /// The caller may delete the app for good once it is in the trash,
    /// its versions and data with it.
    pub purge: bool,
}

/// An app's page: the app as its space lists it, with the caller's role and
/// what they may do, and its versions.
#[derive(Debug, Clone)]
pub struct AppOverview {
    /// The app as the caller's list shows it: its listing, the caller's
    /// role and what the rule book lets them do to it.
    pub app: AppOfMine,
    /// Every version of the app, newest first.
    pub versions: AppVersions,
    /// Writes by agents to it wait for their person's approval.
    pub agent_writes_need_approval: bool,
}

/// When something was done, and by whom.
#[derive(Debug, Clone, Serialize)]
pub struct Stamp {
    /// RFC 3339.
    pub at: String,
    /// The handle of the person who did it (`ada`, no `@`).
    pub handle: String,
    /// That person's display name (`Ada`), given when they were added;
    /// their handle when none was.
    pub name: String,
}

impl Stamp {
    pub(crate) fn of(at: &str, by: &shed_store::Person) -> Stamp {
        Stamp {
            at: at.to_string(),
            handle: by.handle.clone(),
            name: by.name.clone(),
        }
    }
}

/// An app's versions, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct AppVersions {
    /// `jeff/runs`
    pub(crate) app: String,
    /// The version that answers now.
    pub current: i64,
    /// The app is in the trash, to be restored or purged.
    pub(crate) trashed: bool,
    /// Every version deployed, newest first.
    pub versions: Vec<AppVersion>,
}

/// One version of an app: who deployed it and when, and its commands —
/// those it added and removed against the version before.
#[derive(Debug, Clone, Serialize)]
pub struct AppVersion {
    /// Its number: 1 for the app's first deploy, one more for each deploy
    /// after (a roll back too).
    pub version: i64,
    /// When it was deployed, and by whom.
    pub deployed: Stamp,
    /// The version whose files it deployed again, for a roll back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolls_back_to: Option<i64>,
    /// The names of the commands it offered; none when its manifest no
    /// longer reads.
    pub(crate) commands: Vec<String>,
    /// The commands it offered that the version before did not (all of
    /// them for version 1).
    pub added: Vec<String>,
    /// The commands the version before offered that it no longer did.
    pub removed: Vec<String>,
}

/// An approval, as an agent learns where it stands: waiting at its
/// address, ran (with the write it made), denied or expired.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalState {
    /// Its id: `command`'s `approval` to ask again.
    pub approval: i64,
    /// `waiting`, `ran`, `failed`, `denied` or `expired`.
    pub state: &'static str,
    /// The page its person approves it on.
    pub address: String,
    /// The app's data version its write committed as, once it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

/// An app put in the trash, taken out, or purged.
#[derive(Debug, Clone, Serialize)]
pub struct AppChange {
    /// `jeff/runs`
    pub app: String,
    /// `trashed`, `restored` or `purged`.
    pub change: &'static str,
    /// The handle of who did it.
    pub by: String,
    /// For a purge: the versions deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<i64>,
    /// For a purge: the entities deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities: Option<i64>,
}

/// A member added to a space.
#[derive(Debug, Clone, Serialize)]
pub struct Invited {
    /// The space they were added to, as the caller named it.
    pub(crate) space: String,
    /// The handle of the person added, as the caller wrote it.
    pub(crate) handle: String,
    /// The role they hold there now: `owner`, `editor` or `viewer`.
    pub(crate) role: &'static str,
}

/// A bearer token made, shown this once.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    /// The bearer token itself, in the clear: the store keeps only its
    /// hash, so this answer is the one time it can be read.
    pub(crate) token: String,
}

/// The caller's spaces.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceList {
    /// Each space the caller is a member of, in name order; empty when
    /// they belong to none.
    pub spaces: Vec<SpaceEntry>,
}

/// One of the caller's spaces: their role in it and its apps.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceEntry {
    /// The space's name (`jeff`), the first part of its apps' names.
    pub space: String,
    /// The caller's role in it: `owner`, `editor` or `viewer`.
    pub role: &'static str,
    /// The space's apps, those in the trash left out.
    pub apps: Vec<SpaceApp>,
}

/// An app as its space lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceApp {
    /// `jeff/runs`
    pub at: String,
    /// Its name within its space (`runs`), the part after the `/`.
    pub slug: String,
    /// The title a person reads (`Run club`), set when it is deployed.
    pub title: String,
    /// `private`, `open` or `public`.
    pub access: &'static str,
    /// `http://jeff.localhost:7700/runs/`
    pub address: String,
    /// Its deploy holds `index.html`, so its address opens a page (for a
    /// page's Open link; not sent).
    #[serde(skip)]
    pub index_page: bool,
    /// The version that answers now.
    pub version: i64,
    /// The deploy that answers: when, and by whom.
    pub last_deploy: Stamp,
    /// The names of the commands it offers.
    pub commands: Vec<String>,
    /// Set while it is in the trash: when, and by whom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trashed: Option<Stamp>,
}

impl SpaceApp {
    pub(crate) fn of(app: &LiveApp) -> SpaceApp {
        SpaceApp {
            at: app.name.clone(),
            slug: app.slug.clone(),
            title: app.title.clone(),
            access: app.access.as_str(),
            address: app.address.clone(),
            index_page: app.index_page,
            version: app.version,
            last_deploy: Stamp::of(&app.deployed_at, &app.deployed_by),
            commands: app.command_names(),
            trashed: app
                .trashed
                .as_ref()
                .map(|trashed| Stamp::of(&trashed.at, &trashed.by)),
        }
    }
}

/// An app deployed: its name, the version made, where it answers, and the
/// commands it offers now.
#[derive(Debug, Clone, Serialize)]
pub struct Deployed {
    /// `jeff/runs`
    pub app: String,
    /// The version this deploy made, the one that answers now.
    pub(crate) version: i64,
    /// `http://jeff.localhost:7700/runs/`
    pub(crate) address: String,
    /// The app's title after the deploy (the one it had, unless the deploy
    /// set a new one).
    pub(crate) title: String,
    /// `private`, `open` or `public`.
    pub(crate) access: String,
    /// The names of the commands it offers now.
    pub(crate) commands: Vec<String>,
}

/// The files of an app's next deploy, after a call wrote or read some.
#[derive(Debug, Clone, Serialize)]
pub struct Files {
    /// `jeff/runs`
    pub(crate) app: String,
    /// The version the next deploy makes.
    pub(crate) next_version: i64,
    /// Every file the next deploy would hold, drafts and deployed files
    /// alike, in path order.
    pub(crate) files: Vec<FileEntry>,
    /// Paths deleted since the deploy, not deployed yet.
    pub(crate) deleted: Vec<String>,
    /// Paths this call wrote.
    pub(crate) wrote: Vec<String>,
    /// The files this call read back.
    pub(crate) read: Vec<FileRead>,
}

/// A file of the next deploy.
#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    /// Its path in the app's files (`index.html`, `tools.json`).
    pub(crate) path: String,
    /// Its size in bytes.
    pub(crate) bytes: usize,
    /// Not deployed yet.
    pub(crate) draft: bool,
}

/// A file read back: its text, where it is UTF-8.
#[derive(Debug, Clone, Serialize)]
pub struct FileRead {
    /// Its path in the app's files, as the call asked for it (the call is
    /// refused for a path the next deploy does not hold).
    pub(crate) path: String,
    /// Its size in bytes.
    pub(crate) bytes: usize,
    /// Its content as text; `None` when it is not UTF-8 (an image, say),
    /// whose bytes are not sent.
    pub(crate) text: Option<String>,
}

/// The command rows of the apps a listing names, each app's rows built at
/// its deploy — or, for a listing of every app in reach too large for one
/// answer, those apps without their commands.
#[derive(Debug, Clone)]
pub struct CommandList {
    pub(crate) apps: Vec<Arc<LiveApp>>,
    /// Each app's parts, in the order of `apps`, when every command is
    /// listed; none for the apps' summaries.
    pub(crate) parts: Vec<Arc<AppParts>>,
    /// Every command's row, or only each app's summary.
    pub(crate) every_command: bool,
}

/// An app in a listing too large to hold every command: where it is, what
/// it is called, and its commands by name.
#[derive(Debug, Clone, Serialize)]
pub struct AppInReach {
    /// `jeff/runs`: what `commands` and `command` take as `app`.
    pub(crate) app: String,
    /// The title a person reads (`Run club`).
    pub(crate) title: String,
    /// How many commands it offers.
    pub(crate) commands: usize,
    /// What it is for, in a line: its commands' names.
    pub(crate) offers: String,
}

impl CommandList {
    /// Each app's name (`space/app`) and the names of its commands, as a
    /// page lists them.
    pub fn names(&self) -> Vec<(&str, Vec<&str>)> {
        self.apps
            .iter()
            .map(|app| {
                let commands = app.commands.iter().map(String::as_str);
                (app.name.as_str(), commands.collect())
            })
            .collect()
    }

    /// `{"commands": [row, …]}`: the rows copied once into one array sized
    /// at once — the answer's whole cost, since a door hands its wire an
    /// owned JSON value; or `{"apps": [app, …]}`.
    pub(crate) fn into_json(self) -> Value {
        let mut data = Map::with_capacity(1);
        if !self.every_command {
            let apps: Vec<AppInReach> = self
                .apps
                .iter()
                .map(|app| AppInReach {
                    app: app.name.clone(),
                    title: app.title.clone(),
                    commands: app.commands.len(),
                    offers: bounded_list(&app.command_names()),
                })
                .collect();
            data.insert(
                "apps".into(),
                serde_json::to_value(apps).unwrap_or(Value::Null),
            );
            return Value::Object(data);
        }
        let mut rows = Vec::with_capacity(self.parts.iter().map(|part| part.rows.len()).sum());
        for part in &self.parts {
            rows.extend(part.rows.iter().cloned());
        }
        // Moved in, not through `json!`, which would serialize the rows
        // into a second copy.
        data.insert("commands".into(), Value::Array(rows));
        Value::Object(data)
    }
}

// Where each kind of data keeps its rows.
const AT_ROWS: &[&[&str]] = &[&["rows"]];
const AT_ENTITIES: &[&[&str]] = &[&["entities"]];
const AT_COMMANDS: &[&[&str]] = &[&["commands"]];
const AT_APPS: &[&[&str]] = &[&["apps"]];
const AT_SPACES_APPS: &[&[&str]] = &[&["spaces", "apps"]];
const AT_FILES_READ: &[&[&str]] = &[&["files"], &["read"]];
const AT_VERSIONS: &[&[&str]] = &[&["versions"]];

/// How to read the apps a bounded text leaves out.
const ONE_APP_AT_A_TIME: &str =
    "call commands with app (its slug, or space/app) for one app's commands, whole";

impl Data {
    /// Where the data's rows are, what a text calls them, and how to read
    /// those a bounded text leaves out.
    fn rows(&self) -> Rows {
        let one_app_at_a_time =
            |at, one, many| Rows::new(at, one, many, |_| ONE_APP_AT_A_TIME.to_string());
        match self {
            Data::Rows(_) => Rows::new(AT_ROWS, "row", "rows", |shown| {
                format!(
                    "graph_query reads them a page at a time: the same filter line with limit={shown}, \
                     then after= the next cursor each answer carries; a command reads fewer through \
                     its own arguments"
                )
            }),
            Data::Wrote(_) => Rows::new(AT_ENTITIES, "entity", "entities", |_| {
                "graph_query with eid=<eid> reads one back".to_string()
            }),
            Data::Commands(list) if list.every_command => {
                one_app_at_a_time(AT_COMMANDS, "command", "commands")
            }
            Data::Commands(_) => Rows::new(AT_APPS, "app", "apps", |_| {
                format!("spaces names every app by space; {ONE_APP_AT_A_TIME}")
            }),
            Data::Spaces(_) => one_app_at_a_time(AT_SPACES_APPS, "app", "apps"),
            Data::Apps(_) => one_app_at_a_time(AT_APPS, "app", "apps"),
            Data::Files(_) => Rows::new(AT_FILES_READ, "file", "files", |_| {
                "app_files with read naming a few paths reads those back".to_string()
            }),
            Data::Deployed(_) => one_app_at_a_time(AT_COMMANDS, "command", "commands"),
            Data::Versions(_) => Rows::new(AT_VERSIONS, "version", "versions", |_| {
                "the newest are above".to_string()
            }),
            Data::Invited(_) | Data::Token(_) | Data::AppChange(_) | Data::Approval(_) => {
                Rows::new(&[], "row", "rows", |_| String::new())
            }
        }
    }

    /// The data as the JSON a program reads; the rows of a read and the
    /// command rows move in rather than being copied.
    pub fn into_json(self) -> Value {
        let value = match self {
            Data::Rows(listing) => return listing.into(),
            Data::Commands(commands) => return commands.into_json(),
            Data::Wrote(applied) => serde_json::to_value(applied),
            Data::Spaces(spaces) => serde_json::to_value(spaces),
            Data::Apps(apps) => serde_json::to_value(apps),
            Data::Files(files) => serde_json::to_value(files),
            Data::Deployed(deployed) => serde_json::to_value(deployed),
            Data::Invited(invited) => serde_json::to_value(invited),
            Data::Token(token) => serde_json::to_value(token),
            Data::Versions(versions) => serde_json::to_value(versions),
            Data::AppChange(change) => serde_json::to_value(change),
            Data::Approval(approval) => serde_json::to_value(approval),
        };
        // Plain structs with text keys: serializing them cannot fail.
        value.unwrap_or(Value::Null)
    }
}

impl From<Acted> for Data {
    fn from(acted: Acted) -> Data {
        match acted {
            Acted::Read(listing) => Data::Rows(listing),
            Acted::Wrote(applied) => Data::Wrote(applied),
        }
    }
}

/// `Data` and a `From` of each kind of data into it.
macro_rules! data {
    ($($(#[$doc:meta])* $variant:ident($kind:ty),)*) => {
        /// The data of any answer.
        #[derive(Debug, Clone)]
        pub enum Data {
            $($(#[$doc])* $variant($kind),)*
        }

        $(impl From<$kind> for Data {
            fn from(data: $kind) -> Data {
                Data::$variant(data)
            }
        })*
    };
}

data! {
    /// `{rows, next?}`: rows a filter line matched.
    Rows(Listing),
    /// `{entities, aliases, version}`: what a write wrote.
    Wrote(Applied),
    /// `{commands: [row, …]}`: the commands of the apps in reach.
    Commands(CommandList),
    /// `{spaces: [{space, role, apps}, …]}`.
    Spaces(SpaceList),
    /// `{apps: [{at, slug, title, access, address, version, role}, …]}`.
    Apps(AppList),
    /// The files of an app's next deploy.
    Files(Files),
    /// A deploy: the app, its version, address and commands.
    Deployed(Deployed),
    /// `{space, handle, role}`: a member added.
    Invited(Invited),
    /// `{token}`: a bearer token, shown once.
    Token(NewToken),
    /// `{app, current, trashed, versions: [{version, deployed, commands, added, removed}, …]}`.
    Versions(AppVersions),
    /// `{app, change, by}`: an app trashed, restored or purged.
    AppChange(AppChange),
    /// `{approval, state, address, version?}`: an approval waiting or decided.
    Approval(ApprovalState),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_write_and_a_read_keep_their_wire_shape() {
        let applied = Applied {
            entities: vec!["a1".into()],
            aliases: [("$run".to_string(), "a1".to_string())].into(),
            version: 3,
        };
        assert_eq!(
            Data::from(Acted::Wrote(applied)).into_json(),
            json!({ "entities": ["a1"], "aliases": { "$run": "a1" }, "version": 3 })
        );
        let listing = Listing {
            rows: vec![json!({ "eid": "a1" })],
            next: None,
            authors: Vec::new(),
        };
        assert_eq!(
            Data::from(Acted::Read(listing)).into_json(),
            json!({ "rows": [{ "eid": "a1" }] })
        );
    }
}
