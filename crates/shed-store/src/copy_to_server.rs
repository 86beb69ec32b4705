//! `shed migrate --to postgres://…`: copies a data folder's SQLite database
//! into an empty PostgreSQL database, in one transaction — the target is
//! migrated to the same schema version, every row copied, every identity
//! counter moved past the ids copied and the rows counted, or nothing at all
//! is written.
//!
//! The copy reads both schemas rather than naming tables: every table the
//! SQLite database holds (its FTS5 index excepted: PostgreSQL keeps `doc`'s
//! words in `tsvector`s of its own) is copied into the table of the same name,
//! column by column, each value bound as the PostgreSQL column's type asks
//! (integers, text, blobs as `bytea`, numbers, bools from 0/1, times from
//! microseconds); the tables are filled in the order their foreign keys
//! need. A table a later migration adds is copied without a line here. The
//! shape tables SQLite holds (`ec_shapes`) are made on the target as a
//! declare makes them, and PostgreSQL's full text (`ec_fts`) is computed
//! from the copied `doc` rows. A table either side holds that the other has
//! not, or a column the target lacks, stops the copy with a sentence.
//!
//! SQLite is read on a thread of its own, inside one read transaction (one
//! snapshot, so a shed serving the folder meanwhile is copied as of one
//! moment), and its rows reach PostgreSQL's binary `COPY` in batches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use deadpool_postgres::Transaction;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

use crate::StoreError;
use crate::postgres::{self, connect, migrations};
use crate::schema::{AppSchema, Shape, create_tables, ensure_shape};
use crate::sqlite::backup::{all, schema_version};
use crate::sqlite::{migrations::MIGRATIONS, schema as sqlite_schema};
use crate::txn::Txn as _;
use crate::values::Sql;

/// PostgreSQL's shared full-text table, filled from the copied rows
/// ([`full_text`]) rather than from SQLite's FTS5 index.
const FULL_TEXT: &str = "ec_fts";

/// Rows read from SQLite and handed to PostgreSQL at once, at most.
const BATCH_ROWS: usize = 1_000;
/// Bytes of values in a batch at most (deploy files can be large).
const BATCH_BYTES: usize = 8 << 20;

/// How far a copy is: rows copied of every row to copy, and the table being
/// copied.
pub struct CopyProgress<'a> {
    /// The table whose rows are being copied (the first one to copy, before
    /// any row; empty when there is none).
    pub table: &'a str,
    /// Rows copied so far, over every table.
    pub copied: u64,
    /// Rows to copy in all, over every table, as counted in SQLite before
    /// the copy began.
    pub total: u64,
}

/// A finished copy: each table with the rows both databases hold (counted
/// on each), in the order they were copied, and the schema version.
pub struct Migrated {
    /// Each table copied, with its rows (the same on both sides), in the
    /// order they were filled.
    pub tables: Vec<(String, u64)>,
    /// The schema version both databases are at: the number of migrations
    /// this shed knows, all applied on the target.
    pub schema_version: usize,
}

