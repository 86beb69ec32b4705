//! A job's two calls, which the broker serves: its listing
//! ([`Host::job_commands`]) and one run ([`Host::job_run`]). Everything the
//! job decides is here — there is a job, it is not ended or expired, its
//! scope admits the command, its read-only grant covers a `--read-only` run,
//! and an input the row marks `x-source: "job.person"` is the job's person —
//! with the sentences that refuse. The answer is typed; the broker turns it
//! into the wire's JSON and its `code` words.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::builtins::Builtin;
use super::command::{AgentCall, CommandRow, Effect, Origin, split_app_command};
use super::jobs::{Job, now_millis};
use super::label::Label;
use super::rows::app_command_row;
use super::run::AgentAnswer;
use super::scope::{BadGlob, JobScope};
use crate::access::{JobRun, JobVerdict, job_verdict};
use crate::answer::{Answer, Data};
use crate::{Host, HostError};

/// Why a job's call ran nothing, or what the command layer answered instead.
#[derive(Debug, thiserror::Error)]
pub enum JobRefusal {
    /// The job's own refusal: no job, one ended or expired, a command outside
    /// its scope or its read-only grant.
    #[error("{0}")]
    Forbidden(String),
    /// The host failed before the command could run.
    #[error("{0}")]
    Failed(String),
    /// The command layer's refusal or failure.
    #[error(transparent)]
    Host(HostError),
}

/// One run a job's agent asks for (`shed command run`).
#[derive(Clone, Debug)]
pub struct RunCall {
    /// `demo/runs.log_run` or a built-in's name.
    pub name: String,
    /// The command's arguments, an object.
    pub args: Value,
    /// `--loom`: the app a built-in of scope loom acts on.
    pub loom: Option<String>,
    /// `--expect`: refuse unless the app's data version is this.
    pub expect: Option<u64>,
    /// `--read-only`: run only if the job's read-only grant covers it.
    pub read_only: bool,
}

/// What a job's run came to.
#[derive(Debug)]
pub struct JobOutcome {
    /// The command's answer, or why there is none.
    pub answer: Result<Answer, JobRefusal>,
    /// The label of what the answer holds.
    pub label: Label,
    /// The app's data version after the call, where it named an app.
    pub version: Option<u64>,
    /// The entities a write wrote, by eid.
    pub completed: Vec<String>,
    /// True only when a write was committed, or may have been.
    pub may_have_landed: bool,
    /// Who the command ran as, `agent:<job name>`; `None` when it did not run.
    pub actor: Option<String>,
}

impl JobOutcome {
    /// An outcome nothing ran behind.
    fn refused(refusal: JobRefusal, label: Label) -> JobOutcome {
        JobOutcome {
            answer: Err(refusal),
            label,
            version: None,
            completed: Vec::new(),
            may_have_landed: false,
            actor: None,
        }
    }

    /// The outcome of a command that ran, of this effect.
    fn ran(effect: Effect, answered: AgentAnswer) -> JobOutcome {
        let write = effect == Effect::Write;
        let (answer, completed, may_have_landed) = match answered.answer {
            Ok(answer) => {
                let completed = match &answer.data {
                    Data::Wrote(applied) if write => applied.entities.clone(),
                    _ => Vec::new(),
                };
                (Ok(answer), completed, write)
            }
            Err(error) => {
                let failed = matches!(error, HostError::Internal(_));
                (Err(JobRefusal::Host(error)), Vec::new(), write && failed)
            }
        };
        JobOutcome {
            answer,
            label: answered.label,
            version: answered.version,
            completed,
            may_have_landed,
            actor: None,
        }
    }
}

impl Host {
    /// `command list`: the rows the job's scope admits among those its person
    /// reaches, each stamped `readOnlyGranted`.
    pub async fn job_commands(&self, job_id: Option<&str>) -> Result<Vec<CommandRow>, JobRefusal> {
        let (job, scope) = self.running_job(job_id).await?;
        let rows = self
            .agent_commands(&job.caller())
            .await
            .map_err(|e| JobRefusal::Failed(e.to_string()))?;
        Ok(rows
            .into_iter()
            .filter(|row| scope.admits(&row.name, row.effect))
            .map(|row| stamped(row, &scope))
            .collect())
    }

    /// `command run`: one call, as the job's agent, reading the person's
    /// reach once.
    pub async fn job_run(&self, job_id: Option<&str>, run: RunCall) -> JobOutcome {
        let (job, scope) = match self.running_job(job_id).await {
            Ok(found) => found,
            Err(refusal) => return JobOutcome::refused(refusal, Label::public()),
        };
        let caller = job.caller();
        let (row, reach) = match split_app_command(&run.name) {
            Some(app_command) => match self.reach_and_snapshot(&caller).await {
                Ok((reach, snapshot)) => {
                    match app_command_row(self, &reach, &snapshot, app_command).await {
                        Ok(row) => (row, Some((reach, snapshot))),
                        Err(refused) => {
                            return JobOutcome::refused(
                                JobRefusal::Host(refused),
                                Label::of_caller(&caller),
                            );
                        }
                    }
                }
                Err(error) => {
                    return JobOutcome::refused(
                        JobRefusal::Failed(error.to_string()),
                        Label::public(),
                    );
                }
            },
            None => (Builtin::named(&run.name).map(Builtin::row), None),
        };
        let Some(row) = row else {
            if scope.names(&run.name) {
                let missing = HostError::NotFound(format!(
                    "no command {} that @{} reaches — `shed command list --json` lists what this job may run",
                    run.name, job.person.handle
                ));
                return JobOutcome::refused(JobRefusal::Host(missing), Label::of_caller(&caller));
            }
            return JobOutcome::refused(outside(&run.name, &job), Label::public());
        };
        let run_asked = JobRun {
            in_scope: scope.admits(&row.name, row.effect),
            writes: row.effect == Effect::Write,
            read_only: run.read_only,
            granted_read_only: scope.grants_read_only(&row.name, row.effect),
        };
        if let Err(refusal) = job_allows(&job, Some(run_asked), &row.name) {
            // An app's command the job may not run is kept in the app's
            // space, when its person is a member there; they see what
            // their agent tried.
            if let (Some((app, command)), Some((reach, snapshot))) =
                (split_app_command(&row.name), &reach)
                && let Some(live) = snapshot.app(app)
            {
                let standing = reach.standing(&live.space);
                self.keep_refusal(&caller, standing, app, command, &refusal.to_string())
                    .await;
            }
            return JobOutcome::refused(refusal, Label::public());
        }
        let call = AgentCall {
            args: filled_from_job(&row, run.args, &job),
            name: row.name,
            loom: run.loom,
            expect: run.expect,
            origin: Origin::Session,
            consented: Vec::new(),
        };
        let answered = self.agent_run_within(&caller, &call, reach).await;
        JobOutcome {
            actor: Some(format!("agent:{}", job.name)),
            ..JobOutcome::ran(row.effect, answered)
        }
    }

