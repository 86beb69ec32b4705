//! shed-host: people, spaces, roles, apps, deploys and access — the one place
//! shed decides who may do what — and the command registry and dispatch.
//!
//! The doors (MCP, the web, the broker) turn a protocol into calls on
//! [`Host`] and hold no rules of their own: who is calling is read by
//! [`credentials`], and every "may they?" is answered by the rule book
//! (`access`). Every app's data is read and written through one function
//! (`act`). Every answer is an [`Answer`] (the spec's text lines, and typed
//! data the door turns into its wire's JSON) or a [`HostError`] whose text
//! is the sentence to show, so every door says the same words.

pub mod access;
mod act;
pub mod activity;
mod address;
mod admin;
pub mod agents;
pub mod answer;
pub mod app_data;
pub mod approvals;
mod apps;
pub mod base_href;
mod caller;
pub mod client_address;
pub mod credentials;
mod deploy;
pub mod entity;
mod entity_names;
mod error;
mod files;
mod graph;
mod listing;
pub mod live;
mod measure;
mod model_text;
pub mod moments;
mod names;
pub mod oauth;
pub mod own;
pub mod passkeys;
pub mod prompts;
pub mod rate;
mod reach;
mod registry;
mod request_state;
mod run;
pub mod searches;
mod secrets;
pub mod sessions;
pub mod shown;
mod spaces;
mod suggest;
pub mod take_back;
mod texts;
pub mod undo;
pub mod view_keys;
mod views;
mod watch;
pub mod web;

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use shed_store::Store;

pub use access::{SIGN_IN_HOW, VIEWER_SENTENCE};
pub use answer::{Answer, Data, Said};
pub use apps::parse_version;
pub use caller::{Access, Caller, Door, NotARole, NotAnAccess, Person, ReadWithCredential, Role};
pub use error::{ChangedSinceRefusal, HostError};
pub use model_text::ANSWER_TEXT_BYTES;
pub use names::SLUG_CHARS;
pub use request_state::REQUEST_STATE_SECONDS;
pub use suggest::{shell_word, terminal_command};
pub use texts::person_named;

/// The database's file in a data folder: everything shed serves — people,
/// spaces, apps with every file of their deploys, their data, tokens, jobs —
/// is in it.
pub const DATABASE_FILE: &str = "shed.db";

/// Makes the data folder `data_dir` (mode 0700) when it is not there yet:
/// what a server does, and only a server.
fn make_data_folder(data_dir: &Path) -> Result<(), HostError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(shed_store::PRIVATE_FOLDER_MODE)
        .create(data_dir)
        .map_err(|e| {
            HostError::Internal(format!(
                "could not make the data directory {}: {e}",
                data_dir.display()
            ))
        })
}

/// The public URL a CLI command's links use when it is given none and no
/// server recorded one: `shed serve`'s own default.
pub const DEFAULT_PUBLIC_URL: &str = "http://localhost:7700";

/// Where the host keeps its data and where it is seen on the web.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The data directory; the database is `<data_dir>/shed.db` ([`DATABASE_FILE`]).
    pub data_dir: PathBuf,
    /// The address the platform answers at, e.g. `http://localhost:7700`.
    pub public_url: String,
    /// The URL of a database server to keep the data in
    /// (`postgres://user[:password]@host[:port]/database`); `None`: the
    /// SQLite file `<data_dir>/shed.db`.
    pub database: Option<String>,
}

/// A page a command names, as a resource a door lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ViewResource {
    /// `ui://jeff/runs/leaderboard.html`
    pub uri: String,
    /// `jeff/runs/leaderboard.html`
    pub name: String,
    /// `Run club — leaderboard.html`
    pub title: String,
    /// `http://jeff.localhost:7700`
    pub app_origin: String,
    /// `http://jeff.localhost:7700/runs/`
    pub app_address: String,
}

