//! Approvals: an agent's write that waits for its person. The rule book
//! says when a call needs one (`access::needs_approval`) and who may
//! decide it (`access::may_decide_approval`); here an approval is kept
//! ([`Host::ask_approval`], from `act.rs`), listed for its person
//! ([`Host::pending_approvals`]), decided — approved, it runs once, exactly
//! as asked, attributed to the agent `approved by @<person>`
//! ([`Host::decide_approval`]) — and read back by the agent
//! ([`Host::approval_outcome`]); one left unanswered expires
//! ([`APPROVAL_MINUTES`]), kept so — a row of activity — when its app's
//! activity is next read ([`Host::activity`]). The app's owner says
//! whether writes by agents to it need approval
//! ([`Host::set_agent_writes_need_approval`]).

use serde_json::Value;
use shed_store::approvals::{ApprovalRecord, ApprovalState as Kept, Asked, NewApproval};

use crate::access::{Act, may, may_decide_approval, no_approval, sign_in_first};
use crate::answer::{Answer, ApprovalState};
use crate::registry::LiveApp;
use crate::shown::cut;
use crate::{Caller, Door, Host, HostError};

/// How long an approval waits for its person before it expires, in
/// minutes: then nothing runs, and the agent asks again.
pub const APPROVAL_MINUTES: i64 = 60;

/// An approval as its person's pages show it.
#[derive(Debug, Clone)]
pub struct ApprovalShown {
    /// Its id.
    pub id: i64,
    /// The app (`space/slug`).
    pub app: String,
    /// The command or tool asked for.
    pub command: String,
    /// Its arguments as they will run (JSON, pretty).
    pub args: String,
    /// Who asked: `job job-3`, `client Claude (claimed)`, `a token`.
    pub asked_by: String,
    /// When it was asked and when it expires (Unix seconds).
    pub created_at: i64,
    /// When it expires unanswered (Unix seconds).
    pub expires_at: i64,
    /// `pending`, `approved`, `denied`, `expired`.
    pub state: &'static str,
    /// What running it answered, once approved.
    pub outcome: Option<String>,
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// `runner="Ada", miles=3`: a call's arguments in a line, cut as a value
/// shown in place is.
fn args_line(args: &Value) -> String {
    let line = match args {
        Value::Object(fields) if fields.is_empty() => "no arguments".to_string(),
        Value::Object(fields) => fields
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    };
    cut(&line).to_string()
}

/// Who asked, in words: `job job-3`, `Claude (claimed)`, `an MCP client`.
fn asked_by(record: &ApprovalRecord) -> String {
    match (&record.via, &record.client) {
        (Some(via), _) => via.replace("agent:", "job "),
        (None, Some(client)) => client.clone(),
        (None, None) => "an MCP client".to_string(),
    }
}

impl Host {
    /// Where the person approves approval `id`.
    pub fn approval_address(&self, id: i64) -> String {
        format!("{}/approvals/{id}", self.public_url())
    }

    /// Keeps `caller`'s call of `command` with `args` on `app` for its
    /// person's approval: the answer saying what waits and where (as
    /// [`HostError::Waiting`]), or the sentence refusing it when the
    /// person or the agent has too many waiting.
    pub(crate) async fn ask_approval(
        &self,
        caller: &Caller,
        app: &LiveApp,
        command: &str,
        args: &Value,
    ) -> HostError {
        let (Some(actor), Some(asker)) = (caller.actor(command), caller.asker()) else {
            return sign_in_first();
        };
        let through = actor.through.unwrap_or_default();
        let at = now();
        let asked = NewApproval {
            person: actor.person,
            app: app.name.clone(),
            command: command.to_string(),
            args: args.to_string(),
            asker,
            via: actor.via,
            door: through.door,
            client: through.client,
            created_at: at,
            expires_at: at + APPROVAL_MINUTES * 60,
        };
        let id = match self.inner.store.ask_approval(asked).await {
            Ok(Asked::Kept(id)) => id,
            Ok(Asked::PersonFull) => {
                return HostError::Busy(format!(
                    "your person has {} approvals waiting already — ask them to approve or deny some at {}/approvals, then call {command} again",
                    shed_store::approvals::PENDING_PER_PERSON,
                    self.public_url()
                ));
            }
            Ok(Asked::AgentFull) => {
                return HostError::Busy(format!(
                    "you have {} approvals waiting already — ask your person to approve or deny them at {}/approvals, then call {command} again",
                    shed_store::approvals::PENDING_PER_AGENT,
                    self.public_url()
                ));
            }
            Err(error) => return error.into(),
        };
        let address = self.approval_address(id);
        let then = match caller.door() {
            Some(Door::Agent) => "",
            _ => "; then ask me to check",
        };
        HostError::Waiting(Answer {
            text: format!(
                "waiting for your approval: {command} with {} in {} — open {address} to approve{then}",
                args_line(args),
                app.name
            ),
            data: ApprovalState {
                approval: id,
                state: "waiting",
                address,
                version: None,
            },
        })
    }

