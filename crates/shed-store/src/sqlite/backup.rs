//! Backups of the database while shed serves, and restoring one into a new
//! data folder.
//!
//! A backup is SQLite's online backup API run from its own connection,
//! inside one read transaction held from the first page to the last: the
//! copy is the database as it was at that moment (WAL keeps the writer
//! going meanwhile, and its commits after the moment are not in the copy),
//! and the backup never restarts however much is written. The copy is one
//! self-contained file (rollback journal, no `-wal` beside it), made mode
//! 0600 under a temporary name and renamed into place once it is whole and
//! on disk. A restore copies a backup to the new database's place, mode
//! 0600, and checks the copy: that this shed knows its schema, that it is
//! whole (`PRAGMA integrity_check`), and that it holds exactly the tables,
//! indexes, views and triggers shed makes — what the migrations of its
//! schema version make, and each app's tables as its catalog describes them
//! (the shape tables it names; the tables of its own each app had before
//! migration 17, as they were made then) — so an object added to a backup by hand (a trigger that undoes a
//! revocation, say) never reaches a serving shed. A copy refused is removed.

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::collections::BTreeMap;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use super::migrations;
use super::txn::Txn;
use crate::migrations::per_app_table;
use crate::names::is_word;
use crate::private::create_private_file;
use crate::query::at_once;
use crate::schema::{self, Shape};
use crate::{ColumnType, StoreError};

/// Pages copied between two reports of progress: 4 MiB of 4 KiB pages.
const STEP_PAGES: i32 = 1024;

/// How long to wait before trying a step again that met a lock.
const BUSY_PAUSE: Duration = Duration::from_millis(20);

/// How far a backup has come, in database pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupProgress {
    /// Pages copied so far.
    pub copied: u64,
    /// Pages to copy in all: the database's size at the moment the copy
    /// is of.
    pub total: u64,
}

/// What a finished backup or restore holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// The copy's size in bytes.
    pub bytes: u64,
    /// The schema version it is at.
    pub schema_version: u64,
}

/// Copies the database at `database` — open by a serving shed or not — to
/// a new file `into`, telling `progress` as pages are copied. Refuses when
/// there is no database at `database` or something is already at `into`.
pub fn backup(
    database: &Path,
    into: &Path,
    mut progress: impl FnMut(BackupProgress),
) -> Result<Copied, StoreError> {
    if !database.is_file() {
        return Err(StoreError::refused(format!(
            "there is no database at {} — name the data folder shed serves with --data",
            database.display()
        )));
    }
    if into.symlink_metadata().is_ok() {
        return Err(StoreError::refused(format!(
            "{} is already there — name a new file for the backup, or remove that one first",
            into.display()
        )));
    }
    let source = Connection::open_with_flags(
        database,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| not_readable(database, &e))?;
    source.busy_timeout(Duration::from_secs(10))?;
    source.execute_batch("PRAGMA query_only=ON;")?;
    // The read transaction the whole copy is made in: the moment it starts
    // is the moment the backup shows.
    source.execute_batch("BEGIN")?;
    let schema_version = schema_version(&source).map_err(|e| not_readable(database, &e))?;
    let partial = Partial::create(into)?;
    let mut copy = Connection::open(&partial.path)?;
    copy_pages(&source, &mut copy, &mut progress)?;
    // The pages say WAL, as the database's do: a file on its own is better
    // read in rollback mode, which makes no `-wal` and `-shm` beside it.
    copy.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))?;
    copy.close().map_err(|(_, e)| StoreError::from(e))?;
    source.execute_batch("COMMIT")?;
    let bytes = partial.finish(into)?;
    Ok(Copied {
        bytes,
        schema_version,
    })
}

/// Copies the backup at `from` to `database`, which must not exist yet, and
/// checks the copy; a copy refused is removed. The caller makes the data
/// folder around it.
pub fn restore(from: &Path, database: &Path) -> Result<Copied, StoreError> {
    let bytes = copy_file(from, database)?;
    match check(from, database) {
        Ok(schema_version) => Ok(Copied {
            bytes,
            schema_version,
        }),
        Err(refused) => {
            let _ = std::fs::remove_file(database);
            Err(refused)
        }
    }
}