/// A view's page, ready to serve: `<base href>` at the app's address added
/// unless the page carries its own.
#[derive(Debug, Clone)]
pub struct ViewPage {
    /// The view as the resource list names it: its URI, name, title and
    /// the app's origin and address.
    pub resource: ViewResource,
    /// The page's HTML, with a `<base href>` at the caller's address of
    /// the app (a keyed one for a private app) unless it has its own; bytes
    /// that are not UTF-8 are replaced.
    pub html: String,
}

/// The host: cheap to clone, shared by every task and door of the process.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
    /// The flags a `shed` command suggested at this terminal needs to reach
    /// this data again (`--data '/srv/my shed'`); empty for a server.
    terminal_flags: Arc<str>,
}

struct Inner {
    store: Store,
    url: address::PublicUrl,
    registry: registry::Registry,
    /// The apps deployed, trashed, restored or purged (see `watch`).
    app_changes: tokio::sync::broadcast::Sender<String>,
    /// A tick when somebody joined or left a space (see `watch`).
    memberships: tokio::sync::broadcast::Sender<()>,
    /// The generation when the host opened: the watcher reports what follows.
    opened_at: shed_store::lifecycle::Generation,
    watcher: OnceLock<()>,
    /// Each job's compiled scope.
    job_scopes: agents::JobScopes,
    /// The view keys this process handed out, to hand out again.
    view_keys: view_keys::Handed,
    /// OAuth clients' metadata documents, as fetched.
    client_documents: oauth::ClientDocuments,
    /// The budgets of OAuth client registrations, by address and overall,
    /// with the overall's reserve for newcomers.
    registrations: rate::Limiter,
    /// The platform as a passkeys' relying party, or why it is not one.
    passkeys: passkeys::RelyingParty,
    /// The searches running, by caller.
    searches: searches::Searches,
    /// The apps live pages watch, each read once for this process.
    hubs: live::Hubs,
}

impl Host {
    /// Opens the host on `<data_dir>/shed.db` (or the database server
    /// [`HostConfig::database`] names), creating the directory (mode
    /// 0700) and the database (0600) when they are not there yet; warns when
    /// either is open to other accounts.
    pub async fn open(config: HostConfig) -> Result<Host, HostError> {
        let url = address::PublicUrl::parse(&config.public_url)?;
        make_data_folder(&config.data_dir)?;
        let store = Self::open_store(&config.data_dir, config.database.as_deref()).await?;
        Self::with_store(store, url).await
    }

    /// Opens the host on `<data_dir>/shed.db` (or the database server
    /// `database` names) at the public URL `given`, else the one the last
    /// server on it recorded ([`Host::record_public_url`]), else
    /// [`DEFAULT_PUBLIC_URL`]: what a CLI command opens, so the links it
    /// prints point where the server is. It makes no data folder — only a
    /// server does: on the SQLite file, a folder that is not there is
    /// refused ([`HostError::NotFound`]) with how to make one, and nothing is
    /// made; on a database server the folder is not needed, and not touched.
    pub async fn open_at_served_url(
        data_dir: &Path,
        database: Option<&str>,
        given: Option<&str>,
    ) -> Result<Host, HostError> {
        if database.is_none() && !data_dir.is_dir() {
            return Err(HostError::NotFound(format!(
                "there is no data folder at {0} — `shed up` makes one and serves it \
                 (`mkdir -m 700 {1}` makes an empty one to set up by hand), or name yours \
                 with --data or SHED_DATA; nothing was changed",
                data_dir.display(),
                shell_word(&data_dir.to_string_lossy())
            )));
        }
        let store = Self::open_store(data_dir, database).await?;
        let recorded = match given {
            Some(_) => None,
            None => store.recorded_public_url().await?,
        };
        let url = given.or(recorded.as_deref()).unwrap_or(DEFAULT_PUBLIC_URL);
        let url = address::PublicUrl::parse(url)?;
        Self::with_store(store, url).await
    }

