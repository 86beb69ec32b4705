//! A store as shed made it at schema version 16, the last that kept each
//! app's components in tables of their own: the migrations up to 16 (run
//! by the crate, `shed_store::at_schema_version`), then, as SQL text
//! written here, what that shed's `declare` made for each app (its rows of
//! `ec_apps`, `ec_components`, `ec_columns`; `ec_<app id>_<component>`
//! made with `CREATE TABLE`, each column added by `ALTER TABLE … ADD COLUMN`
//! and indexed; the full text over `doc`: SQLite's FTS5 table, PostgreSQL's
//! generated `tsvector`), and what its apply wrote for each write (the
//! entity minted or touched, its component rows, its full-text entry, its
//! edges, its tombstone, its history entry, the app's version, the write's
//! activity row), statement for statement; and the platform's records
//! (people, a space and its members, deployed apps with their files, a
//! token, refusals). Fixed eids and times, so the same store is made every
//! time and on both backends.
//!
//! The statements follow `src/schema.rs`, `src/sqlite/schema.rs`,
//! `src/postgres/schema.rs`, `src/apply.rs` and `src/sqlite/apply.rs` as
//! they stood at schema version 16; a store they make is read back by that
//! shed as the snapshot checked in (`today.txt`).

use serde_json::{Map, Value, json};
use shed_store::ColumnType;

/// The last schema version of the shed that kept each app's components in
/// tables of their own.
pub const VERSION: usize = 16;

/// The engine a store is made on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// How big a store to make: apps `jeff/runs`, `jeff/notes`, `jeff/scratch`,
/// then `jeff/runs-4` … up to `apps`, each run-club app holding `runs` runs.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub apps: usize,
    pub runs: usize,
}

/// Ada's eid; she owns the space `jeff`.
pub const ADA: &str = "00000000000000000000000000000ada";
/// Bo's eid, an editor of `jeff`.
pub const BO: &str = "000000000000000000000000000000b0";
/// Now, for the records that are live until a time (Unix seconds): a
/// token expiring after it is listed.
pub const NOW: i64 = 1_900_000_000;
/// The first write's time, Unix seconds (2026-05-28).
const BASE: i64 = 1_780_000_000;
/// Refusals are listed for 30 days after they are made: theirs are kept at
/// a time far ahead, so the snapshot holds them whenever it is read.
const REFUSED_AT: i64 = 4_100_000_000;

/// About how many bytes of statements are run at once.
const CHUNK_BYTES: usize = 64 << 10;

/// An app of the store made, as its catalog says: its name, its row id,
/// its components (the platform's first) with their columns in order.
pub struct App {
    pub name: String,
    pub id: i64,
    pub components: Vec<(String, Vec<(String, ColumnType)>)>,
    /// Every entity it holds (live or tombstoned), by eid.
    pub eids: Vec<String>,
    /// An alias one of its entities holds.
    pub alias: Option<String>,
}

/// The eid of an app's `n`th entity.
pub fn eid(app: i64, n: usize) -> String {
    format!("{:016x}{:016x}", 0xe000_0000_u64 + app as u64, n)
}

/// The run club's vocabulary, as `examples/run-club` and the tests have it.
fn run_club() -> Vec<(String, Vec<(String, ColumnType)>)> {
    let cols = |c: &[(&str, ColumnType)]| c.iter().map(|(n, t)| (n.to_string(), *t)).collect();
    vec![
        (
            "jog".into(),
            cols(&[
                ("who", ColumnType::Text),
                ("miles", ColumnType::Number),
                ("at", ColumnType::Time),
            ]),
        ),
        (
            "gear".into(),
            cols(&[
                ("ready", ColumnType::Bool),
                ("link", ColumnType::Url),
                ("owner", ColumnType::Ref),
            ]),
        ),
    ]
}

/// A value a write sets.
#[derive(Clone)]
enum Val {
    Text(String),
    Number(f64),
    Bool(bool),
    /// Unix seconds.
    Time(i64),
    /// An eid.
    Ref(String),
}