/// Copies the file `from` to the new file `database`, mode
/// [`crate::PRIVATE_FILE_MODE`], and puts it on disk: its size.
fn copy_file(from: &Path, database: &Path) -> Result<u64, StoreError> {
    let mut source = File::open(from)
        .map_err(|e| StoreError::refused(format!("could not read {}: {e}", from.display())))?;
    let mut target = create_private_file(database)
        .map_err(|e| StoreError::Internal(format!("could not make {}: {e}", database.display())))?;
    let copied =
        std::io::copy(&mut source, &mut target).and_then(|bytes| target.sync_all().map(|()| bytes));
    copied.map_err(|e| {
        let _ = std::fs::remove_file(database);
        StoreError::Internal(format!("could not write {}: {e}", database.display()))
    })
}

/// Checks the copy at `database` of the backup `from` (named in the
/// sentences): its schema version, which this shed must know; SQLite's
/// integrity check; and that it holds nothing shed does not make. Answers
/// the schema version.
fn check(from: &Path, database: &Path) -> Result<u64, StoreError> {
    let backup = Connection::open_with_flags(
        database,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| not_a_backup(from, &e))?;
    let schema_version = schema_version(&backup).map_err(|e| not_a_backup(from, &e))?;
    let known = migrations::MIGRATIONS.len() as u64;
    if schema_version > known {
        return Err(StoreError::refused(format!(
            "{} was made by a newer shed (schema version {schema_version}; this one knows {known}) — restore it with that shed",
            from.display()
        )));
    }
    let verdict: Vec<String> = all(&backup, "PRAGMA integrity_check", [], |r| r.get(0))?;
    if verdict != ["ok"] {
        return Err(StoreError::refused(format!(
            "{} is damaged, so nothing was restored — SQLite's integrity check says: {}",
            from.display(),
            verdict.join("; ")
        )));
    }
    let unlike = unlike_shed(&backup, schema_version)
        .map_err(|why| StoreError::refused(format!("{} {why} — {NOT_RESTORED}", from.display())))?;
    if !unlike.is_empty() {
        let more = unlike.len().saturating_sub(NAMED_OBJECTS);
        let mut named = unlike[..unlike.len() - more].join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more"));
        }
        return Err(StoreError::refused(format!(
            "{} holds {named} — {NOT_RESTORED}",
            from.display()
        )));
    }
    Ok(schema_version)
}

/// How a refusal of a backup's contents ends.
const NOT_RESTORED: &str = "it was not restored; restore only files `shed backup` wrote";

/// The most objects a refusal names; the rest it counts.
const NAMED_OBJECTS: usize = 5;

/// The longest object name a refusal shows whole.
const SHOWN_NAME_CHARS: usize = 64;

/// A row of a database's `sqlite_master`, keyed by its type (`table`,
/// `index`, `view`, `trigger`) and name: its table and its SQL (none for
/// the indexes SQLite makes itself).
type SchemaObjects = BTreeMap<(String, String), (String, Option<String>)>;

fn schema_objects(conn: &Connection) -> Result<SchemaObjects, StoreError> {
    let sql = "SELECT type, name, tbl_name, sql FROM sqlite_master";
    let rows = all(conn, sql, [], |r| {
        Ok(((r.get(0)?, r.get(1)?), (r.get(2)?, r.get(3)?)))
    })?;
    Ok(rows.into_iter().collect())
}

/// Every row `sql` answers for `params`, each read by `read`.
pub(crate) fn all<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    conn.prepare(sql)?.query_map(params, read)?.collect()
}

/// What the database `backup`, at schema version `version`, holds that
/// shed does not make, holds other than shed makes it, or lacks: a phrase
/// per object, naming it. `Err` is a phrase saying why its app tables
/// cannot be told apart from foreign ones (a catalog shed did not write).
fn unlike_shed(backup: &Connection, version: u64) -> Result<Vec<String>, String> {
    let made = shed_made(backup, version)?;
    let held = schema_objects(backup).map_err(|e| e.to_string())?;
    let mut unlike = Vec::new();
    for (key @ (kind, name), object) in &held {
        match made.get(key) {
            None => unlike.push(format!(
                "{} {kind} shed does not make ({})",
                article(kind),
                shown(name)
            )),
            Some(made) if made != object => unlike.push(format!(
                "{} {kind} {} unlike the one shed makes",
                article(kind),
                shown(name)
            )),
            Some(_) => {}
        }
    }
    for (kind, name) in made.keys().filter(|key| !held.contains_key(*key)) {
        unlike.push(format!("no {kind} {}, which shed makes", shown(name)));
    }
    Ok(unlike)
}