    /// Records the public URL this host answers at in its database, for the
    /// CLI's links: a server does it when it starts serving.
    pub async fn record_public_url(&self) -> Result<(), HostError> {
        Ok(self
            .inner
            .store
            .record_public_url(self.public_url())
            .await?)
    }

    /// The store at `<data_dir>/shed.db`, or on the database server
    /// `database` names, in a folder already there.
    async fn open_store(data_dir: &Path, database: Option<&str>) -> Result<Store, HostError> {
        shed_store::warn_if_open("the data folder", data_dir, shed_store::PRIVATE_FOLDER_MODE);
        Ok(match database {
            Some(url) => Store::connect(url).await?,
            None => Store::open(&data_dir.join(DATABASE_FILE)).await?,
        })
    }

    async fn with_store(store: Store, url: address::PublicUrl) -> Result<Host, HostError> {
        let opened_at = store.generation().await?;
        let (app_changes, _) = tokio::sync::broadcast::channel(256);
        let (memberships, _) = tokio::sync::broadcast::channel(16);
        let passkeys = passkeys::RelyingParty::of(url.as_str(), url.host());
        Ok(Host {
            terminal_flags: Arc::from(""),
            inner: Arc::new(Inner {
                store,
                url,
                registry: registry::Registry::default(),
                app_changes,
                memberships,
                opened_at,
                watcher: OnceLock::new(),
                job_scopes: agents::JobScopes::default(),
                view_keys: view_keys::Handed::default(),
                client_documents: oauth::ClientDocuments::default(),
                registrations: rate::Limiter::new(
                    oauth::REGISTRATIONS_PER_ADDRESS,
                    oauth::REGISTRATIONS_OVERALL,
                    oauth::REGISTRATIONS_RESERVE,
                ),
                passkeys,
                searches: searches::Searches::default(),
                hubs: live::Hubs::default(),
            }),
        })
    }

    /// Whether the host can serve: its database is in place, answers, and
    /// has every migration applied; else the sentence saying what is wrong.
    pub async fn ready(&self) -> Result<(), shed_store::NotReady> {
        self.inner.store.ready().await
    }

    /// Commits every write already made and closes the database for writes
    /// (see [`Store::close`]); for a server that is stopping.
    pub async fn close(&self) -> Result<(), HostError> {
        Ok(self.inner.store.close().await?)
    }

    /// The address the platform answers at, e.g. `http://localhost:7700`.
    pub fn public_url(&self) -> &str {
        self.inner.url.as_str()
    }

    /// This host as the `shed` CLI opens it at a terminal: the commands its
    /// sentences suggest carry `flags` (`--data '/srv/my shed'`), so they
    /// run as printed.
    pub fn at_terminal(mut self, flags: &str) -> Host {
        self.terminal_flags = Arc::from(flags);
        self
    }

    /// `` `shed <words> [flags]` ``: a command as it runs at this terminal.
    pub(crate) fn shed_command(&self, words: &str) -> String {
        suggest::shed_command(words, &self.terminal_flags)
    }

    /// Where an app lives: `http://jeff.localhost:7700/runs/`.
    pub fn app_address(&self, space: &str, app: &str) -> String {
        self.inner.url.app_address(space, app)
    }

    async fn snapshot(&self) -> Result<Arc<registry::Snapshot>, HostError> {
        self.inner
            .registry
            .snapshot(&self.inner.store, &self.inner.url)
            .await
    }
}

/// A host on a fresh data folder (and, under `SHED_TEST_DATABASE`, a
/// PostgreSQL database of its own) answering at `public_url`, for the
/// modules' tests; the folder lives as long as the returned guard.
#[cfg(test)]
pub(crate) async fn test_host(public_url: &str) -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::open(HostConfig {
        data_dir: dir.path().to_path_buf(),
        public_url: public_url.into(),
        database: shed_test_database::for_folder(dir.path()),
    })
    .await
    .unwrap();
    (dir, host)
}
