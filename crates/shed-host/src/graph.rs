//! `graph_query` and `graph_apply`: the store's own read and write on a named
//! app, under the same access table as the app's commands.

use serde_json::Value;

use crate::access::{Act, may, sign_in_first};
use crate::texts::{count, wrote};
use crate::{Answer, Caller, Host, HostError};

impl Host {
    /// Reads an app's rows with a filter line: `jeff/runs: 12 rows`.
    pub async fn graph_query(
        &self,
        caller: &Caller,
        app: &str,
        filter: &str,
    ) -> Result<Answer, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        may(app.subject(), standing, Act::Read)?;
        let listing = self.inner.store.query(&app.name, filter).await?;
        let mut text = format!("{}: {}", app.name, count(listing.rows.len(), "row", "rows"));
        if let Some(next) = &listing.next {
            text.push_str(&format!(" — more with after={next}"));
        }
        Ok(Answer {
            text,
            data: listing.into(),
        })
    }

    /// Writes a bundle (or a list of them) to an app, as the caller:
    /// `jeff/runs: wrote 1 entity: $run=<eid>`.
    pub async fn graph_apply(
        &self,
        caller: &Caller,
        app: &str,
        bundle: Value,
    ) -> Result<Answer, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        may(app.subject(), standing, Act::Write)?;
        let actor = caller.actor().ok_or_else(sign_in_first)?;
        let applied = self
            .inner
            .store
            .apply(&app.name, &actor, bundle, None)
            .await?;
        let (how_many, ids) = wrote(&applied);
        let text = format!("{}: wrote {how_many}{ids}", app.name);
        let data =
            serde_json::to_value(&applied).map_err(|e| HostError::Internal(e.to_string()))?;
        Ok(Answer { text, data })
    }
}