/// The objects shed makes in a database like `backup`: what the migrations
/// up to `version` make, in a new database in memory, and there too the
/// shape tables `backup`'s catalog (`ec_shapes`) names, made as a declare
/// makes them, and the tables of its apps still in tables of their own
/// ([`tables_of_version_16`]).
fn shed_made(backup: &Connection, version: u64) -> Result<SchemaObjects, String> {
    let catalog =
        |e: rusqlite::Error| format!("has a catalog of app tables shed cannot read ({e})");
    let made = |e: StoreError| format!("has a catalog of app tables shed did not write ({e})");
    let fresh = migrations::schema_at(usize::try_from(version).unwrap_or(usize::MAX))
        .map_err(|e| e.to_string())?;
    let sql = "SELECT name FROM sqlite_schema WHERE name = 'ec_shapes'";
    let shaped = !all(backup, sql, [], |r| r.get::<_, String>(0))
        .map_err(catalog)?
        .is_empty();
    if shaped {
        let shapes: Vec<String> =
            all(backup, "SELECT name FROM ec_shapes", [], |r| r.get(0)).map_err(catalog)?;
        for name in shapes {
            let shape = Shape::parse(&name).map_err(made)?;
            at_once(schema::ensure_shape(&Txn(&fresh), shape)).map_err(made)?;
        }
    }
    tables_of_version_16(backup, &fresh)?;
    schema_objects(&fresh).map_err(|e| e.to_string())
}

