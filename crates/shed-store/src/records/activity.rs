//! A space's activity (the shapes and what each means: `src/activity.rs`),
//! written once for both backends ([`Records`]): writes and refusals read
//! newest first by id, each with its person's eid, handle and name; a
//! refusal kept with its space's oldest forgotten in the same write, and
//! its caller's recent ones counted there first.

use super::{FromRow, Statement, person_at};
use crate::activity::{
    Narrow, NewRefusal, REFUSAL_RATE_WINDOW, REFUSALS_KEPT_FOR, REFUSALS_KEPT_PER_CALLER,
    REFUSALS_PER_SPACE, RefusalRecord, WriteRecord, space_of,
};
use crate::txn::{Records, Row, Txn, args, marks};
use crate::values::{Sql, render_time};
use crate::{StoreError, Through};

/// A write's columns, from `w` (rows of `ec_writes`) and `p` (`people`),
/// and the undo that stands over it: the newest undo of it not undone
/// itself (each found through the index `(app, via, id)`).
const WRITE_COLUMNS_OF: &str = "w.id, w.app, w.version, w.at, p.eid, p.handle, p.name, w.via, w.door, w.command, w.client, w.entities,
     (SELECT u.version FROM ec_writes u
      WHERE u.app = w.app AND u.via = 'undo of ' || w.app || '@' || w.version
        AND NOT EXISTS (SELECT 1 FROM ec_writes r
                        WHERE r.app = u.app AND r.via = 'undo of ' || u.app || '@' || u.version)
      ORDER BY u.id DESC LIMIT 1)";

/// A refusal's columns, from `refusals r` joined with `people p`.
const REFUSAL_COLUMNS: &str =
    "r.id, r.app, r.at, p.eid, p.handle, p.name, r.via, r.door, r.command, r.client, r.sentence
     FROM refusals r JOIN people p ON p.eid = r.by";

impl FromRow for WriteRecord {
    fn from_row(r: Row) -> Result<WriteRecord, StoreError> {
        let entities: String = r.get(11)?;
        Ok(WriteRecord {
            id: r.get(0)?,
            app: r.get(1)?,
            version: r.get::<i64>(2)? as u64,
            at: render_time(r.get(3)?),
            by: person_at(&r, 4)?,
            via: r.get(7)?,
            through: Through {
                door: r.get(8)?,
                command: r.get(9)?,
                client: r.get(10)?,
            },
            entities: serde_json::from_str(&entities)
                .map_err(|e| StoreError::Internal(format!("a write's entities: {e}")))?,
            undone_by: r.get::<Option<i64>>(12)?.map(|version| version as u64),
        })
    }
}

impl FromRow for RefusalRecord {
    fn from_row(r: Row) -> Result<RefusalRecord, StoreError> {
        Ok(RefusalRecord {
            id: r.get(0)?,
            app: r.get(1)?,
            at: render_time(r.get(2)?),
            by: person_at(&r, 3)?,
            via: r.get(6)?,
            through: Through {
                door: r.get(7)?,
                command: r.get(8)?,
                client: r.get(9)?,
            },
            sentence: r.get(10)?,
        })
    }
}

/// When a refusal kept at `now` (microseconds) would be past
/// [`REFUSALS_KEPT_FOR`]: those older are forgotten.
fn forgotten_before(now: i64) -> i64 {
    now - REFUSALS_KEPT_FOR.as_micros() as i64
}

/// The conditions and values every space's list shares: the space, the
/// apps the caller may see, an id below `before`; `prefix` the table's
/// alias. Answers the `WHERE` text and its values.
fn in_space(prefix: &str, space: &str, apps: &[String], before: Option<i64>) -> (String, Vec<Sql>) {
    let mut values: Vec<Sql> = vec![space.into(), before.unwrap_or(i64::MAX).into()];
    let sql = format!(
        "{prefix}.space = $1 AND {prefix}.id < $2 AND {prefix}.app IN ({})",
        marks(3, apps.len())
    );
    values.extend(apps.iter().map(|a| Sql::from(a.as_str())));
    (sql, values)
}

