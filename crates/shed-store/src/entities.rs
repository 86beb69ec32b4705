//! The entity–component engine's interface, which each backend implements:
//! declaring an app's vocabulary, applying bundles, reading with a filter
//! line, the app data version and an entity's newest history entries. The declaration makes
//! the trait and the [`Store`](crate::Store) method that calls it. An
//! entity's history is read the same on every backend ([`history`]).

use serde_json::Value;

use crate::apply::no_entity;
use crate::names::is_eid;
use crate::txn::Txn;
use crate::undo::VERSIONS_SHOWN;
use crate::values::render_time;
use crate::{Actor, Applied, HistoryEntry, Listing, StoreError, Vocabulary};

interface! {
    /// Entities, their components, edges and history, per app.
    trait Entities {
        /// Takes an app's vocabulary at deploy: creates the components and columns
        /// it does not have yet, and refuses to change the type of a column that
        /// holds values. `app` is `space/slug`, e.g. `jeff/runs`.
        async fn declare(&self, app: &str, vocab: &Vocabulary) -> Result<(), StoreError>;
        /// Applies one bundle or a list of them, all or nothing (DESIGN's "Apply
        /// (the wire)"). `expect: Some(n)` refuses with [`StoreError::Conflict`]
        /// unless the app data version is `n` before the write.
        #[tracing::instrument(level = "debug", name = "store apply", skip_all, fields(app = app))]
        async fn apply(
            &self,
            app: &str,
            actor: &Actor,
            body: serde_json::Value,
            expect: Option<u64>,
        ) -> Result<Applied, StoreError>;
        /// Reads an app's rows with a filter line (DESIGN's "The filter line"),
        /// stopped at [`READ_DEADLINE`](crate::deadline::READ_DEADLINE).
        async fn query(&self, app: &str, filter: &str) -> Result<Listing, StoreError>;
        /// The app data version: +1 on every committed write; 0 for an app never written.
        async fn data_version(&self, app: &str) -> Result<u64, StoreError>;
        /// The newest writes to one entity (named by eid or alias), oldest
        /// first: its newest [`VERSIONS_SHOWN`](crate::undo::VERSIONS_SHOWN)
        /// history entries, read by the history's key.
        async fn history(
            &self,
            app: &str,
            eid_or_alias: &str,
        ) -> Result<Vec<HistoryEntry>, StoreError>;
    }
}

/// The newest [`VERSIONS_SHOWN`] writes to one entity of an app (named by
/// eid or alias), oldest first.
pub(crate) async fn history(
    txn: &impl Txn,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let column = if is_eid(name) { "eid" } else { "alias" };
    let id: i64 = txn
        .optional(
            &format!(
                "SELECT e.id FROM ec_entities e JOIN ec_apps a ON a.id = e.app WHERE a.name = $1 AND e.{column} = $2"
            ),
            &[app.into(), name.into()],
        )
        .await?
        .ok_or_else(|| no_entity(name, app))?
        .get(0)?;
    let newest = format!(
        "SELECT version, at, by, via, change FROM ec_history WHERE entity = $1
         ORDER BY app_version DESC, step DESC LIMIT {VERSIONS_SHOWN}"
    );
    let rows = txn.all(&newest, &[id.into()]).await?;
    rows.iter()
        .rev()
        .map(|r| {
            Ok(HistoryEntry {
                version: r.get::<i64>(0)? as u64,
                at: render_time(r.get(1)?),
                by: r.get(2)?,
                via: r.get(3)?,
                change: serde_json::from_str(&r.get::<String>(4)?).unwrap_or(Value::Null),
            })
        })
        .collect()
}
