//! `graph_query` and `graph_apply`: the store's own read and write on a named
//! app, under the same access table as the app's commands.

use std::net::IpAddr;

use serde_json::Value;

use crate::act::AppAct;
use crate::answer::{Acted, Answer};
use crate::{Caller, Host, HostError};

impl Host {
    /// Reads an app's rows with a filter line: `jeff/runs: 12 rows`. A
    /// signed-out caller's searches are counted by the address it asks
    /// `from` (`None`: unknown, one count for all such).
    pub async fn graph_query(
        &self,
        caller: &Caller,
        from: Option<IpAddr>,
        app: &str,
        filter: &str,
    ) -> Result<Answer<Acted>, HostError> {
        self.graph_act(caller, from, app, AppAct::Read { filter })
            .await
    }

    /// Writes a bundle (or a list of them) to an app, as the caller:
    /// `jeff/runs: wrote 1 entity: $run=<eid>`.
    pub async fn graph_apply(
        &self,
        caller: &Caller,
        app: &str,
        bundle: Value,
    ) -> Result<Answer<Acted>, HostError> {
        // The web door's graph_apply is the page api's `apply`.
        let command = match caller.door() {
            Some(crate::Door::Web) => "apply",
            _ => "graph_apply",
        };
        self.graph_act(caller, None, app, AppAct::Write { bundle, command })
            .await
    }

    async fn graph_act(
        &self,
        caller: &Caller,
        from: Option<IpAddr>,
        app: &str,
        act: AppAct<'_>,
    ) -> Result<Answer<Acted>, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        let acted = self
            .act_on_app(caller, from, &app, standing, act, None)
            .await?;
        Ok(Answer {
            text: acted.sentence(&app.name, None),
            data: acted,
        })
    }
}