/// Makes in `fresh` the tables of each app `backup` holds in tables of its
/// own and has not placed in the shared layout — a store made before
/// migration 17, or one whose conversion had not finished
/// (`migrations/convert.rs`) — as the shed of schema version 16
/// made them on SQLite, from `backup`'s catalog (`ec_components`,
/// `ec_columns`): `ec_<app id>_<component>` made with its key and then
/// each column added (in the order its table holds them: a column re-typed
/// moves to the end) and, but for `doc`'s, indexed; the app's FTS5 table
/// over `doc`. Written here as that shed wrote it, since what a version made
/// never changes (the layout after it makes none of these).
fn tables_of_version_16(backup: &Connection, fresh: &Connection) -> Result<(), String> {
    let catalog =
        |e: rusqlite::Error| format!("has a catalog of app tables shed cannot read ({e})");
    let made = |e: rusqlite::Error| format!("has a catalog of app tables shed did not write ({e})");
    let sql = "SELECT name FROM sqlite_schema WHERE type = 'table'";
    let tables: Vec<String> = all(backup, sql, [], |r| r.get(0)).map_err(catalog)?;
    let mut apps: Vec<i64> = tables.iter().filter_map(|t| per_app_table(t)).collect();
    apps.sort_unstable();
    apps.dedup();
    // An app placed in the shared layout has no table of its own.
    if tables.iter().any(|t| t == "ec_groups") {
        let placed: Vec<i64> = all(backup, "SELECT DISTINCT app FROM ec_groups", [], |r| {
            r.get(0)
        })
        .map_err(catalog)?;
        apps.retain(|id| !placed.contains(id));
    }
    for id in apps {
        fresh
            .execute_batch(&format!(
                "CREATE VIRTUAL TABLE \"ec_{id}__fts\" USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')"
            ))
            .map_err(made)?;
        let sql = "SELECT name FROM ec_components WHERE app = ?1 ORDER BY position";
        let components: Vec<String> = all(backup, sql, [id], |r| r.get(0)).map_err(catalog)?;
        for component in components {
            let not_a_word = |what: &str, name: &str| {
                format!(
                    "has a catalog of app tables shed did not write (the {what} {} of app {id})",
                    shown(name)
                )
            };
            if !is_word(&component) {
                return Err(not_a_word("component", &component));
            }
            let table = format!("ec_{id}_{component}");
            fresh
                .execute_batch(&format!(
                    "CREATE TABLE \"{table}\"(id INTEGER PRIMARY KEY REFERENCES ec_entities(id))"
                ))
                .map_err(made)?;
            let sql = "SELECT name FROM pragma_table_info(?1)";
            let held: Vec<String> = all(backup, sql, [&table], |r| r.get(0)).map_err(catalog)?;
            let sql = "SELECT name, type FROM ec_columns WHERE app = ?1 AND component = ?2";
            let mut columns: Vec<(String, String)> =
                all(backup, sql, rusqlite::params![id, component], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map_err(catalog)?;
            columns.sort_by_key(|(name, _)| held.iter().position(|h| h == name));
            for (column, ty) in columns {
                let ty = ColumnType::from_word(&ty).filter(|_| is_word(&column));
                let Some(ty) = ty else {
                    return Err(not_a_word("column", &format!("{component}.{column}")));
                };
                let sql_type = match ty {
                    ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
                    ColumnType::Number => "REAL",
                    ColumnType::Bool | ColumnType::Time => "INTEGER",
                };
                let mut ddl =
                    format!("ALTER TABLE \"{table}\" ADD COLUMN \"{column}\" {sql_type};");
                if component != "doc" {
                    ddl.push_str(&format!(
                        "CREATE INDEX \"{table}.{column}\" ON \"{table}\"(\"{column}\");"
                    ));
                }
                fresh.execute_batch(&ddl).map_err(made)?;
            }
        }
    }
    Ok(())
}

/// `a` or `an` before a kind of object (`an index`).
fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// An object's name as a refusal shows it: escaped, and cut when long.
fn shown(name: &str) -> String {
    let mut shown: String = name
        .chars()
        .take(SHOWN_NAME_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if name.chars().count() > SHOWN_NAME_CHARS {
        shown.push('…');
    }
    shown
}

/// Copies every page of `source` into `copy`, a step at a time.
fn copy_pages(
    source: &Connection,
    copy: &mut Connection,
    progress: &mut impl FnMut(BackupProgress),
) -> Result<(), StoreError> {
    let backup = Backup::new(source, copy)?;
    loop {
        let step = backup.step(STEP_PAGES)?;
        let at = backup.progress();
        let total = u64::try_from(at.pagecount).unwrap_or(0);
        let left = u64::try_from(at.remaining).unwrap_or(0);
        progress(BackupProgress {
            copied: total.saturating_sub(left),
            total,
        });
        match step {
            StepResult::Done => return Ok(()),
            StepResult::More => {}
            // Busy or Locked: another connection holds a lock a moment.
            _ => std::thread::sleep(BUSY_PAUSE),
        }
    }
}

/// The last migration applied to the database `conn` is open on.
pub(crate) fn schema_version(conn: &Connection) -> rusqlite::Result<u64> {
    let version: i64 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(version).unwrap_or(0))
}

fn not_readable(database: &Path, e: &rusqlite::Error) -> StoreError {
    StoreError::refused(format!(
        "could not read the database {} ({e}) — is it a shed data folder's shed.db?",
        database.display()
    ))
}

fn not_a_backup(from: &Path, e: &rusqlite::Error) -> StoreError {
    StoreError::refused(format!(
        "{} is not a shed backup ({e}) — give a file `shed backup` made",
        from.display()
    ))
}

/// A backup being written, under a temporary name beside where it goes;
/// removed unless finished.
struct Partial {
    path: PathBuf,
    done: bool,
}

impl Partial {
    /// Makes the empty file, mode [`crate::PRIVATE_FILE_MODE`], that SQLite then
    /// takes for a new database.
    fn create(into: &Path) -> Result<Partial, StoreError> {
        let mut name = into.as_os_str().to_owned();
        name.push(".partial");
        let path = PathBuf::from(name);
        create_private_file(&path).map_err(|e| match e.kind() {
            ErrorKind::AlreadyExists => StoreError::refused(format!(
                "{} is there, left by a backup that did not finish — remove it and back up again",
                path.display()
            )),
            _ => StoreError::refused(format!(
                "could not make {} ({e}) — name a file in a folder you may write",
                path.display()
            )),
        })?;
        Ok(Partial { path, done: false })
    }

    /// Puts the whole copy on disk and renames it to `into`: its size.
    fn finish(mut self, into: &Path) -> Result<u64, StoreError> {
        let failed =
            |e: std::io::Error| StoreError::Internal(format!("could not finish the backup: {e}"));
        let file = File::open(&self.path).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        let bytes = file.metadata().map_err(failed)?.len();
        std::fs::rename(&self.path, into).map_err(failed)?;
        self.done = true;
        if let Some(folder) = into.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(folder)
                .and_then(|f| f.sync_all())
                .map_err(failed)?;
        }
        Ok(bytes)
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
