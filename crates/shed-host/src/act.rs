//! The one way to act on an app's data: [`Host::act_on_app`] takes the
//! caller, their standing, the app and the act — a filter line to read, a
//! bundle to write, or a command with its arguments — and the rule book
//! decides, the command's template is filled, and the store reads or writes
//! as the caller — a read that may scan once the caller has a place among
//! their searches (`crate::searches`). The graph tools, the apps' commands,
//! the built-ins and the agent path all come here; [`Acted::sentence`]
//! words what it came to. An entity's page reads here too
//! ([`Host::read_entity`]), and an undo writes here ([`Host::undo_write`]).
//!
//! **Invariant:** nothing else in shed-host calls `Store::query`,
//! `Store::apply`, `Store::entity` or `Store::undo` on an app's data (the
//! test `doors_hold_no_rules::only_the_act_reads_and_writes_app_data`).

use std::net::IpAddr;

use serde_json::Value;
use shed_manifest::{Command, Filled};

use shed_store::undo::{ChangedSince, EntityRecord, Undone};

use crate::access::{Act, Standing, may, sign_in_first};
use crate::answer::Acted;
use crate::entity_names::entity_named;
use crate::moments::relative_text;
use crate::registry::LiveApp;
use crate::searches::Searcher;
use crate::texts::{count, wrote};
use crate::{Caller, ChangedSinceRefusal, Host, HostError};

