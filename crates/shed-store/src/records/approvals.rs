//! Approvals (the shapes and what each means: `src/approvals.rs`), written
//! once for both backends ([`Records`]).

use super::{FromRow, ReadRows, Statement, person_at, write_statement};
use crate::StoreError;
use crate::approvals::{
    ApprovalRecord, ApprovalState, Asked, NewApproval, PENDING_PER_AGENT, PENDING_PER_PERSON,
};
use crate::lifecycle::Change;
use crate::txn::{Records, Row, Txn, args, marks};
use crate::values::Sql;

/// The columns an [`ApprovalRecord`] is read from, `a` the approval and
/// `p` its person; a pending one past its expiry reads `expired`.
const COLUMNS: &str = "a.id, p.eid, p.handle, p.name, a.app, a.command, a.args, a.asker, a.via,
    a.door, a.client, a.created_at, a.expires_at,
    CASE WHEN a.state = 'pending' AND a.expires_at <= $1 THEN 'expired' ELSE a.state END,
    a.decided_at, a.outcome, a.version";

impl FromRow for ApprovalRecord {
    fn from_row(r: Row) -> Result<ApprovalRecord, StoreError> {
        let state: String = r.get(13)?;
        Ok(ApprovalRecord {
            id: r.get(0)?,
            person: person_at(&r, 1)?,
            app: r.get(4)?,
            command: r.get(5)?,
            args: r.get(6)?,
            asker: r.get(7)?,
            via: r.get(8)?,
            door: r.get(9)?,
            client: r.get(10)?,
            created_at: r.get(11)?,
            expires_at: r.get(12)?,
            state: ApprovalState::of(&state)?,
            decided_at: r.get(14)?,
            outcome: r.get(15)?,
            version: r.get(16)?,
        })
    }
}

async fn one_approval(
    t: &impl Txn,
    id: i64,
    now: i64,
) -> Result<Option<ApprovalRecord>, StoreError> {
    t.optional_as(
        &format!(
            "SELECT {COLUMNS} FROM approvals a JOIN people p ON p.eid = a.person WHERE a.id = $2"
        ),
        args![now, id],
    )
    .await
}