/// Copies the SQLite database at `file` into the empty PostgreSQL database
/// `url` names, calling `progress` as rows are copied. Refused with a
/// sentence, and nothing written: a file that is not a shed database of this
/// shed's schema version, a URL that does not parse or reach a server, a
/// target holding rows, or tables another program made.
pub async fn copy_to_server(
    file: &Path,
    url: &str,
    mut progress: impl FnMut(CopyProgress<'_>),
) -> Result<Migrated, StoreError> {
    let target = connect::parse(url)?;
    let (reader, source) = Reader::start(file).await?;
    let pool = postgres::new_pool(&target, target.config.clone(), 1)?;
    let mut client = connect::borrow(&pool, &target).await?;
    let failed = |e: tokio_postgres::Error| connect::failure(&target, &e);
    let txn = client.transaction().await.map_err(failed)?;
    migrations::migrate_in(&txn, &target).await?;
    // The records' statements' view of the same transaction.
    let t = postgres::Txn::Transaction(&txn);
    refuse_rows(&t, &target).await?;
    for app in &source.apps {
        create_tables(&t, app).await?;
    }
    // Shapes no app's group uses any more (a purged app's) have tables too.
    for shape in &source.shapes {
        ensure_shape(&t, Shape::parse(shape)?).await?;
    }
    // Making a shape records it; the copy brings SQLite's records instead.
    t.execute("DELETE FROM ec_shapes", &[]).await?;
    let plan = plan(&t, &source, &target).await?;

    let total = plan.iter().map(|t| t.rows).sum();
    let mut copied = 0;
    progress(CopyProgress {
        table: plan.first().map_or("", |t| t.name.as_str()),
        copied,
        total,
    });
    let mut batches = reader.read(&plan);
    for table in &plan {
        let columns: Vec<String> = table.columns.iter().map(|(c, _)| quoted(c)).collect();
        let types: Vec<Type> = table.columns.iter().map(|(_, t)| t.clone()).collect();
        let sink = txn
            .copy_in(&format!(
                "COPY {} ({}) FROM STDIN BINARY",
                quoted(&table.name),
                columns.join(", ")
            ))
            .await?;
        let writer = BinaryCopyInWriter::new(sink, &types);
        let mut writer = std::pin::pin!(writer);
        while let Some(batch) = batches.recv().await {
            let Read::Rows(rows) = batch? else { break };
            for row in rows {
                let cells = row
                    .into_iter()
                    .zip(&table.columns)
                    .map(|(value, (column, ty))| cell(value, ty, &table.name, column))
                    .collect::<Result<Vec<Sql>, StoreError>>()?;
                writer
                    .as_mut()
                    .write_raw(cells.iter().map(|c| c as &(dyn ToSql + Sync)))
                    .await?;
                copied += 1;
            }
            progress(CopyProgress {
                table: &table.name,
                copied,
                total,
            });
        }
        writer.as_mut().finish().await?;
    }
    advance_counters(&txn).await?;
    full_text(&t, &source.apps).await?;
    let tables = count(&t, &plan).await?;
    txn.commit().await.map_err(failed)?;
    Ok(Migrated {
        tables,
        schema_version: MIGRATIONS.len(),
    })
}

/// A name quoted for SQL (the names are read from the databases' catalogs).
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Fills PostgreSQL's shared full text (`ec_fts`, which SQLite keeps its
/// own way) from each app's `doc` rows as its apply does
/// (`postgres/apply.rs`): every entity with a doc, tombstoned or not.
async fn full_text(t: &postgres::Txn<'_>, apps: &[AppSchema]) -> Result<(), StoreError> {
    for app in apps {
        let (Some(id), Some(doc)) = (app.id, app.component("doc")) else {
            continue;
        };
        let words = postgres::schema::doc_words(doc)?;
        let home = doc.home()?;
        let sql = format!(
            "INSERT INTO ec_fts(app, id, fts) SELECT $1, id, {words} FROM {} WHERE grp = $2",
            home.table()
        );
        t.execute(&sql, &[id.into(), home.id.into()]).await?;
    }
    Ok(())
}

/// What the SQLite database holds, read in the reader's snapshot.
struct Source {
    /// Every table to copy: its name, columns and rows.
    tables: BTreeMap<String, (Vec<String>, u64)>,
    /// Every app's catalog, whose shape tables the target needs.
    apps: Vec<AppSchema>,
    /// Every shape whose table it holds (`ec_shapes`).
    shapes: Vec<String>,
}

/// A table as it is copied: its target columns (name, PostgreSQL type),
/// which the reader selects in the same order, and its rows.
struct Planned {
    name: String,
    columns: Vec<(String, Type)>,
    rows: u64,
}

/// What the reader thread sends: a batch of rows of the table being read,
/// or the end of that table.
enum Read {
    Rows(Vec<Vec<Value>>),
    TableDone,
}

/// The thread reading the SQLite database, waiting for the tables to read.
struct Reader {
    plan: std::sync::mpsc::Sender<Vec<(String, Vec<String>)>>,
    batches: tokio::sync::mpsc::Receiver<Result<Read, StoreError>>,
}

impl Reader {
    /// Opens `file` read-only on a thread of its own, begins its snapshot and
    /// answers what it holds.
    async fn start(file: &Path) -> Result<(Reader, Source), StoreError> {
        let file = file.to_path_buf();
        let (source_tx, source_rx) = tokio::sync::oneshot::channel();
        let (plan_tx, plan_rx) = std::sync::mpsc::channel::<Vec<(String, Vec<String>)>>();
        let (batch_tx, batch_rx) = tokio::sync::mpsc::channel(2);
        std::thread::spawn(move || {
            let conn = match open_source(&file) {
                Ok((conn, source)) => {
                    let _ = source_tx.send(Ok(source));
                    conn
                }
                Err(e) => {
                    let _ = source_tx.send(Err(e));
                    return;
                }
            };
            let Ok(plan) = plan_rx.recv() else { return };
            for (table, columns) in plan {
                if let Err(e) = read_table(&conn, &table, &columns, &batch_tx) {
                    let _ = batch_tx.blocking_send(Err(e));
                    return;
                }
            }
        });
        let source = source_rx
            .await
            .map_err(|_| StoreError::Internal("the SQLite reader stopped".into()))??;
        Ok((
            Reader {
                plan: plan_tx,
                batches: batch_rx,
            },
            source,
        ))
    }

    /// Asks for the planned tables' rows, in order.
    fn read(self, plan: &[Planned]) -> tokio::sync::mpsc::Receiver<Result<Read, StoreError>> {
        let asked = plan
            .iter()
            .map(|t| {
                let columns = t.columns.iter().map(|(c, _)| c.clone()).collect();
                (t.name.clone(), columns)
            })
            .collect();
        let _ = self.plan.send(asked);
        self.batches
    }
}

/// Opens the database at `file` read-only, begins the snapshot every read
/// of the copy is made in, and reads its tables and catalogs.
fn open_source(file: &Path) -> Result<(Connection, Source), StoreError> {
    let shown = file.display();
    if !file.is_file() {
        return Err(StoreError::refused(format!(
            "there is no shed database at {shown} — name the data folder shed serves with --data"
        )));
    }
    let conn = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::refused(format!("could not open {shown}: {e}")))?;
    conn.execute_batch("BEGIN")?;
    let version = schema_version(&conn).map_err(|_| {
        StoreError::refused(format!(
            "{shown} is not a shed database (it has no schema_migrations table) — name the data folder shed serves with --data"
        ))
    })?;
    if version as usize != MIGRATIONS.len() {
        return Err(StoreError::refused(format!(
            "{shown} is at schema version {version} and this shed's is {} — serve the folder once with a shed of the same version as this one (it migrates it), then run shed migrate again; nothing was written",
            MIGRATIONS.len()
        )));
    }
    let listed: Vec<(String, String)> = all(
        &conn,
        "SELECT name, sql FROM sqlite_master
         WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'
         ORDER BY name",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    // FTS5 tables and their shadow tables (`<name>_data`, …): PostgreSQL
    // keeps `doc`'s full text its own way ([`full_text`]).
    let full_text: Vec<&str> = listed
        .iter()
        .filter(|(_, sql)| sql.starts_with("CREATE VIRTUAL TABLE"))
        .map(|(name, _)| name.as_str())
        .collect();
    let mut tables = BTreeMap::new();
    for (name, _) in &listed {
        if full_text
            .iter()
            .any(|fts| name == fts || name.starts_with(&format!("{fts}_")))
        {
            continue;
        }
        let sql = "SELECT name FROM pragma_table_info(?1) ORDER BY cid";
        let columns: Vec<String> = all(&conn, sql, [name], |r| r.get(0))?;
        let rows: i64 =
            conn.query_row(&format!("SELECT COUNT(*) FROM {}", quoted(name)), [], |r| {
                r.get(0)
            })?;
        tables.insert(name.clone(), (columns, rows as u64));
    }
    let names: Vec<String> = all(&conn, "SELECT name FROM ec_apps ORDER BY id", [], |r| {
        r.get(0)
    })?;
    let apps = names
        .iter()
        .map(|app| sqlite_schema::load(&conn, app))
        .collect::<Result<_, _>>()?;
    let shapes = all(&conn, "SELECT name FROM ec_shapes ORDER BY name", [], |r| {
        r.get(0)
    })?;
    Ok((
        conn,
        Source {
            tables,
            apps,
            shapes,
        },
    ))
}

/// Sends the rows of `table` (its `columns`, in order) in batches, then
/// [`Read::TableDone`].
fn read_table(
    conn: &Connection,
    table: &str,
    columns: &[String],
    batches: &tokio::sync::mpsc::Sender<Result<Read, StoreError>>,
) -> Result<(), StoreError> {
    let listed: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
    let mut stmt = conn.prepare(&format!(
        "SELECT {} FROM {}",
        listed.join(", "),
        quoted(table)
    ))?;
    let mut rows = stmt.query([])?;
    let mut batch = Vec::new();
    let mut bytes = 0;
    let send = |read| {
        batches
            .blocking_send(Ok(read))
            .map_err(|_| StoreError::Internal("the copy stopped".into()))
    };
    while let Some(row) = rows.next()? {
        let values = (0..columns.len())
            .map(|i| row.get::<_, Value>(i))
            .collect::<Result<Vec<Value>, _>>()?;
        bytes += values
            .iter()
            .map(|v| match v {
                Value::Text(s) => s.len(),
                Value::Blob(b) => b.len(),
                _ => 8,
            })
            .sum::<usize>();
        batch.push(values);
        if batch.len() >= BATCH_ROWS || bytes >= BATCH_BYTES {
            send(Read::Rows(std::mem::take(&mut batch)))?;
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        send(Read::Rows(batch))?;
    }
    send(Read::TableDone)
}

/// Refuses a target where any of shed's tables holds a row (the schema
/// migrations' own record excepted: a database a shed migrated and never
/// used is empty).
async fn refuse_rows(t: &postgres::Txn<'_>, target: &connect::Target) -> Result<(), StoreError> {
    let sql = "SELECT tablename::text FROM pg_tables
        WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'
        ORDER BY tablename";
    for row in t.all(sql, &[]).await? {
        let table: String = row.get(0)?;
        let sql = format!("SELECT EXISTS(SELECT 1 FROM {})", quoted(&table));
        if t.one(&sql, &[]).await?.get::<bool>(0)? {
            return Err(StoreError::refused(format!(
                "the database {} at {} is not empty (its table {table} holds rows) — give shed migrate a new, empty database; nothing was written",
                target.database, target.address
            )));
        }
    }
    Ok(())
}

/// The tables to fill, in an order their foreign keys allow, each with the
/// target's columns (generated ones left to the server) and its types.
/// Both databases must hold the same tables (but PostgreSQL's `ec_fts`,
/// [`FULL_TEXT`]), and every column of the source must have its place in
/// the target.
async fn plan(
    t: &postgres::Txn<'_>,
    source: &Source,
    target: &connect::Target,
) -> Result<Vec<Planned>, StoreError> {
    let mut columns: BTreeMap<String, Vec<(String, Type)>> = BTreeMap::new();
    let sql = "SELECT c.relname::text, a.attname::text, a.atttypid::bigint
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE n.nspname = current_schema() AND c.relkind = 'r'
          AND c.relname <> 'schema_migrations'
          AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
        ORDER BY c.relname, a.attnum";
    for r in t.all(sql, &[]).await? {
        let oid: i64 = r.get(2)?;
        let ty = u32::try_from(oid)
            .ok()
            .and_then(Type::from_oid)
            .ok_or_else(|| {
                StoreError::Internal(format!("the column type {oid} is not one shed copies"))
            })?;
        columns.entry(r.get(0)?).or_default().push((r.get(1)?, ty));
    }
    let only_target: Vec<&str> = columns
        .keys()
        .filter(|t| !source.tables.contains_key(*t) && *t != FULL_TEXT)
        .map(String::as_str)
        .collect();
    if !only_target.is_empty() {
        return Err(StoreError::refused(format!(
            "the database {} at {} holds tables the SQLite database has not ({}) — give shed migrate a new, empty database; nothing was written",
            target.database,
            target.address,
            only_target.join(", ")
        )));
    }
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let sql = "SELECT src.relname::text, dst.relname::text
        FROM pg_constraint k
        JOIN pg_class src ON src.oid = k.conrelid
        JOIN pg_class dst ON dst.oid = k.confrelid
        JOIN pg_namespace n ON n.oid = src.relnamespace
        WHERE k.contype = 'f' AND n.nspname = current_schema()";
    for r in t.all(sql, &[]).await? {
        let (from, to): (String, String) = (r.get(0)?, r.get(1)?);
        if from != to {
            needs.entry(from).or_default().insert(to);
        }
    }
    columns.remove(FULL_TEXT);
    let mut planned = Vec::new();
    let mut done = BTreeSet::new();
    while done.len() < source.tables.len() {
        let ready = source.tables.keys().find(|t| {
            !done.contains(*t)
                && needs
                    .get(*t)
                    .is_none_or(|n| n.iter().all(|d| done.contains(d)))
        });
        let Some(name) = ready else {
            return Err(StoreError::Internal(
                "the target's foreign keys form a cycle shed cannot fill".into(),
            ));
        };
        let (from, rows) = &source.tables[name];
        let Some(to) = columns.get(name) else {
            return Err(StoreError::refused(format!(
                "the SQLite table {name} has no place in the PostgreSQL schema of this shed — nothing was written"
            )));
        };
        if let Some(lost) = from.iter().find(|c| !to.iter().any(|(t, _)| t == *c)) {
            return Err(StoreError::refused(format!(
                "the SQLite column {name}.{lost} has no place in the PostgreSQL schema of this shed — nothing was written"
            )));
        }
        if let Some((missing, _)) = to.iter().find(|(t, _)| !from.contains(t)) {
            return Err(StoreError::refused(format!(
                "the PostgreSQL column {name}.{missing} is not in the SQLite database — nothing was written"
            )));
        }
        planned.push(Planned {
            name: name.clone(),
            columns: to.clone(),
            rows: *rows,
        });
        done.insert(name.clone());
    }
    Ok(planned)
}

/// Moves every identity and serial counter past the largest id copied, so
/// the next row made on the server takes a new one.
async fn advance_counters(txn: &Transaction<'_>) -> Result<(), StoreError> {
    let sql = "SELECT table_name::text, column_name::text FROM information_schema.columns
        WHERE table_schema = current_schema()
          AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')";
    for r in postgres::Txn::Transaction(txn).all(sql, &[]).await? {
        let (table, column): (String, String) = (r.get(0)?, r.get(1)?);
        txn.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX({}), 0) + 1, false) FROM {}",
                quoted(&column),
                quoted(&table)
            ),
            &[&quoted(&table), &column],
        )
        .await?;
    }
    Ok(())
}

