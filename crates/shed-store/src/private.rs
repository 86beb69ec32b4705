//! Files only shed's own account reads. The database is made mode 0600 before
//! SQLite opens it, and SQLite gives the `-wal` and `-shm` it makes beside it
//! the database's mode; a file or folder already there that other accounts
//! may open gets a warning naming the `chmod` that closes it.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::StoreError;

/// The mode of the database's files: they hold every private app's rows and
/// the jobs' secrets, so only shed's own account reads or writes them.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// The mode of the data folder: only shed's own account lists or enters it.
pub const PRIVATE_FOLDER_MODE: u32 = 0o700;

/// Makes a new file at `path`, mode [`PRIVATE_FILE_MODE`], open for
/// writing; refused when something is there already.
pub(crate) fn create_private_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .open(path)
}

/// Makes the database file at `path`, empty and mode [`PRIVATE_FILE_MODE`],
/// when it is not there yet (SQLite takes an empty file for a new database).
pub(crate) fn make_database_file(path: &Path) -> Result<(), StoreError> {
    match create_private_file(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Internal(format!(
            "could not make the database {}: {e}",
            path.display()
        ))),
    }
}

/// The database at `path` and the `-wal` and `-shm` SQLite keeps beside it.
pub(crate) fn database_files(path: &Path) -> [PathBuf; 3] {
    let beside = |suffix: &str| {
        let mut name = OsString::from(path.as_os_str());
        name.push(suffix);
        PathBuf::from(name)
    };
    [path.to_path_buf(), beside("-wal"), beside("-shm")]
}

/// Warns when `what` at `path` is there with more open than `private` (e.g.
/// [`PRIVATE_FOLDER_MODE`]), naming the `chmod` that closes it.
pub fn warn_if_open(what: &str, path: &Path, private: u32) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & !private != 0 {
        tracing::warn!(
            "{what} {path} is open to other accounts on this machine (mode {mode:o}) — run chmod {private:o} {path}",
            path = path.display()
        );
    }
}
