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
//! on disk. A restore checks a backup whole (`PRAGMA integrity_check`) and
//! that this shed knows its schema, then copies it to the new database's
//! place, mode 0600.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use crate::{PRIVATE_FILE_MODE, StoreError};

/// Pages copied between two reports of progress: 4 MiB of 4 KiB pages.
const STEP_PAGES: i32 = 1024;

/// How long to wait before trying a step again that met a lock.
const BUSY_PAUSE: Duration = Duration::from_millis(20);

/// How far a backup has come, in database pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupProgress {
    pub copied: u64,
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

/// Checks the backup at `from` and copies it to `database`, which must not
/// exist yet; the caller makes the data folder around it.
pub fn restore(from: &Path, database: &Path) -> Result<Copied, StoreError> {
    let backup = Connection::open_with_flags(
        from,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| not_a_backup(from, &e))?;
    let schema_version = schema_version(&backup).map_err(|e| not_a_backup(from, &e))?;
    let known = super::migrations::MIGRATIONS.len() as u64;
    if schema_version > known {
        return Err(StoreError::refused(format!(
            "{} was made by a newer shed (schema version {schema_version}; this one knows {known}) — restore it with that shed",
            from.display()
        )));
    }
    let verdict: Vec<String> = backup
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    if verdict != ["ok"] {
        return Err(StoreError::refused(format!(
            "{} is damaged, so nothing was restored — SQLite's integrity check says: {}",
            from.display(),
            verdict.join("; ")
        )));
    }
    drop(backup);
    let mut source = File::open(from)
        .map_err(|e| StoreError::refused(format!("could not read {}: {e}", from.display())))?;
    let mut target = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .open(database)
        .map_err(|e| StoreError::Internal(format!("could not make {}: {e}", database.display())))?;
    let bytes = std::io::copy(&mut source, &mut target)
        .and_then(|bytes| target.sync_all().map(|()| bytes))
        .map_err(|e| {
            StoreError::Internal(format!("could not write {}: {e}", database.display()))
        })?;
    Ok(Copied {
        bytes,
        schema_version,
    })
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
fn schema_version(conn: &Connection) -> rusqlite::Result<u64> {
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
    /// Makes the empty file, mode [`PRIVATE_FILE_MODE`], that SQLite then
    /// takes for a new database.
    fn create(into: &Path) -> Result<Partial, StoreError> {
        let mut name = into.as_os_str().to_owned();
        name.push(".partial");
        let path = PathBuf::from(name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PRIVATE_FILE_MODE)
            .open(&path)
            .map_err(|e| match e.kind() {
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