/// One bundle of a write: the entity (minted or not), what it sets.
struct Bundle {
    eid: String,
    mint: bool,
    alias: Option<String>,
    components: Vec<(&'static str, Vec<(&'static str, Val)>)>,
    edges: Vec<(&'static str, String)>,
    tombstone: bool,
}

impl Bundle {
    fn new(eid: &str, mint: bool) -> Bundle {
        Bundle {
            eid: eid.into(),
            mint,
            alias: None,
            components: Vec::new(),
            edges: Vec::new(),
            tombstone: false,
        }
    }

    fn set(mut self, component: &'static str, values: Vec<(&'static str, Val)>) -> Bundle {
        self.components.push((component, values));
        self
    }
}

/// Who writes, through what.
struct Through {
    by: &'static str,
    via: Option<&'static str>,
    door: &'static str,
    command: Option<&'static str>,
    client: Option<&'static str>,
}

const BY_MCP: Through = Through {
    by: ADA,
    via: None,
    door: "mcp",
    command: Some("log_run"),
    client: Some("Claude (claimed)"),
};
const BY_AGENT: Through = Through {
    by: BO,
    via: Some("job-1"),
    door: "broker",
    command: Some("graph_apply"),
    client: Some("job-1"),
};
const BY_WEB: Through = Through {
    by: BO,
    via: None,
    door: "web",
    command: Some("apply"),
    client: None,
};

/// The statements, in one engine's words.
struct Script {
    engine: Engine,
    /// The statements, in pieces of about [`CHUNK_BYTES`] (one string of
    /// them all is slow to run).
    sql: Vec<String>,
    /// Per app id: its data version and last entity number.
    apps: Vec<(i64, i64)>,
    /// Per entity eid: its version.
    versions: std::collections::HashMap<String, i64>,
    /// Seconds after [`BASE`] of the next write.
    clock: i64,
}

/// A text literal.
fn text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// An optional text literal.
fn opt(s: Option<&str>) -> String {
    s.map_or("NULL".into(), text)
}

/// The row id of app `app`'s entity `eid`.
fn id_of(app: i64, eid: &str) -> String {
    format!(
        "(SELECT id FROM ec_entities WHERE app = {app} AND eid = {})",
        text(eid)
    )
}

/// Renders Unix seconds as the store renders a time.
fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).unwrap().to_string()
}

impl Script {
    fn new(engine: Engine) -> Script {
        Script {
            engine,
            sql: vec![String::new()],
            apps: vec![(0, 0)],
            versions: Default::default(),
            clock: 0,
        }
    }

    fn run(&mut self, statement: &str) {
        let last = self.sql.last_mut().unwrap();
        last.push_str(statement);
        last.push_str(";\n");
        if last.len() > CHUNK_BYTES {
            self.sql.push(String::new());
        }
    }

    fn value(&self, v: &Val) -> String {
        match (v, self.engine) {
            (Val::Text(s) | Val::Ref(s), _) => text(s),
            (Val::Number(n), _) => format!("{n:?}"),
            (Val::Bool(b), Engine::Sqlite) => i64::from(*b).to_string(),
            (Val::Bool(b), Engine::Postgres) => b.to_string(),
            (Val::Time(t), Engine::Sqlite) => (t * 1_000_000).to_string(),
            (Val::Time(t), Engine::Postgres) => format!("{}::timestamptz", text(&rfc3339(*t))),
        }
    }

    // ---- declare, as `src/schema.rs` at version 16 ----

    /// `lock_app`/`ensure_app` making a new app: its row, then the
    /// platform's components (`make_app`).
    fn make_app(&mut self, id: i64, name: &str) {
        self.run(&format!("INSERT INTO ec_apps(name) VALUES({})", text(name)));
        self.apps.push((0, 0));
        assert_eq!(self.apps.len() as i64 - 1, id, "apps are made in id order");
        self.add_component(
            id,
            "doc",
            &[("title", ColumnType::Text), ("body", ColumnType::Text)],
        );
        self.add_component(id, "comment", &[("target", ColumnType::Ref)]);
    }