    /// The approval `id` of `caller`'s person, or the sentence saying
    /// there is none of theirs.
    async fn own_approval(&self, caller: &Caller, id: i64) -> Result<ApprovalRecord, HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?;
        let record = self
            .inner
            .store
            .approval(id, now())
            .await?
            .ok_or_else(|| no_approval(id))?;
        may_decide_approval(&person.eid, &record.person.eid, id)?;
        Ok(record)
    }

    /// Where approval `id` stands, for the agent that asked (any agent of
    /// its person): still waiting, ran with its answer, denied, expired.
    pub async fn approval_outcome(
        &self,
        caller: &Caller,
        id: i64,
    ) -> Result<Answer<ApprovalState>, HostError> {
        let record = self.own_approval(caller, id).await?;
        let address = self.approval_address(id);
        let handle = &record.person.handle;
        let (state, text) = match (record.state, &record.outcome, record.version) {
            (Kept::Pending, _, _) => (
                "waiting",
                format!(
                    "approval {id} is still waiting: {} in {} — open {address} to approve; then ask me to check",
                    record.command, record.app
                ),
            ),
            (Kept::Approved, Some(outcome), Some(_)) => {
                ("ran", format!("approval {id} ran: {outcome}"))
            }
            (Kept::Approved, Some(outcome), None) => (
                "failed",
                format!("approval {id} was approved by @{handle} but did not run: {outcome}"),
            ),
            (Kept::Approved, None, _) => (
                "waiting",
                format!(
                    "approval {id} was approved by @{handle} and is running — ask again in a moment"
                ),
            ),
            (Kept::Denied, _, _) => (
                "denied",
                format!("approval {id} was denied by @{handle}: nothing was written"),
            ),
            (Kept::Expired, _, _) => (
                "expired",
                format!(
                    "approval {id} expired before @{handle} answered: nothing was written — call {} again to ask anew",
                    record.command
                ),
            ),
        };
        Ok(Answer {
            text,
            data: ApprovalState {
                approval: id,
                state,
                address,
                version: record.version,
            },
        })
    }