/// What a caller does to an app's data.
#[derive(Debug)]
pub(crate) enum AppAct<'a> {
    /// Read the rows a filter line matches.
    Read { filter: &'a str },
    /// Write a bundle, or a list of them, through `command` (the tool or
    /// built-in that carries it: `graph_apply`, the page api's `apply`).
    Write { bundle: Value, command: &'a str },
    /// Run one of the app's commands with its arguments.
    Command { command: &'a Command, args: Value },
}

impl AppAct<'_> {
    /// What the rule book is asked: may the caller read, or write?
    /// The command or tool the act goes through, as activity names it.
    fn command(&self) -> &str {
        match self {
            AppAct::Read { .. } => "graph_query",
            AppAct::Write { command, .. } => command,
            AppAct::Command { command, .. } => &command.name,
        }
    }

    fn asks(&self) -> Act {
        let reads = match self {
            AppAct::Read { .. } => true,
            AppAct::Write { .. } => false,
            AppAct::Command { command, .. } => command.read_only(),
        };
        if reads { Act::Read } else { Act::Write }
    }
}

impl Host {
    /// Acts on `app` as `caller`, whose standing in its space is
    /// `standing`: the rule book decides first, then a command's arguments
    /// fill its template, then the store reads or writes — a write recorded
    /// as the caller's, a read that may scan counted among the caller's
    /// searches (a signed-out caller's by the address it asks `from`).
    /// `expect: Some(n)` refuses unless the app's data version is `n`:
    /// checked in a write's own transaction, and before a read.
    pub(crate) async fn act_on_app(
        &self,
        caller: &Caller,
        from: Option<IpAddr>,
        app: &LiveApp,
        standing: Standing,
        act: AppAct<'_>,
        expect: Option<u64>,
    ) -> Result<Acted, HostError> {
        if let Err(refused) = may(app.subject(), standing, act.asks()) {
            self.keep_refusal(
                caller,
                standing,
                &app.name,
                act.command(),
                &refused.to_string(),
            )
            .await;
            return Err(refused);
        }
        let command = act.command().to_string();
        let writes = act.asks() == Act::Write;
        let (confirm, asked) = match &act {
            AppAct::Command { command, args } => (command.confirm, args.clone()),
            AppAct::Write { bundle, .. } => (false, bundle.clone()),
            AppAct::Read { .. } => (false, Value::Null),
        };
        let filled = match act {
            AppAct::Read { filter } => Filled::Query(filter.to_string()),
            AppAct::Write { bundle, .. } => Filled::Apply(bundle),
            AppAct::Command { command, args } => command
                .fill(&args, jiff::Timestamp::now())
                .map_err(|errors| HostError::BadInput(errors.to_string()))?,
        };
        let store = &self.inner.store;
        match filled {
            Filled::Query(line) => {
                self.check_expect(app, expect).await?;
                let scans = shed_store::filter::parse(&line).is_ok_and(|line| line.may_scan());
                let _searching = if scans {
                    let searcher = Searcher::of(caller, from);
                    Some(self.inner.searches.enter(searcher).await?)
                } else {
                    None
                };
                Ok(Acted::Read(store.query(&app.name, &line).await?))
            }
            Filled::Apply(bundle) => {
                let actor = caller.actor(&command).ok_or_else(sign_in_first)?;
                let app_says = app.agent_writes_need_approval;
                if crate::access::needs_approval(caller.is_agent(), writes, confirm, app_says) {
                    let waiting = self.ask_approval(caller, app, &command, &asked).await;
                    // Activity shows the approval asked, beside the calls
                    // that did not run.
                    if let HostError::Waiting(answer) = &waiting {
                        self.keep_refusal(caller, standing, &app.name, &command, &answer.text)
                            .await;
                    }
                    return Err(waiting);
                }
                let applied = store.apply(&app.name, &actor, bundle, expect).await?;
                self.inner.hubs.wrote(&app.name);
                Ok(Acted::Wrote(applied))
            }
        }
    }

    /// Runs an approved call of `command` with `args` on `app` (an app's
    /// command, or else a bundle written through the tool `command`) as
    /// its person of `standing` — the rule book's [`Act::Write`] again, as
    /// they stand now — written as `actor` (the agent that asked, approved
    /// by its person); no approval is asked again.
    pub(crate) async fn run_approved(
        &self,
        app: &LiveApp,
        standing: Standing,
        command: &str,
        args: Value,
        actor: shed_store::Actor,
    ) -> Result<shed_store::Applied, HostError> {
        may(app.subject(), standing, Act::Write)?;
        let parts = self.parts(app).await?;
        let bundle = match parts.manifest.command(command) {
            Some(command) => match command
                .fill(&args, jiff::Timestamp::now())
                .map_err(|errors| HostError::BadInput(errors.to_string()))?
            {
                Filled::Apply(bundle) => bundle,
                Filled::Query(_) => {
                    return Err(HostError::BadInput(format!(
                        "{} only reads now — nothing was written",
                        command.name
                    )));
                }
            },
            None => args,
        };
        let applied = self
            .inner
            .store
            .apply(&app.name, &actor, bundle, None)
            .await?;
        self.inner.hubs.wrote(&app.name);
        Ok(applied)
    }

    /// Reads one entity of `app` (by eid, or alias while live) for its
    /// page, as `caller` of `standing` — the rule book's [`Act::Read`]
    /// first: the app's own read of it now (`eid=<eid>`, carrying each of
    /// `components`; `None` once tombstoned), read together from one
    /// [`shed_store::filter::MAX_CLAUSES`]-bounded line per share of them,
    /// and its record (stamps, edges, versions) to those the rule book
    /// lets see the app's history ([`Act::SeeVersions`], as activity) —
    /// their row now carrying its stamps too. To anyone else it is its row
    /// now alone, without the stamps (who wrote it, and through what, is
    /// the space's to know), and a tombstoned entity is what an eid nobody
    /// made is: `no entity <eid> in <app>`.
    pub(crate) async fn read_entity(
        &self,
        app: &LiveApp,
        standing: Standing,
        entity: &str,
        components: &[&str],
    ) -> Result<(Option<Value>, Option<EntityRecord>), HostError> {
        may(app.subject(), standing, Act::Read)?;
        let store = &self.inner.store;
        let record = store.entity(&app.name, entity).await?;
        let sees_history = may(app.subject(), standing, Act::SeeVersions).is_ok();
        if record.tombstoned && !sees_history {
            return Err(HostError::NotFound(format!(
                "no entity {entity} in {}",
                app.name
            )));
        }
        let stamps = if sees_history {
            "&.created!&.updated!"
        } else {
            ""
        };
        let mut now: Option<Value> = None;
        // Room in a line for the eid and the two stamps beside components.
        for share in components.chunks(shed_store::filter::MAX_CLAUSES - 3) {
            let carried: Vec<String> = share.iter().map(|c| format!(".{c}?")).collect();
            let line = format!("eid={}{stamps}&{}", record.eid, carried.join("&"));
            let Some(row) = store.query(&app.name, &line).await?.rows.into_iter().next() else {
                break;
            };
            match (&mut now, row) {
                (Some(Value::Object(kept)), Value::Object(more)) => kept.extend(more),
                (slot, row) => *slot = Some(row),
            }
        }
        Ok((now, sees_history.then_some(record)))
    }

    /// Undoes write `version` of `app` as `caller` of `standing` — the rule
    /// book's [`Act::Undo`] first (a refusal kept, as a write's is) — as a
    /// new write through `undo` ([`shed_store::Store::undo`]).
    pub(crate) async fn undo_write(
        &self,
        caller: &Caller,
        app: &LiveApp,
        standing: Standing,
        version: u64,
    ) -> Result<Undone, HostError> {
        if let Err(refused) = may(app.subject(), standing, Act::Undo) {
            self.keep_refusal(caller, standing, &app.name, "undo", &refused.to_string())
                .await;
            return Err(refused);
        }
        let actor = caller.actor("undo").ok_or_else(sign_in_first)?;
        let undone = match self.inner.store.undo(&app.name, version, &actor).await {
            Err(shed_store::StoreError::ChangedSince(changed)) => {
                return Err(self.changed_since(app, &changed).await);
            }
            undone => undone?,
        };
        self.inner.hubs.wrote(&app.name);
        Ok(undone)
    }

    /// The refusal of an undo an entity changed since refused: `cannot undo
    /// jeff/runs@12: "Run by Ada" changed since — @bob (agent:job-3) wrote
    /// it 2 minutes ago (jeff/runs@14); undo that first` — the entity by
    /// its name ([`entity_named`]), the time relative to now.
    async fn changed_since(&self, app: &LiveApp, changed: &ChangedSince) -> HostError {
        let line = format!("eid={}&.doc?", changed.eid);
        // Its name is a courtesy: a failed read names it by its short eid.
        let row = match self.inner.store.query(&app.name, &line).await {
            Ok(listing) => listing.rows.into_iter().next(),
            Err(_) => None,
        };
        let alias = row.as_ref().and_then(|row| row["entity"]["alias"].as_str());
        let when = relative_text(&changed.by.at);
        HostError::ChangedSince(Box::new(ChangedSinceRefusal {
            sentence: changed.sentence(&entity_named(row.as_ref(), alias, &changed.eid), &when),
            when,
            at: changed.by.at.clone(),
        }))
    }

    /// Keeps the call of `caller`, a member of `app`'s space (`standing`),
    /// or an agent of one, refused with `sentence`, among the space's
    /// activity — the command or tool, never its arguments. Nobody else's
    /// is kept: a signed-out caller's or an outsider's could push out the
    /// members' (the space keeps a bounded number,
    /// `shed_store::activity::REFUSALS_PER_SPACE`), and an outsider's
    /// refusal of a private app reads as a made-up app's. The store keeps
    /// few of one caller's an hour
    /// (`shed_store::activity::REFUSALS_KEPT_PER_CALLER`), so not even a
    /// member's agent pushes out the rest.
    pub(crate) async fn keep_refusal(
        &self,
        caller: &Caller,
        standing: Standing,
        app: &str,
        command: &str,
        sentence: &str,
    ) {
        if !matches!(standing, Standing::Member(_)) {
            return;
        }
        let Some(actor) = caller.actor(command) else {
            return;
        };
        let refusal = shed_store::activity::NewRefusal {
            app: app.to_string(),
            by: actor.person,
            via: actor.via,
            through: actor.through.unwrap_or_default(),
            sentence: sentence.to_string(),
        };
        if let Err(error) = self.inner.store.record_refusal(refusal).await {
            tracing::warn!(%error, app, "could not keep a refused call");
        }
    }

    /// `expect: Some(n)`, checked before a call runs (a write to the store
    /// checks it again, atomically, in its own transaction).
    pub(crate) async fn check_expect(
        &self,
        app: &LiveApp,
        expect: Option<u64>,
    ) -> Result<(), HostError> {
        let Some(expected) = expect else {
            return Ok(());
        };
        let version = self.inner.store.data_version(&app.name).await?;
        if version == expected {
            Ok(())
        } else {
            Err(HostError::Conflict(format!(
                "{} is at version {version}, you expected {expected}",
                app.name
            )))
        }
    }

    /// Reads `app`'s rows by `line` for its live streams (`live.rs`), once
    /// for every stream watching with that line. The rule book let each
    /// stream's caller read the app when it opened, and asks again at every
    /// change of a membership or of the app and every recheck (shed-web's
    /// `WATCH_RECHECK`), closing the streams of those who lost it.
    pub(crate) async fn read_for_streams(
        &self,
        app: &str,
        line: &str,
    ) -> Result<shed_store::Listing, HostError> {
        Ok(self.inner.store.query(app, line).await?)
    }
}

impl Acted {
    /// What it came to, in words: `jeff/runs: 12 rows — more with
    /// after=<cursor>` and `jeff/runs: wrote 1 entity: $run=<eid>` for the
    /// graph tools; `leaderboard: 12 rows in jeff/runs` and `log_run: wrote
    /// 1 entity in jeff/runs: $run=<eid>` for a command (`by`), whose
    /// caller pages by the command's own arguments.
    pub(crate) fn sentence(&self, app: &str, by: Option<&str>) -> String {
        let (what, after) = match self {
            Acted::Read(listing) => {
                let rows = count(listing.rows.len(), "row", "rows");
                let more = match (&listing.next, by) {
                    (Some(next), None) => format!(" — more with after={next}"),
                    _ => String::new(),
                };
                (rows, more)
            }
            Acted::Wrote(applied) => {
                let (how_many, ids) = wrote(applied);
                (format!("wrote {how_many}"), ids)
            }
        };
        match by {
            Some(command) => format!("{command}: {what} in {app}{after}"),
            None => format!("{app}: {what}{after}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{Applied, Listing};
    use serde_json::json;

    #[test]
    fn the_sentences_are_the_specs() {
        let applied = Acted::Wrote(Applied {
            entities: vec!["e1".into()],
            aliases: [("$run".to_string(), "e1".to_string())].into(),
            version: 2,
        });
        assert_eq!(
            applied.sentence("jeff/runs", Some("log_run")),
            "log_run: wrote 1 entity in jeff/runs: $run=e1"
        );
        assert_eq!(
            applied.sentence("jeff/runs", None),
            "jeff/runs: wrote 1 entity: $run=e1"
        );
        let read = Acted::Read(Listing {
            rows: vec![json!({}); 12],
            next: Some("c".into()),
            authors: Vec::new(),
        });
        assert_eq!(
            read.sentence("jeff/runs", Some("leaderboard")),
            "leaderboard: 12 rows in jeff/runs"
        );
        assert_eq!(
            read.sentence("jeff/runs", None),
            "jeff/runs: 12 rows — more with after=c"
        );
    }
}
