//! What both backends' migrations share: the one line they log. A new
//! database says it was made, at which schema version; an older one says
//! from which version to which it was brought; each migration is a line at
//! debug.
//!
//! The two lists (`sqlite/migrations.rs`, `postgres/migrations.rs`) are one
//! schema: entry `i` of each is the same change, and once applied they make
//! the same tables with the same columns (**Invariant:**
//! `migrations::both_backends_migrate_to_the_same_versions_tables_and_columns`,
//! in `tests/it/`). A version once applied is never edited: it stays as it
//! is, in each backend's words. A new one is written once, in SQLite's
//! words, with the few type substitutions PostgreSQL needs made by one
//! small function (written with the first migration that uses it):
//! `INTEGER PRIMARY KEY` (and `AUTOINCREMENT`) → `BIGSERIAL PRIMARY KEY`,
//! `INTEGER` → `BIGINT`, `BLOB` → `BYTEA`, `WITHOUT ROWID` dropped. Text
//! per backend only where the dialects truly differ — as migration 7's
//! hashes, a Rust step on SQLite and `sha256` in SQL on PostgreSQL.

/// Logs, once a database's pending migrations are applied, what they did:
/// `from` the schema version it was at, `to` the one it is at now.
pub(crate) fn log_applied(from: usize, to: usize) {
    match from {
        _ if from == to => {}
        0 => tracing::info!("made the store at schema version {to}"),
        _ => tracing::info!(
            "brought the store from schema version {from} to {to} ({} migrations)",
            to - from
        ),
    }
}

/// The schema each version makes, checked against the history checked in
/// (`tests/schema/<backend>.txt`, first written by the code that made the
/// databases out there): what a migration makes must never change once
/// applied, since a database records only the versions applied, and a
/// backup is restored only if its catalog is exactly what they make.
#[cfg(test)]
pub(crate) mod history {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// One schema version's objects, as a backend's catalog says them:
    /// each object's key (`table people`) and its definition.
    pub(crate) type Objects = BTreeMap<String, String>;

    /// `versions` (the objects at schema version 0, 1, 2, …) as text: for
    /// each version, the objects made (`+`), changed (`~`) and dropped
    /// (`-`) since the one before, each definition's lines after `  | `.
    fn written(versions: &[Objects]) -> String {
        let none = Objects::new();
        let mut text = String::new();
        for (version, objects) in versions.iter().enumerate() {
            let before = version.checked_sub(1).map_or(&none, |i| &versions[i]);
            text.push_str(&format!("== schema version {version}\n"));
            for (key, definition) in objects {
                let mark = match before.get(key) {
                    None => '+',
                    Some(old) if old != definition => '~',
                    Some(_) => continue,
                };
                text.push_str(&format!("{mark} {key}\n"));
                for line in definition.lines() {
                    text.push_str(&format!("  | {line}\n"));
                }
            }
            for key in before.keys().filter(|key| !objects.contains_key(*key)) {
                text.push_str(&format!("- {key}\n"));
            }
        }
        text
    }

    /// Checks `versions` against the history in `tests/schema/{file}`;
    /// with `SHED_WRITE_SCHEMA_HISTORY` set, writes it there instead (for
    /// a new migration: the diff must show only the new version's lines).
    pub(crate) fn check(file: &str, versions: &[Objects]) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/schema")
            .join(file);
        let made = written(versions);
        if std::env::var_os("SHED_WRITE_SCHEMA_HISTORY").is_some() {
            std::fs::write(&path, &made).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap();
        let first_unlike = expected
            .lines()
            .zip(made.lines())
            .position(|(e, m)| e != m)
            .unwrap_or(expected.lines().count().min(made.lines().count()));
        assert!(
            expected == made,
            "the migrations make a schema unlike {} from line {}: expected {:?}, made {:?}",
            path.display(),
            first_unlike + 1,
            expected.lines().nth(first_unlike),
            made.lines().nth(first_unlike),
        );
    }
}