    /// The approvals waiting for the signed-in person, oldest first.
    pub async fn pending_approvals(
        &self,
        caller: &Caller,
    ) -> Result<Vec<ApprovalShown>, HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?;
        let records = self
            .inner
            .store
            .pending_approvals(&person.eid, now())
            .await?;
        Ok(records.iter().map(shown).collect())
    }

    /// How many approvals wait for the signed-in person (none for nobody).
    pub async fn approvals_waiting(&self, caller: &Caller) -> Result<i64, HostError> {
        match caller.person() {
            Some(person) => Ok(self
                .inner
                .store
                .count_pending_approvals(&person.eid, now())
                .await?),
            None => Ok(0),
        }
    }

    /// One approval of the signed-in person, for its page.
    pub async fn approval(&self, caller: &Caller, id: i64) -> Result<ApprovalShown, HostError> {
        Ok(shown(&self.own_approval(caller, id).await?))
    }

    /// Approves (`approve`) or denies approval `id` as `caller`, its
    /// person in their own right (an agent decides nothing here): approved,
    /// it runs once, exactly as asked, attributed to the agent that asked,
    /// `approved by @<person>`. The sentence says what it came to.
    pub async fn decide_approval(
        &self,
        caller: &Caller,
        id: i64,
        approve: bool,
    ) -> Result<String, HostError> {
        let record = self.own_approval(caller, id).await?;
        if caller.is_agent() {
            return Err(HostError::Refused(format!(
                "an agent cannot decide an approval — its person approves or denies it at {}",
                self.approval_address(id)
            )));
        }
        self.decide(caller, record, approve).await
    }

    /// Approves or denies approval `id` as its person answered inside the
    /// client that asked it (MCP elicitation: the client showed them the
    /// command, its app and its arguments): only that client — the same
    /// agent that asked — carries their answer.
    pub async fn decide_in_client(
        &self,
        caller: &Caller,
        id: i64,
        approve: bool,
    ) -> Result<String, HostError> {
        let record = self.own_approval(caller, id).await?;
        if caller.asker().as_deref() != Some(record.asker.as_str()) {
            return Err(no_approval(id));
        }
        self.decide(caller, record, approve).await
    }

    /// Decides `record` once (the store's one statement), and runs it when
    /// approved.
    async fn decide(
        &self,
        caller: &Caller,
        record: ApprovalRecord,
        approve: bool,
    ) -> Result<String, HostError> {
        let id = record.id;
        let decided = self
            .inner
            .store
            .decide_approval(id, &record.person.eid, approve, now())
            .await?;
        let Some(record) = decided else {
            let now_stands = self.own_approval(caller, id).await?;
            return Err(HostError::Conflict(format!(
                "approval {id} is {} already — nothing was run again",
                now_stands.state.as_str()
            )));
        };
        if !approve {
            let denied = format!(
                "denied {} in {}: nothing was written",
                record.command, record.app
            );
            self.keep_decision(
                &record,
                &format!("approval {id} {denied} — by @{}", record.person.handle),
            )
            .await;
            return Ok(denied);
        }
        let (outcome, version) = match self.run_approval(&record).await {
            Ok((text, version)) => (text, Some(version)),
            Err(error) => (error.to_string(), None),
        };
        self.inner
            .store
            .approval_ran(id, outcome.clone(), version.map(|v| v as i64))
            .await?;
        Ok(match version {
            Some(_) => format!("approved — {outcome}"),
            None => format!("approved, but it did not run: {outcome}"),
        })
    }

    /// Keeps the approvals of `apps` left unanswered past their expiry
    /// as expired, each a row of its space's activity (as a denial is),
    /// once: called before activity is read, so an expiry shows though
    /// nobody touched the approval since.
    pub(crate) async fn expire_approvals(&self, apps: &[String]) -> Result<(), HostError> {
        for record in self.inner.store.expire_approvals(apps, now()).await? {
            self.keep_decision(
                &record,
                &format!(
                    "approval {} for {} in {} expired before @{} answered: nothing was written",
                    record.id, record.command, record.app, record.person.handle
                ),
            )
            .await;
        }
        Ok(())
    }

    /// Keeps a decision that ran nothing (a denial, an expiry) among the
    /// space's activity, as the call of the agent that asked, with
    /// `sentence`.
    async fn keep_decision(&self, record: &ApprovalRecord, sentence: &str) {
        let refusal = shed_store::activity::NewRefusal {
            app: record.app.clone(),
            by: record.person.eid.clone(),
            via: record.via.clone(),
            through: shed_store::Through {
                door: record.door.clone(),
                command: Some(record.command.clone()),
                client: record.client.clone(),
            },
            sentence: sentence.to_string(),
        };
        if let Err(error) = self.inner.store.record_refusal(refusal).await {
            tracing::warn!(%error, app = record.app, "could not keep an approval's decision");
        }
    }

    /// Runs an approved approval as its person's standing lets them now,
    /// attributed to the agent that asked: its sentence and the version
    /// its write committed as.
    async fn run_approval(&self, record: &ApprovalRecord) -> Result<(String, u64), HostError> {
        let person = Caller::signed_in(record.person.clone(), None, Door::Web);
        let (reach, snapshot) = self.reach_and_snapshot(&person).await?;
        let app = reach.resolve(&snapshot, &record.app)?;
        let standing = reach.standing(&app.space);
        let args: Value = serde_json::from_str(&record.args)
            .map_err(|e| HostError::Internal(format!("an approval's arguments: {e}")))?;
        let asked_by = record.client.as_deref().unwrap_or("an MCP client");
        let actor = shed_store::Actor {
            person: record.person.eid.clone(),
            via: record.via.clone(),
            through: Some(shed_store::Through {
                door: record.door.clone(),
                command: Some(record.command.clone()),
                client: Some(format!("{asked_by}, approved by @{}", record.person.handle)),
            }),
        };
        let applied = self
            .run_approved(&app, standing, &record.command, args, actor)
            .await?;
        let version = applied.version;
        let acted = crate::answer::Acted::Wrote(applied);
        Ok((acted.sentence(&app.name, Some(&record.command)), version))
    }

    /// Says whether writes by agents to `app` need its person's approval,
    /// as `caller` — an owner of its space ([`Act::SetAgentApproval`]).
    pub async fn set_agent_writes_need_approval(
        &self,
        caller: &Caller,
        app: &str,
        on: bool,
    ) -> Result<String, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let app = reach.resolve(&snapshot, app)?;
        may(
            app.subject(),
            reach.standing(&app.space),
            Act::SetAgentApproval,
        )?;
        self.inner
            .store
            .set_agent_writes_need_approval(&app.name, on, &reach.person.eid)
            .await?;
        Ok(if on {
            format!(
                "writes by agents to {} now wait for their person's approval",
                app.name
            )
        } else {
            format!(
                "writes by agents to {} no longer wait for approval (commands that say confirm still do)",
                app.name
            )
        })
    }
}

fn shown(record: &ApprovalRecord) -> ApprovalShown {
    let args = serde_json::from_str::<Value>(&record.args)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| record.args.clone());
    ApprovalShown {
        id: record.id,
        app: record.app.clone(),
        command: record.command.clone(),
        args,
        asked_by: asked_by(record),
        created_at: record.created_at,
        expires_at: record.expires_at,
        state: record.state.as_str(),
        outcome: record.outcome.clone(),
    }
}