impl<B: Records> crate::activity::Activity for B {
    async fn writes(
        &self,
        space: &str,
        apps: &[String],
        narrow: &Narrow,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<WriteRecord>, StoreError> {
        let apps: Vec<&String> = apps
            .iter()
            .filter(|app| narrow.app.as_ref().is_none_or(|only| only == *app))
            .collect();
        if apps.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut values: Vec<Sql> = vec![space.into(), before.unwrap_or(i64::MAX).into()];
        let mut narrowing = String::new();
        // Each app's rows are read through its own index, `(app, id)` or,
        // narrowed, `(app, via|by|command, id)` (migration 14 says why no
        // index has the id alone).
        for (column, value) in [
            ("via", &narrow.via),
            ("by", &narrow.by),
            ("command", &narrow.command),
        ] {
            if let Some(value) = value {
                values.push(value.as_str().into());
                narrowing.push_str(&format!(" AND {column} = ${}", values.len()));
            }
        }
        // Each app's newest rows, then merged by id.
        let mut each_app = Vec::with_capacity(apps.len());
        for app in apps {
            values.push(app.as_str().into());
            each_app.push(format!(
                "SELECT * FROM (SELECT * FROM ec_writes WHERE app = ${} AND space = $1 AND id < $2{narrowing}
                 ORDER BY id DESC LIMIT {limit}) AS a{}",
                values.len(),
                each_app.len()
            ));
        }
        let sql = format!(
            "SELECT {WRITE_COLUMNS_OF} FROM ({}) AS w JOIN people p ON p.eid = w.by
             ORDER BY w.id DESC LIMIT {limit}",
            each_app.join(" UNION ALL ")
        );
        self.read_all(&sql, &values).await
    }

    async fn writes_since(
        &self,
        app: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<WriteRecord>, StoreError> {
        let sql = format!(
            "SELECT {WRITE_COLUMNS_OF} FROM ec_writes w JOIN people p ON p.eid = w.by
             WHERE w.app = $1 AND w.version > $2 ORDER BY w.version LIMIT {limit}"
        );
        self.read_all(&sql, args![app, after as i64]).await
    }

    async fn write_of(&self, app: &str, version: u64) -> Result<Option<WriteRecord>, StoreError> {
        let sql = format!(
            "SELECT {WRITE_COLUMNS_OF} FROM ec_writes w JOIN people p ON p.eid = w.by
             WHERE w.app = $1 AND w.version = $2"
        );
        self.read_optional(&sql, args![app, version as i64]).await
    }

    async fn record_refusal(&self, refusal: NewRefusal) -> Result<bool, StoreError> {
        let now = jiff::Timestamp::now().as_microsecond();
        let forgotten_before = forgotten_before(now);
        let window_from = now - REFUSAL_RATE_WINDOW.as_micros() as i64;
        self.write_records(async move |t| {
            let space = space_of(&refusal.app);
            // Other servers' refusals wait, so two cannot both find room
            // for the caller's last one.
            t.lock_table("refusals").await?;
            let mut values: Vec<Sql> = vec![
                space.into(),
                refusal.by.as_str().into(),
                window_from.into(),
                REFUSALS_KEPT_PER_CALLER.into(),
            ];
            let via = match &refusal.via {
                Some(via) => {
                    values.push(via.as_str().into());
                    "via = $5"
                }
                None => "via IS NULL",
            };
            // Read by `refusals_caller`, stopping at the rate.
            let recent: i64 = t
                .one(
                    &format!(
                        "SELECT count(*) FROM (SELECT 1 FROM refusals
                         WHERE space = $1 AND by = $2 AND {via} AND at >= $3 LIMIT $4) AS recent"
                    ),
                    &values,
                )
                .await?
                .get(0)?;
            if recent >= REFUSALS_KEPT_PER_CALLER {
                return Ok(false);
            }
            t.execute(
                "INSERT INTO refusals(space, app, at, by, via, door, command, client, sentence)
                 VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                args![
                    space,
                    refusal.app.as_str(),
                    now,
                    refusal.by.as_str(),
                    refusal.via.clone(),
                    refusal.through.door.as_str(),
                    refusal.through.command.clone().unwrap_or_default(),
                    refusal.through.client.clone(),
                    refusal.sentence.as_str()
                ],
            )
            .await?;
            t.execute(
                "DELETE FROM refusals WHERE space = $1 AND (at < $2 OR id <= (
                     SELECT id FROM refusals WHERE space = $1 ORDER BY id DESC LIMIT 1 OFFSET $3))",
                args![space, forgotten_before, REFUSALS_PER_SPACE],
            )
            .await?;
            Ok(true)
        })
        .await
    }

    async fn refusals(
        &self,
        space: &str,
        apps: &[String],
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<RefusalRecord>, StoreError> {
        if apps.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let (filter, mut values) = in_space("r", space, apps, before);
        // Forgotten on the space's next refusal, and unseen from now on.
        let now = jiff::Timestamp::now().as_microsecond();
        values.push(forgotten_before(now).into());
        let kept = format!("r.at >= ${}", values.len());
        let sql = format!(
            "SELECT {REFUSAL_COLUMNS} WHERE {filter} AND {kept} ORDER BY r.id DESC LIMIT {limit}"
        );
        self.read_all(&sql, &values).await
    }
}