impl<B: Records> crate::approvals::Approvals for B {
    async fn ask_approval(&self, new: NewApproval) -> Result<Asked, StoreError> {
        self.write_records(async move |t| {
            t.lock_table("approvals").await?;
            let pending = "SELECT COUNT(*) FROM approvals
                 WHERE person = $1 AND state = 'pending' AND expires_at > $2";
            let mine: i64 = t
                .one_as(pending, args![&new.person, new.created_at])
                .await?;
            if mine >= PENDING_PER_PERSON {
                return Ok(Asked::PersonFull);
            }
            let agents: i64 = t
                .one_as(
                    &format!("{pending} AND asker = $3"),
                    args![&new.person, new.created_at, &new.asker],
                )
                .await?;
            if agents >= PENDING_PER_AGENT {
                return Ok(Asked::AgentFull);
            }
            let id: i64 = t
                .one_as(
                    "INSERT INTO approvals(person, app, command, args, asker, via, door, client,
                         created_at, expires_at)
                     VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                    args![
                        &new.person,
                        &new.app,
                        &new.command,
                        &new.args,
                        &new.asker,
                        new.via.clone(),
                        &new.door,
                        new.client.clone(),
                        new.created_at,
                        new.expires_at
                    ],
                )
                .await?;
            Ok(Asked::Kept(id))
        })
        .await
    }

    async fn approval(&self, id: i64, now: i64) -> Result<Option<ApprovalRecord>, StoreError> {
        self.read_records(async |t| one_approval(t, id, now).await)
            .await
    }

    async fn pending_approvals(
        &self,
        person: &str,
        now: i64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.read_all(
            &format!(
                "SELECT {COLUMNS} FROM approvals a JOIN people p ON p.eid = a.person
                 WHERE a.person = $2 AND a.state = 'pending' AND a.expires_at > $1
                 ORDER BY a.id"
            ),
            args![now, person],
        )
        .await
    }

    async fn count_pending_approvals(&self, person: &str, now: i64) -> Result<i64, StoreError> {
        let count = self
            .read_optional(
                "SELECT COUNT(*) FROM approvals
                 WHERE person = $1 AND state = 'pending' AND expires_at > $2",
                args![person, now],
            )
            .await?;
        Ok(count.unwrap_or(0))
    }

    async fn decide_approval(
        &self,
        id: i64,
        person: &str,
        approve: bool,
        now: i64,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let person = person.to_string();
        let state = if approve {
            ApprovalState::Approved
        } else {
            ApprovalState::Denied
        };
        self.write_records(async move |t| {
            let claimed = t
                .execute(
                    "UPDATE approvals SET state = $1, decided_at = $2
                     WHERE id = $3 AND person = $4 AND state = 'pending' AND expires_at > $2",
                    args![state.as_str(), now, id, &person],
                )
                .await?;
            if claimed == 0 {
                return Ok(None);
            }
            one_approval(t, id, now).await
        })
        .await
    }

    async fn expire_approvals(
        &self,
        apps: &[String],
        now: i64,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        if apps.is_empty() {
            return Ok(Vec::new());
        }
        let overdue = format!(
            "a.app IN ({}) AND a.state = 'pending' AND a.expires_at <= $1",
            marks(2, apps.len())
        );
        let read = format!(
            "SELECT {COLUMNS} FROM approvals a JOIN people p ON p.eid = a.person
             WHERE {overdue} ORDER BY a.id"
        );
        let mut values: Vec<Sql> = vec![now.into()];
        values.extend(apps.iter().map(Sql::from));
        // Most reads find none: only then is the table held and written.
        let found: Vec<ApprovalRecord> = self.read_all(&read, &values).await?;
        if found.is_empty() {
            return Ok(found);
        }
        self.write_records(async move |t| {
            t.lock_table("approvals").await?;
            let expired: Vec<ApprovalRecord> = t.all_as(&read, &values).await?;
            t.execute(
                &format!(
                    "UPDATE approvals SET state = 'expired' WHERE id IN (SELECT a.id FROM approvals a WHERE {overdue})"
                ),
                &values,
            )
            .await?;
            Ok(expired)
        })
        .await
    }

    async fn approval_ran(
        &self,
        id: i64,
        outcome: String,
        version: Option<i64>,
    ) -> Result<(), StoreError> {
        write_statement(
            self,
            "UPDATE approvals SET outcome = $1, version = $2 WHERE id = $3",
            args![outcome, version, id],
        )
        .await?;
        Ok(())
    }

    async fn set_agent_writes_need_approval(
        &self,
        app: &str,
        on: bool,
        by: &str,
    ) -> Result<(), StoreError> {
        let [app, by] = [app, by].map(str::to_string);
        self.write_records(async move |t| change_setting(t, &app, on, &by).await)
            .await
    }

    async fn approval_key(&self, fresh: Vec<u8>) -> Result<Vec<u8>, StoreError> {
        self.write_records(async move |t| {
            t.execute(
                "INSERT INTO approval_key(id, key) VALUES(1, $1) ON CONFLICT(id) DO NOTHING",
                args![fresh.as_slice()],
            )
            .await?;
            t.one_as("SELECT key FROM approval_key WHERE id = 1", args![])
                .await
        })
        .await
    }
}

/// Says whether writes by agents to `app` need approval (`on`); a change
/// is recorded as one of the app's ([`Change::Settings`]), by `by`.
async fn change_setting(t: &impl Txn, app: &str, on: bool, by: &str) -> Result<(), StoreError> {
    let sql = if on {
        "INSERT INTO agent_writes_need_approval(app) VALUES($1) ON CONFLICT(app) DO NOTHING"
    } else {
        "DELETE FROM agent_writes_need_approval WHERE app = $1"
    };
    if t.execute(sql, args![app]).await? > 0 {
        super::lifecycle::record_change(t, app, Change::Settings, by).await?;
    }
    Ok(())
}