/// Counts every copied table's rows on the target and checks them against
/// the source's: the tables with their counts.
async fn count(t: &postgres::Txn<'_>, plan: &[Planned]) -> Result<Vec<(String, u64)>, StoreError> {
    let mut counted = Vec::with_capacity(plan.len());
    for table in plan {
        let sql = format!("SELECT COUNT(*) FROM {}", quoted(&table.name));
        let rows: i64 = t.one(&sql, &[]).await?.get(0)?;
        if rows as u64 != table.rows {
            return Err(StoreError::Internal(format!(
                "{} holds {rows} rows on PostgreSQL after the copy and {} in SQLite — nothing was written",
                table.name, table.rows
            )));
        }
        counted.push((table.name.clone(), table.rows));
    }
    Ok(counted)
}

/// `value`, read from SQLite's `table.column`, as the PostgreSQL type `ty`
/// takes it.
fn cell(value: Value, ty: &Type, table: &str, column: &str) -> Result<Sql, StoreError> {
    let cell = match (value, ty) {
        (Value::Null, _) => Sql::Null,
        (Value::Text(s), &Type::BYTEA) => Sql::Blob(s.into_bytes()),
        (Value::Blob(b), &Type::TEXT) => Sql::Text(String::from_utf8(b).map_err(|_| {
            StoreError::refused(format!(
                "{table}.{column} holds bytes that are not UTF-8 text, which PostgreSQL's text column cannot keep — nothing was written"
            ))
        })?),
        (Value::Integer(i), _) => Sql::Integer(i),
        (Value::Real(f), _) => Sql::Real(f),
        (Value::Text(s), _) => Sql::Text(s),
        (Value::Blob(b), _) => Sql::Blob(b),
    };
    let fits = match &cell {
        Sql::Null => true,
        Sql::Integer(_) => matches!(
            *ty,
            Type::INT8 | Type::INT4 | Type::FLOAT8 | Type::BOOL | Type::TIMESTAMPTZ
        ),
        Sql::Real(_) => matches!(*ty, Type::FLOAT8 | Type::INT8),
        Sql::Text(_) => matches!(*ty, Type::TEXT | Type::VARCHAR),
        Sql::Blob(_) => *ty == Type::BYTEA,
    };
    if !fits {
        let held = match &cell {
            Sql::Blob(b) => format!("{} bytes", b.len()),
            value => format!("{value:?}"),
        };
        return Err(StoreError::refused(format!(
            "{table}.{column} holds a value PostgreSQL's {ty} column cannot keep ({held}) — nothing was written"
        )));
    }
    Ok(cell)
}