    fn add_component(&mut self, id: i64, name: &str, columns: &[(&str, ColumnType)]) {
        self.run(&format!(
            "INSERT INTO ec_components(app, name, position)
             VALUES({id}, {}, (SELECT COUNT(*) FROM ec_components WHERE app = {id}))",
            text(name)
        ));
        for (column, ty) in columns {
            self.add_to_catalog(id, name, column, *ty);
        }
        let key = match self.engine {
            Engine::Sqlite => "INTEGER",
            Engine::Postgres => "BIGINT",
        };
        self.run(&format!(
            "CREATE TABLE \"ec_{id}_{name}\"(id {key} PRIMARY KEY REFERENCES ec_entities(id))"
        ));
        for (column, ty) in columns {
            self.create_column(id, name, column, *ty);
        }
        if name == "doc" {
            self.run(&match self.engine {
                Engine::Sqlite => format!(
                    "CREATE VIRTUAL TABLE \"ec_{id}__fts\" USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')"
                ),
                Engine::Postgres => format!(
                    "ALTER TABLE \"ec_{id}_doc\" ADD COLUMN fts tsvector GENERATED ALWAYS AS
                 (to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED;
             CREATE INDEX \"ec_{id}_doc.fts\" ON \"ec_{id}_doc\" USING GIN (fts)"
                ),
            });
        }
    }

    fn add_to_catalog(&mut self, id: i64, component: &str, column: &str, ty: ColumnType) {
        self.run(&format!(
            "INSERT INTO ec_columns(app, component, name, type, position)
             VALUES({id}, {}, {}, {}, (SELECT COUNT(*) FROM ec_columns WHERE app = {id}))",
            text(component),
            text(column),
            text(ty.as_str())
        ));
    }

    fn create_column(&mut self, id: i64, component: &str, column: &str, ty: ColumnType) {
        let sql_type = match (self.engine, ty) {
            (_, ColumnType::Text | ColumnType::Url | ColumnType::Ref) => "TEXT",
            (Engine::Sqlite, ColumnType::Number) => "REAL",
            (Engine::Sqlite, ColumnType::Bool | ColumnType::Time) => "INTEGER",
            (Engine::Postgres, ColumnType::Number) => "DOUBLE PRECISION",
            (Engine::Postgres, ColumnType::Bool) => "BOOLEAN",
            (Engine::Postgres, ColumnType::Time) => "TIMESTAMPTZ",
        };
        self.run(&format!(
            "ALTER TABLE \"ec_{id}_{component}\" ADD COLUMN \"{column}\" {sql_type}"
        ));
        if component != "doc" {
            let on = match (self.engine, ty) {
                (Engine::Sqlite, _) => format!("(\"{column}\")"),
                (Engine::Postgres, ColumnType::Text | ColumnType::Url) => {
                    format!(" USING hash (\"{column}\")")
                }
                (Engine::Postgres, _) => format!(" USING btree (\"{column}\" NULLS FIRST)"),
            };
            self.run(&format!(
                "CREATE INDEX \"ec_{id}_{component}.{column}\" ON \"ec_{id}_{component}\"{on}"
            ));
        }
    }

    /// `declare` of new components (each `add_component`).
    fn declare(&mut self, id: i64, vocabulary: &[(String, Vec<(String, ColumnType)>)]) {
        for (name, columns) in vocabulary {
            let columns: Vec<(&str, ColumnType)> =
                columns.iter().map(|(c, t)| (c.as_str(), *t)).collect();
            self.add_component(id, name, &columns);
        }
    }

    /// `declare`'s new type for a column holding no value.
    fn retype(&mut self, id: i64, component: &str, column: &str, ty: ColumnType) {
        self.run(&format!(
            "DROP INDEX IF EXISTS \"ec_{id}_{component}.{column}\";
             ALTER TABLE \"ec_{id}_{component}\" DROP COLUMN \"{column}\""
        ));
        self.create_column(id, component, column, ty);
        self.run(&format!(
            "UPDATE ec_columns SET type = {} WHERE app = {id} AND component = {} AND name = {}",
            text(ty.as_str()),
            text(component),
            text(column)
        ));
    }

    // ---- apply, as `src/apply.rs` and `src/sqlite/apply.rs` at version 16 ----

    /// One apply of `bundles` to `app` (its catalog `components`).
    fn apply(&mut self, app: &App, through: &Through, bundles: &[Bundle]) {
        let id = app.id;
        self.clock += 1;
        let now = (BASE + self.clock) * 1_000_000;
        let (version, mut last_num) = self.apps[id as usize];
        let app_version = version + 1;
        let mut touched: Vec<String> = Vec::new();
        let mut entities: Vec<String> = Vec::new();
        for (step, b) in bundles.iter().enumerate() {
            let fresh = b.mint && !self.versions.contains_key(&b.eid);
            let entity = id_of(id, &b.eid);
            let before = if fresh {
                last_num += 1;
                self.run(&format!(
                    "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                     VALUES({id}, {}, {last_num}, 1, {now}, {}, {}, {now}, {}, {})",
                    text(&b.eid), text(through.by), opt(through.via), text(through.by), opt(through.via)
                ));
                self.versions.insert(b.eid.clone(), 0);
                touched.push(b.eid.clone());
                0
            } else {
                let before = self.versions[&b.eid];
                if !touched.contains(&b.eid) {
                    self.run(&format!(
                        "UPDATE ec_entities SET version = version + 1, updated_at = {now}, updated_by = {}, updated_via = {} WHERE id = {entity}",
                        text(through.by), opt(through.via)
                    ));
                    touched.push(b.eid.clone());
                }
                before
            };
            let mut change = Map::new();
            change.insert("entity".into(), json!({ "eid": b.eid }));
            if let Some(alias) = &b.alias {
                self.run(&format!(
                    "UPDATE ec_entities SET alias = {} WHERE id = {entity}",
                    text(alias)
                ));
                change.insert("alias".into(), json!(alias));
            }
            for (component, values) in &b.components {
                let table = format!("\"ec_{id}_{component}\"");
                let columns = &app
                    .components
                    .iter()
                    .find(|(c, _)| c == component)
                    .unwrap()
                    .1;
                let mut written = Map::new();
                for (column, v) in values {
                    written.insert(
                        column.to_string(),
                        match v {
                            Val::Text(s) | Val::Ref(s) => json!(s),
                            Val::Number(n) => json!(n),
                            Val::Bool(b) => json!(b),
                            Val::Time(t) => json!(rfc3339(*t)),
                        },
                    );
                }
                change.insert(component.to_string(), Value::Object(written));
                if fresh {
                    // Every column, in the catalog's order, null where unset.
                    let names: Vec<String> =
                        columns.iter().map(|(c, _)| format!(", \"{c}\"")).collect();
                    let cells: Vec<String> = columns
                        .iter()
                        .map(|(c, _)| {
                            let v = values.iter().find(|(n, _)| n == c);
                            format!(", {}", v.map_or("NULL".into(), |(_, v)| self.value(v)))
                        })
                        .collect();
                    if *component == "doc" && self.engine == Engine::Sqlite {
                        let cell = |c: &str| {
                            values
                                .iter()
                                .find(|(n, _)| *n == c)
                                .map_or("NULL".into(), |(_, v)| self.value(v))
                        };
                        let fts = format!(
                            "INSERT INTO \"ec_{id}__fts\"(rowid, title, body) VALUES({entity}, {}, {})",
                            cell("title"),
                            cell("body")
                        );
                        self.run(&fts);
                    }
                    self.run(&format!(
                        "INSERT INTO {table}(id{}) VALUES({entity}{})",
                        names.concat(),
                        cells.concat()
                    ));
                } else {
                    let cols: Vec<String> =
                        values.iter().map(|(c, _)| format!("\"{c}\"")).collect();
                    let cells: Vec<String> = values.iter().map(|(_, v)| self.value(v)).collect();
                    let sets: Vec<String> =
                        cols.iter().map(|c| format!("{c} = excluded.{c}")).collect();
                    self.run(&format!(
                        "INSERT INTO {table}(id, {}) VALUES({entity}, {}) ON CONFLICT(id) DO UPDATE SET {}",
                        cols.join(", "),
                        cells.join(", "),
                        sets.join(", ")
                    ));
                    if *component == "doc" && self.engine == Engine::Sqlite {
                        self.run(&format!(
                            "DELETE FROM \"ec_{id}__fts\" WHERE rowid = {entity};
                             INSERT INTO \"ec_{id}__fts\"(rowid, title, body) SELECT id, title, body FROM {table} WHERE id = {entity}"
                        ));
                    }
                }
            }
            if !b.edges.is_empty() {
                let mut edges = Vec::new();
                for (rel, to) in &b.edges {
                    self.run(&format!(
                        "INSERT INTO ec_edges(src, rel, dst) VALUES({entity}, {}, {}) ON CONFLICT DO NOTHING",
                        text(rel),
                        text(to)
                    ));
                    edges.push(json!({ "rel": rel, "to": to }));
                }
                change.insert("edges".into(), Value::Array(edges));
            }
            if b.tombstone {
                self.run(&format!(
                    "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = {entity}"
                ));
                if self.engine == Engine::Sqlite {
                    self.run(&format!(
                        "DELETE FROM \"ec_{id}__fts\" WHERE rowid = {entity}"
                    ));
                }
                change.insert("tombstone".into(), json!({}));
            }
            let version = before + 1;
            self.run(&format!(
                "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change)
                 VALUES({entity}, {app_version}, {step}, {version}, {now}, {}, {}, {})",
                text(through.by),
                opt(through.via),
                text(&Value::Object(change).to_string())
            ));
            if !entities.contains(&b.eid) {
                entities.push(b.eid.clone());
            }
        }
        for eid in &touched {
            *self.versions.get_mut(eid).unwrap() += 1;
        }
        self.apps[id as usize] = (app_version, last_num);
        self.run(&format!(
            "UPDATE ec_apps SET version = {app_version}, last_num = {last_num} WHERE id = {id}"
        ));
        self.run(&format!(
            "INSERT INTO ec_writes(space, app, version, at, by, via, door, command, client, entities)
             VALUES('jeff', {}, {app_version}, {now}, {}, {}, {}, {}, {}, {})",
            text(&app.name),
            text(through.by),
            opt(through.via),
            text(through.door),
            opt(through.command),
            opt(through.client),
            text(&json!(entities).to_string())
        ));
    }
}

/// The platform's records: Ada and Bo, the space `jeff`, the deployed
/// apps `runs` (two deploys) and `notes`, a token of Ada's and one
/// expired, two refusals.
fn platform(s: &mut Script) {
    let at = "2026-05-27T10:00:00Z";
    s.run(&format!(
        "INSERT INTO people(eid, handle, name, created_at) VALUES({}, 'ada', 'Ada Lovelace', '{at}');
         INSERT INTO people(eid, handle, name, created_at) VALUES({}, 'bo', 'Bo', '{at}');
         INSERT INTO spaces(slug, created_at) VALUES('jeff', '{at}');
         INSERT INTO members(space, person, role) VALUES(1, {}, 'owner');
         INSERT INTO members(space, person, role) VALUES(1, {}, 'editor')",
        text(ADA),
        text(BO),
        text(ADA),
        text(BO)
    ));
    let blob = |b: &str| match s.engine {
        Engine::Sqlite => format!("X'{}'", hex(b)),
        Engine::Postgres => format!("'\\x{}'::bytea", hex(b)),
    };
    let (vocab, page, tools) = (
        blob(r#"{ "jog": { "who": "text", "miles": "number", "at": "time" } }"#),
        blob("<h1>Runs</h1>"),
        blob(r#"{ "leaderboard": { "query": ".jog!&.created!" } }"#),
    );
    s.run(&format!(
        "INSERT INTO apps(space, slug, title, access, version, deploy, created_at)
             VALUES(1, 'runs', 'The run club', 'public', 0, 0, '{at}');
         INSERT INTO deploys(app, version, at, by, rolls_back_to) VALUES(1, 1, '{at}', {ada}, NULL);
         INSERT INTO deploy_files(deploy, path, content) VALUES(1, 'vocab.json', {vocab});
         INSERT INTO deploy_files(deploy, path, content) VALUES(1, 'index.html', {page});
         INSERT INTO deploys(app, version, at, by, rolls_back_to) VALUES(1, 2, '2026-05-28T09:00:00Z', {bo}, NULL);
         INSERT INTO deploy_files(deploy, path, content) VALUES(2, 'vocab.json', {vocab});
         INSERT INTO deploy_files(deploy, path, content) VALUES(2, 'tools.json', {tools});
         UPDATE apps SET version = 2, deploy = 2 WHERE id = 1;
         INSERT INTO apps(space, slug, title, access, version, deploy, created_at)
             VALUES(1, 'notes', 'notes', 'private', 0, 0, '{at}');
         INSERT INTO deploys(app, version, at, by, rolls_back_to) VALUES(2, 1, '{at}', {ada}, NULL);
         INSERT INTO deploy_files(deploy, path, content) VALUES(3, 'index.html', {page});
         UPDATE apps SET version = 1, deploy = 3 WHERE id = 2;
         INSERT INTO tokens(person, hash, created_at, name, expires_at, grant_id, resource)
             VALUES({ada}, 'hash-of-ada-laptop', '{at}', 'laptop', NULL, NULL, NULL);
         INSERT INTO tokens(person, hash, created_at, name, expires_at, grant_id, resource)
             VALUES({bo}, 'hash-of-bo-phone', '{at}', 'phone', {}, NULL, NULL);
         INSERT INTO tokens(person, hash, created_at, name, expires_at, grant_id, resource)
             VALUES({bo}, 'hash-of-bo-old', '{at}', 'old', {}, NULL, NULL)",
        NOW + 3600,
        NOW - 3600,
        ada = text(ADA),
        bo = text(BO),
    ));
    for (i, (by, via, sentence)) in [
        (
            ADA,
            None,
            "jog.miles holds numbers — give miles as a number",
        ),
        (
            BO,
            Some("job-1"),
            "job-1 may not write jeff/notes — ask Bo to widen its scope",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        s.run(&format!(
            "INSERT INTO refusals(space, app, at, by, via, door, command, client, sentence)
             VALUES('jeff', 'jeff/runs', {}, {}, {}, 'mcp', 'log_run', NULL, {})",
            (REFUSED_AT + i as i64) * 1_000_000,
            text(by),
            opt(via),
            text(sentence)
        ));
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The words of the runs' docs: every fourth has "hills".
fn run_words(n: usize) -> String {
    let place = ["hills", "river", "park", "track"][n % 4];
    format!("an easy loop by the {place}, run number {n}")
}

/// A run-club app `app` holding `runs` runs: each minted with its jog and
/// doc (every third with gear owned by Ada, linking the run before it
/// `paced_by`), then every other run's miles changed, by another door; a
/// comment on the first run; the second run aliased, then tombstoned.
fn runs(s: &mut Script, app: &App, runs: usize) {
    let id = app.id;
    for n in 0..runs {
        let mut b = Bundle::new(&eid(id, n), true)
            .set(
                "jog",
                vec![
                    ("who", Val::Text(["Ada", "Bo", "Cy"][n % 3].into())),
                    ("miles", Val::Number(3.0 + (n % 7) as f64 * 0.5)),
                    ("at", Val::Time(BASE + n as i64 * 3600)),
                ],
            )
            .set(
                "doc",
                vec![
                    (
                        "title",
                        Val::Text(format!("Run by {}", ["Ada", "Bo", "Cy"][n % 3])),
                    ),
                    ("body", Val::Text(run_words(n))),
                ],
            );
        if n % 3 == 2 {
            b = b.set(
                "gear",
                vec![
                    ("ready", Val::Bool(n % 2 == 0)),
                    ("link", Val::Text(format!("https://example.com/shoes/{n}"))),
                    ("owner", Val::Ref(ADA.into())),
                ],
            );
            b.edges.push(("paced_by", eid(id, n - 1)));
        }
        s.apply(app, &BY_MCP, &[b]);
    }
    for n in (0..runs).step_by(2) {
        let b = Bundle::new(&eid(id, n), false)
            .set("jog", vec![("miles", Val::Number(10.0 + n as f64))]);
        let b = if n % 4 == 0 {
            b.set(
                "doc",
                vec![(
                    "body",
                    Val::Text(format!("{} — and up the hills", run_words(n))),
                )],
            )
        } else {
            b
        };
        s.apply(app, if n % 4 == 0 { &BY_AGENT } else { &BY_WEB }, &[b]);
    }
    if runs >= 2 {
        let comment = Bundle::new(&eid(id, runs), true)
            .set("comment", vec![("target", Val::Ref(eid(id, 0)))])
            .set(
                "doc",
                vec![("body", Val::Text("well run, in the rain".into()))],
            );
        s.apply(app, &BY_WEB, &[comment]);
        let mut alias = Bundle::new(&eid(id, 1), false);
        alias.alias = Some("second".into());
        s.apply(app, &BY_MCP, &[alias]);
        let mut gone = Bundle::new(&eid(id, 1), false);
        gone.tombstone = true;
        s.apply(app, &BY_AGENT, &[gone]);
        let mut alias = Bundle::new(&eid(id, 0), false);
        alias.alias = Some("first".into());
        s.apply(app, &BY_MCP, &[alias]);
    }
}

/// The store of `size`, as SQL text in `engine`'s words to run in order,
/// in one transaction, after the migrations up to [`VERSION`]; and its
/// apps.
pub fn script(engine: Engine, size: Size) -> (Vec<String>, Vec<App>) {
    assert!(size.apps >= 3);
    let mut s = Script::new(engine);
    platform(&mut s);
    let mut apps = Vec::new();
    for i in 1..=size.apps {
        let id = i as i64;
        let name = match i {
            1 => "jeff/runs".to_string(),
            2 => "jeff/notes".to_string(),
            3 => "jeff/scratch".to_string(),
            _ => format!("jeff/runs-{i}"),
        };
        s.make_app(id, &name);
        let mut app = App {
            name,
            id,
            components: vec![
                (
                    "doc".into(),
                    vec![
                        ("title".into(), ColumnType::Text),
                        ("body".into(), ColumnType::Text),
                    ],
                ),
                ("comment".into(), vec![("target".into(), ColumnType::Ref)]),
            ],
            eids: Vec::new(),
            alias: None,
        };
        match i {
            2 => {
                // A column declared a number, re-typed to text while empty:
                // its table holds it last, its catalog in its place.
                let note = vec![(
                    "note".to_string(),
                    vec![
                        ("mark".to_string(), ColumnType::Number),
                        ("said".to_string(), ColumnType::Text),
                    ],
                )];
                s.declare(id, &note);
                s.retype(id, "note", "mark", ColumnType::Text);
                app.components.push((
                    "note".into(),
                    vec![
                        ("mark".into(), ColumnType::Text),
                        ("said".into(), ColumnType::Text),
                    ],
                ));
                let b = Bundle::new(&eid(id, 0), true).set(
                    "note",
                    vec![
                        ("mark", Val::Text("A".into())),
                        ("said", Val::Text("hello, hills".into())),
                    ],
                );
                s.apply(&app, &BY_MCP, &[b]);
                app.eids.push(eid(id, 0));
            }
            3 => {
                // Written without a declare: the platform's components only.
                let b = Bundle::new(&eid(id, 0), true)
                    .set("doc", vec![("title", Val::Text("a note to self".into()))]);
                s.apply(&app, &BY_WEB, &[b]);
                app.eids.push(eid(id, 0));
            }
            _ => {
                let vocabulary = run_club();
                s.declare(id, &vocabulary);
                app.components.extend(vocabulary);
                runs(&mut s, &app, size.runs);
                // The runs, and the comment on the first.
                let entities = if size.runs >= 2 {
                    size.runs + 1
                } else {
                    size.runs
                };
                app.eids = (0..entities).map(|n| eid(id, n)).collect();
                if size.runs >= 2 {
                    app.alias = Some("first".into());
                }
            }
        }
        apps.push(app);
    }
    (s.sql, apps)
}
