//! shed-store: the one place shed's data is kept. Two halves, each behind
//! interfaces a backend implements: the entity–component engine
//! (`entities.rs`: entities, components, the filter line, apply, query,
//! history, edges) and the platform's own records (`records.rs`: people,
//! spaces, apps, deploys, tokens, sign-ins, jobs, OAuth, view keys, passkeys).
//!
//! The public API speaks only JSON and this crate's own types — never a
//! database type — and [`Store`] is the one door: it holds a `Backend`
//! and hands each call to it, so nothing above this crate names a backend.
//! A backend is an enum variant rather than a `dyn` object: the interfaces'
//! `async fn`s then need no boxing (no `async_trait`), and a call costs one
//! `match`. SQLite (`sqlite/`) is the embedded backend, the default;
//! PostgreSQL (`postgres/`) keeps the store on a database server.

/// Declares an interface: the trait each backend implements, and the
/// [`Store`] method of the same name and doc that hands the call to the
/// store's backend. One list makes both, so a backend cannot miss a method
/// the store offers.
macro_rules! interface {
    (
        $(#[$trait_doc:meta])*
        trait $trait:ident {
            $(
                $(#[$doc:meta])*
                async fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;
            )*
        }
    ) => {
        $(#[$trait_doc])*
        pub(crate) trait $trait {
            $( async fn $name(&self $(, $arg: $ty)*) -> $ret; )*
        }

        impl $crate::Store {
            $(
                $(#[$doc])*
                pub async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    match &*self.backend {
                        $crate::Backend::Sqlite(db) => $trait::$name(db $(, $arg)*).await,
                        $crate::Backend::Postgres(db) => $trait::$name(db $(, $arg)*).await,
                    }
                }
            )*
        }
    };
}

pub mod activity;
mod apply;
pub mod approvals;
mod copy_to_server;
mod deadline;
mod entities;
mod error;
pub mod filter;
mod jobs;
pub mod lifecycle;
mod migrations;
mod model;
mod names;
pub mod oauth;
pub mod passkeys;
pub mod platform;
mod postgres;
mod private;
mod query;
mod records;
pub mod revocable;
mod schema;
mod secret;
mod sqlite;
mod txn;
pub mod undo;
mod values;
mod view_keys;
mod wake;
pub mod web_sessions;
pub mod wire;
mod write_metrics;

use std::path::Path;
use std::sync::Arc;

pub use copy_to_server::{CopyProgress, Migrated, copy_to_server};
pub use deadline::READ_DEADLINE;
pub use error::{NotReady, StoreError};
pub use jobs::{JobRecord, JobTerms};
pub use migrations::CONVERT_APPS_PER_TRANSACTION;
pub use model::{
    Actor, Applied, Authorship, ColumnType, HistoryEntry, Listing, Person, Through, Vocabulary,
};
pub use postgres::connect::connect_to_server;
pub use postgres::{READS_APPLICATION as POSTGRES_READS_APPLICATION, backup_on_server};
pub use private::{PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE, warn_if_open};
pub use schema::{
    MAX_CACHED_CATALOGS, MAX_COLUMNS_PER_COMPONENT, MAX_COMPONENTS_PER_APP, MAX_SHAPES,
};
pub use secret::secret_hash;
pub use sqlite::backup::{BackupProgress, Copied, backup, restore};
pub use sqlite::{MERGE_IDLE, MERGE_SEGMENTS, MERGE_STEP_PAGES};
pub use view_keys::ViewKey;
pub use wake::{APP_WRITES_HELD, AppWrite, POLL, SAFETY_TICK, Wake};

/// Stores as an older shed made them: the migrations applied up to a
/// schema version and no further, for the tests of upgrading one in place
/// (`tests/it/upgrade/`), which then write that version's tables as its
/// code wrote them. Not part of the API: the migrations themselves stay
/// private.
#[doc(hidden)]
pub mod at_schema_version {
    pub use crate::postgres::migrations::make_database_at as postgres;
    pub use crate::sqlite::migrations::make_file_at as sqlite;
}

/// A database URL with its password hidden, as sentences and logs show it.
pub fn redacted_url(url: &str) -> String {
    postgres::connect::redacted(url)
}

/// The store: cheap to clone, shared by every task of the process.
#[derive(Clone)]
pub struct Store {
    backend: Arc<Backend>,
}

/// The database a store keeps its data in.
enum Backend {
    /// One SQLite file on this machine.
    Sqlite(sqlite::Sqlite),
    /// A database on a PostgreSQL server, which several shed servers may share.
    Postgres(postgres::Postgres),
}

impl Store {
    /// Opens the store kept in the file at `path` (e.g. `<data>/shed.db`),
    /// creating it (mode 0600) and applying every migration it has not had
    /// yet; warns when its files are open to other accounts.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let backend = Backend::Sqlite(sqlite::Sqlite::open(path).await?);
        Ok(Store {
            backend: Arc::new(backend),
        })
    }

    /// Opens the store in the database a URL names
    /// (`postgres://user[:password]@host[:port]/database`), applying every
    /// migration it has not had yet. Refuses, with a sentence and nothing
    /// written, a URL that does not parse, a server that cannot be reached,
    /// a refused user or password, and a database holding another
    /// program's tables.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        if !postgres::is_postgres_url(url) {
            return Err(StoreError::refused(format!(
                "{url} is not a database URL shed knows — give postgres://user[:password]@host[:port]/database"
            )));
        }
        let backend = Backend::Postgres(postgres::Postgres::open(url).await?);
        Ok(Store {
            backend: Arc::new(backend),
        })
    }

    /// Forgets what this process remembers of an app's components, so its
    /// next read loads them again: another process on the same database
    /// (the CLI deploying while a server runs) may have declared new ones.
    /// The host calls it for every deploy it notices.
    pub fn forget_schema(&self, app: &str) {
        match &*self.backend {
            Backend::Sqlite(db) => db.forget_schema(app),
            Backend::Postgres(db) => db.forget_schema(app),
        }
    }

    /// Whether the store can serve: the database answers, every migration
    /// is applied, and (on SQLite) the file in its place is the one open;
    /// else the sentence saying what is wrong.
    pub async fn ready(&self) -> Result<(), NotReady> {
        match &*self.backend {
            Backend::Sqlite(db) => db.ready(),
            Backend::Postgres(db) => db.ready().await,
        }
    }

    /// Takes no more writes, commits every write already queued and lets go
    /// of the database (SQLite: copies the WAL into the file and closes the
    /// writer's connection; PostgreSQL: closes the pool); a write after
    /// this is refused with a sentence.
    pub async fn close(&self) -> Result<(), StoreError> {
        match &*self.backend {
            Backend::Sqlite(db) => db.close().await,
            Backend::Postgres(db) => {
                db.close();
                Ok(())
            }
        }
    }

    /// The database's own check of what it holds: `ok` when it is sound.
    pub async fn integrity_check(&self) -> Result<String, StoreError> {
        match &*self.backend {
            Backend::Sqlite(db) => db.integrity_check().await,
            Backend::Postgres(db) => db.integrity_check().await,
        }
    }
}
