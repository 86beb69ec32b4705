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

use crate::registry::LiveApp;

/// A call's answer: the text a person reads and the data a program reads.
#[derive(Debug, Clone)]
pub struct Answer<T = Data> {
    pub text: String,
    pub data: T,
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
    Read(Listing),
    Wrote(Applied),
}

/// The apps in the caller's spaces, each with their role in its space.
#[derive(Debug, Clone, Serialize)]
pub struct AppList {
    pub apps: Vec<AppOfMine>,
}

/// An app as `apps.list` lists it: the space's listing of it and the role.
#[derive(Debug, Clone, Serialize)]
pub struct AppOfMine {
    #[serde(flatten)]
    pub app: SpaceApp,
    pub role: &'static str,
}

/// A member added to a space.
#[derive(Debug, Clone, Serialize)]
pub struct Invited {
    pub space: String,
    pub handle: String,
    pub role: &'static str,
}

/// A bearer token made, shown this once.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    pub token: String,
}

/// The caller's spaces.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceList {
    pub spaces: Vec<SpaceEntry>,
}

/// One of the caller's spaces: their role in it and its apps.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceEntry {
    pub space: String,
    /// `owner`, `editor` or `viewer`.
    pub role: &'static str,
    pub apps: Vec<SpaceApp>,
}

/// An app as its space lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceApp {
    /// `jeff/runs`
    pub at: String,
    pub slug: String,
    pub title: String,
    /// `private`, `open` or `public`.
    pub access: &'static str,
    /// `http://jeff.localhost:7700/runs/`
    pub address: String,
    pub version: i64,
}

/// An app deployed: its name, the version made, where it answers, and the
/// commands it offers now.
#[derive(Debug, Clone, Serialize)]
pub struct Deployed {
    /// `jeff/runs`
    pub app: String,
    pub version: i64,
    /// `http://jeff.localhost:7700/runs/`
    pub address: String,
    pub title: String,
    /// `private`, `open` or `public`.
    pub access: String,
    pub commands: Vec<String>,
}

/// The files of an app's next deploy, after a call wrote or read some.
#[derive(Debug, Clone, Serialize)]
pub struct Files {
    /// `jeff/runs`
    pub app: String,
    /// The version the next deploy makes.
    pub next_version: i64,
    pub files: Vec<FileEntry>,
    /// Paths deleted since the deploy, not deployed yet.
    pub deleted: Vec<String>,
    /// Paths this call wrote.
    pub wrote: Vec<String>,
    /// The files this call read back.
    pub read: Vec<FileRead>,
}

/// A file of the next deploy.
#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub bytes: usize,
    /// Not deployed yet.
    pub draft: bool,
}

/// A file read back: its text, where it is UTF-8.
#[derive(Debug, Clone, Serialize)]
pub struct FileRead {
    pub path: String,
    pub bytes: usize,
    pub text: Option<String>,
}

/// The command rows of the apps a listing names, each app's rows built at
/// its deploy.
#[derive(Debug, Clone)]
pub struct CommandList {
    pub(crate) apps: Vec<Arc<LiveApp>>,
}

impl CommandList {
    /// Each app's name (`space/app`) and the names of its commands, as a
    /// page lists them.
    pub fn names(&self) -> Vec<(&str, Vec<&str>)> {
        self.apps
            .iter()
            .map(|app| {
                let commands = app.manifest.commands.iter().map(|c| c.name.as_str());
                (app.name.as_str(), commands.collect())
            })
            .collect()
    }

    /// `{"commands": [row, …]}`: the rows copied once into one array sized
    /// at once — the answer's whole cost, since a door hands its wire an
    /// owned JSON value.
    pub(crate) fn into_json(self) -> Value {
        let mut rows = Vec::with_capacity(self.apps.iter().map(|app| app.rows.len()).sum());
        for app in &self.apps {
            rows.extend(app.rows.iter().cloned());
        }
        // Moved in, not through `json!`, which would serialize the rows
        // into a second copy.
        let mut data = Map::with_capacity(1);
        data.insert("commands".into(), Value::Array(rows));
        Value::Object(data)
    }
}

impl Data {
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
        };
        assert_eq!(
            Data::from(Acted::Read(listing)).into_json(),
            json!({ "rows": [{ "eid": "a1" }] })
        );
    }
}