    /// The job a request names, running, with its scope; else the sentence
    /// refusing it.
    async fn running_job(&self, id: Option<&str>) -> Result<(Job, Arc<JobScope>), JobRefusal> {
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return Err(JobRefusal::Forbidden(
                "no job — the request carries no LOOM_COMMAND_JOB_ID; the broker runs commands only for a job \
                 (`shed job create --person <handle>` makes one, and the harness passes its id)"
                    .to_string(),
            ));
        };
        let job = match self.job_by_secret(id).await {
            Ok(Some(job)) => job,
            Ok(None) => {
                return Err(JobRefusal::Forbidden(
                    "no job — the request's LOOM_COMMAND_JOB_ID is not the secret of a job this host made \
                     (a job's name is not its secret); `shed job create --person <handle>` makes one and prints its secret"
                        .to_string(),
                ));
            }
            Err(error) => return Err(JobRefusal::Failed(error.to_string())),
        };
        job_allows(&job, None, "")?;
        let scope = self
            .inner
            .job_scopes
            .of(&job)
            .map_err(|e| JobRefusal::Failed(e.0))?;
        Ok((job, scope))
    }
}

/// The job table's verdict on `run` of the command `name` (`None`: on the
/// job doing anything), as the job's refusal with its sentence.
fn job_allows(job: &Job, run: Option<JobRun>, name: &str) -> Result<(), JobRefusal> {
    let why = match job_verdict(job.state(now_millis()), run) {
        JobVerdict::Allow => return Ok(()),
        JobVerdict::OutsideScope => return Err(outside(name, job)),
        JobVerdict::Ended => format!(
            "job {} was ended at {} — its agent runs nothing more; `shed job create` makes a new job",
            job.name,
            job.ended_at.map_or_else(String::new, when)
        ),
        JobVerdict::Expired => format!(
            "job {} expired at {} — `shed job create --ttl <duration>` makes a new job that runs longer",
            job.name,
            job.expires_at.map_or_else(String::new, when)
        ),
        JobVerdict::ReadOnlyRunsReads => format!(
            "{name} changes data, and a read-only run runs only reads — run it without --read-only if the job allows it"
        ),
        JobVerdict::NoReadOnlyGrant => format!(
            "job {} grants no read-only run of {name} — its --read-only globs do not name it",
            job.name
        ),
    };
    Err(JobRefusal::Forbidden(why))
}

/// A moment in a sentence (Unix milliseconds, as an RFC 3339 time).
fn when(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis).map_or_else(|_| millis.to_string(), |t| t.to_string())
}

/// The refusal of a command outside the job's scope.
fn outside(name: &str, job: &Job) -> JobRefusal {
    JobRefusal::Forbidden(format!(
        "{name} is outside job {}'s scope ({}) — this job runs only what `shed command list --json` shows",
        job.name,
        job.allow
            .iter()
            .chain(&job.read_only)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The row as a job lists it, with its read-only stamp.
fn stamped(mut row: CommandRow, scope: &JobScope) -> CommandRow {
    let granted = scope.grants_read_only(&row.name, row.effect);
    row.row
        .insert("readOnlyGranted".into(), Value::Bool(granted));
    row
}

/// The args with every input the row fills from the job (listed as
/// `x-source: "job.person"`) set to the job's person, whatever the request
/// said.
fn filled_from_job(row: &CommandRow, args: Value, job: &Job) -> Value {
    if row.job_person.is_empty() {
        return args;
    }
    let mut fields = match args {
        Value::Object(fields) => fields,
        Value::Null => Map::new(),
        other => return other, // the command says what is wrong with it
    };
    for name in row.job_person {
        fields.insert(
            (*name).to_string(),
            Value::String(job.person.handle.clone()),
        );
    }
    Value::Object(fields)
}

/// Each job's compiled scope, kept once compiled: a job's globs never change.
#[derive(Default)]
pub(crate) struct JobScopes(Mutex<HashMap<String, Arc<JobScope>>>);

impl JobScopes {
    /// The job's compiled scope.
    pub(crate) fn of(&self, job: &Job) -> Result<Arc<JobScope>, BadGlob> {
        if let Some(scope) = self.0.lock().ok().and_then(|s| s.get(&job.name).cloned()) {
            return Ok(scope);
        }
        let scope = Arc::new(JobScope::new(&job.allow, &job.read_only)?);
        if let Ok(mut scopes) = self.0.lock() {
            scopes.insert(job.name.clone(), scope.clone());
        }
        Ok(scope)
    }
}
