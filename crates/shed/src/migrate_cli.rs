//! `shed migrate --to postgres://…`: copies the data folder's SQLite
//! database — every record of every table — into an empty PostgreSQL
//! database in one transaction, checks the rows of every table on both
//! sides, and prints them (`shed_store::copy_to_server`). The folder is not
//! changed; serve the copy with `shed serve --database URL`.
//!
//! On a terminal the copy draws a progress bar on stderr; piped, it prints
//! only the counts.

use std::io::IsTerminal;
use std::time::Instant;

use clap::Args;
use shed_host::DATABASE_FILE;

use crate::backup_cli::draw_bar;
use crate::serve;

#[derive(Args)]
pub struct MigrateArgs {
    /// The empty PostgreSQL database to copy the data folder into:
    /// postgres://user[:password]@host[:port]/database.
    #[arg(long, value_name = "URL")]
    to: String,
}

/// `shed migrate --to URL`.
pub async fn migrate(place: &serve::Place, args: &MigrateArgs) -> anyhow::Result<()> {
    if place.database.is_some() {
        anyhow::bail!(
            "shed migrate copies the data folder's SQLite database (--data) to the database --to names — leave out --database and SHED_DATABASE_URL; nothing was written"
        );
    }
    let file = place.data.join(DATABASE_FILE);
    let started = Instant::now();
    let mut bar = std::io::stderr().is_terminal().then(std::io::stderr);
    let copied = shed_store::copy_to_server(&file, &args.to, |at| {
        if let Some(terminal) = &mut bar {
            draw_bar(terminal, "copying", at.copied, at.total, "rows");
        }
    })
    .await;
    if bar.is_some() {
        eprintln!();
    }
    let mut copied = copied?;
    copied.tables.sort();
    let rows: u64 = copied.tables.iter().map(|(_, n)| n).sum();
    let width = copied
        .tables
        .iter()
        .map(|(t, _)| t.len())
        .max()
        .unwrap_or(0);
    for (table, n) in &copied.tables {
        println!("{table:<width$}  {n:>9} rows");
    }
    println!(
        "copied {} into {} ({rows} rows in {} tables, schema version {}) in {:.1} s — serve it with `shed serve --database URL`",
        place.data.display(),
        shed_store::redacted_url(&args.to),
        copied.tables.len(),
        copied.schema_version,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
