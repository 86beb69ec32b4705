//! `shed backup FILE` and `shed restore FILE`: a consistent copy of the
//! data folder's database while shed serves, and a new data folder made
//! from one. The database holds everything shed serves — people, spaces,
//! apps and every file of their deploys, their data, tokens, jobs — so the
//! one file is the whole backup; the folder's other files (the serve lock,
//! the broker's socket) are made anew by `shed serve`.
//!
//! On a terminal the backup draws a progress bar on stderr; piped, it
//! prints only its closing line. Data kept on a database server
//! (`--database`) is backed up with that server's own tools: both commands
//! answer the sentence saying which, and change nothing.

use std::io::{IsTerminal, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use shed_host::DATABASE_FILE;
use shed_store::{BackupProgress, PRIVATE_FOLDER_MODE};

use crate::serve;

#[derive(Args)]
pub struct BackupArgs {
    /// The file to write the backup to; it must not exist yet.
    file: PathBuf,
}

#[derive(Args)]
pub struct RestoreArgs {
    /// A file `shed backup` made.
    file: PathBuf,
}

/// The width of the progress bar, in characters.
const BAR_WIDTH: u64 = 30;

/// `shed backup FILE`.
pub async fn backup(place: &serve::Place, args: &BackupArgs) -> anyhow::Result<()> {
    if let Some(url) = &place.database {
        return Err(shed_store::backup_on_server(url).into());
    }
    let data = place.data.as_path();
    let database = data.join(DATABASE_FILE);
    let into = args.file.clone();
    let started = Instant::now();
    let mut bar = std::io::stderr().is_terminal().then(std::io::stderr);
    let copied = tokio::task::spawn_blocking(move || {
        shed_store::backup(&database, &into, |at| {
            if let Some(terminal) = &mut bar {
                draw(terminal, at);
            }
        })
    })
    .await
    .context("the backup stopped")?;
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    let copied = copied?;
    println!(
        "backed up {} to {}: {} in {:.1} s",
        data.display(),
        args.file.display(),
        size(copied.bytes),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Redraws the backup's progress bar in place.
fn draw(terminal: &mut std::io::Stderr, at: BackupProgress) {
    draw_bar(terminal, "backing up", at.copied, at.total, "pages");
}

/// Redraws a progress bar in place on the terminal: `doing [###---]  40% of
/// 1200 units`. Shared by the commands that copy a database.
pub(crate) fn draw_bar(
    terminal: &mut std::io::Stderr,
    doing: &str,
    done: u64,
    total: u64,
    units: &str,
) {
    let whole = total.max(1);
    let filled = (done * BAR_WIDTH / whole).min(BAR_WIDTH);
    let bar: String = (0..BAR_WIDTH)
        .map(|i| if i < filled { '#' } else { '-' })
        .collect();
    let _ = write!(
        terminal,
        "\r{doing} [{bar}] {:>3}% of {total} {units}",
        done * 100 / whole,
    );
    let _ = terminal.flush();
}

/// A size in bytes as a person reads it: `12.3 MiB`.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes as f64 >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// `shed restore FILE --data NEW`.
pub async fn restore(place: &serve::Place, args: &RestoreArgs) -> anyhow::Result<()> {
    if let Some(url) = &place.database {
        return Err(shed_store::backup_on_server(url).into());
    }
    let data = place.data.as_path();
    let made = make_empty_folder(data)?;
    let restored = restore_into(data, &args.file).await;
    if restored.is_err() {
        // Leave the folder as it was found: nothing, or empty.
        let _ = std::fs::remove_file(data.join(DATABASE_FILE));
        if made {
            let _ = std::fs::remove_dir(data);
        }
    }
    let copied = restored?;
    println!(
        "restored {} into {} ({}, schema version {}) — serve it with `shed serve --data {}`",
        args.file.display(),
        data.display(),
        size(copied.bytes),
        copied.schema_version,
        data.display()
    );
    Ok(())
}

/// Copies the backup `file` into the empty folder `data`, then opens it as
/// a server would — applying the migrations this shed has and the backup
/// had not — and closes it.
async fn restore_into(data: &Path, file: &Path) -> anyhow::Result<shed_store::Copied> {
    let database = data.join(DATABASE_FILE);
    let from = file.to_path_buf();
    let copied = tokio::task::spawn_blocking(move || shed_store::restore(&from, &database))
        .await
        .context("the restore stopped")??;
    let place = serve::Place {
        data: data.to_path_buf(),
        database: None,
        public_url: None,
    };
    let host = serve::open(&place, "http://localhost:7700").await?;
    host.ready().await?;
    host.close().await?;
    Ok(copied)
}

/// Makes `data` a new, private, empty folder (mode 0700), or makes an
/// empty one private; refuses a folder holding anything, and a file.
/// Answers whether it made the folder.
fn make_empty_folder(data: &Path) -> anyhow::Result<bool> {
    let made = match std::fs::read_dir(data) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                anyhow::bail!(
                    "{} is not empty — restore into a new or empty folder (pass --data with one); nothing was changed",
                    data.display()
                );
            }
            false
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(PRIVATE_FOLDER_MODE)
                .create(data)
                .with_context(|| format!("could not make the folder {}", data.display()))?;
            true
        }
        Err(e) => anyhow::bail!(
            "could not read {} ({e}) — restore into a new or empty folder (pass --data with one)",
            data.display()
        ),
    };
    std::fs::set_permissions(data, std::fs::Permissions::from_mode(PRIVATE_FOLDER_MODE))
        .with_context(|| format!("could not make {} private", data.display()))?;
    Ok(made)
}
