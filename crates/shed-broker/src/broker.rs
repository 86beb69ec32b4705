//! The broker: answers one request for a job. It holds no rule of access of
//! its own but the job's: a job there is, not ended or expired, and a command
//! its scope admits. Everything else — who reaches which app, who may write
//! it, a built-in's declarations — is shed-host's, exactly as at the MCP door.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use shed_host::Host;
use shed_host::agents::{AgentCall, CommandRow, Effect, Job, JobState, Label, Origin, now_millis};

use crate::outcome::{Code, Outcome, public};
use crate::protocol::{Request, RunRequest};
use crate::scope::Scope;

/// The broker of one host. Cheap to share behind an `Arc`.
pub struct Broker {
    host: Host,
    /// Each job's compiled scope: a job's globs never change.
    scopes: Mutex<HashMap<String, Arc<Scope>>>,
}

/// How a job id is shown in a sentence: enough to tell jobs apart.
fn shown_job(id: &str) -> String {
    let cut: String = id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    if cut.is_empty() {
        "\"\"".to_string()
    } else {
        format!("{cut}…")
    }
}

fn when(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis).map_or_else(|_| millis.to_string(), |t| t.to_string())
}

impl Broker {
    pub fn new(host: Host) -> Broker {
        Broker {
            host,
            scopes: Mutex::new(HashMap::new()),
        }
    }

    /// The answer to a request, as the JSON to send back.
    pub async fn answer(&self, request: Request) -> Value {
        match request {
            Request::List { job } => match self.list(job.as_deref()).await {
                Ok(rows) => json!({ "commands": rows }),
                Err(refusal) => refusal.to_json(),
            },
            Request::Run(run) => self.run(*run).await.to_json(),
        }
    }

    /// The job a request names, running, with its scope; else the sentence
    /// refusing it.
    async fn job(&self, id: Option<&str>) -> Result<(Job, Arc<Scope>), Box<Outcome>> {
        let refuse = |message: String| Err(Box::new(Outcome::forbidden(message, public())));
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return refuse(
                "no job — the request carries no LOOM_COMMAND_JOB_ID; the broker runs commands only for a job \
                 (`shed job create --person <handle>` makes one, and the harness passes its id)"
                    .to_string(),
            );
        };
        let job = match self.host.job(id).await {
            Ok(Some(job)) => job,
            Ok(None) => {
                return refuse(format!(
                    "no job {} — that id is not a job this host made; `shed job create --person <handle>` makes one",
                    shown_job(id)
                ));
            }
            Err(error) => return Err(Box::new(failed(error.to_string()))),
        };
        match job.state(now_millis()) {
            JobState::Running => {}
            JobState::Ended => {
                return refuse(format!(
                    "job {} was ended at {} — its agent runs nothing more; `shed job create` makes a new job",
                    shown_job(id),
                    job.ended_at.map_or_else(String::new, when)
                ));
            }
            JobState::Expired => {
                return refuse(format!(
                    "job {} expired at {} — `shed job create --ttl <duration>` makes a new job that runs longer",
                    shown_job(id),
                    job.expires_at.map_or_else(String::new, when)
                ));
            }
        }
        let scope = self
            .scope(&job)
            .map_err(|message| Box::new(failed(message)))?;
        Ok((job, scope))
    }

    fn scope(&self, job: &Job) -> Result<Arc<Scope>, String> {
        if let Some(scope) = self
            .scopes
            .lock()
            .ok()
            .and_then(|s| s.get(&job.id).cloned())
        {
            return Ok(scope);
        }
        let scope = Arc::new(Scope::new(&job.allow, &job.read_only).map_err(|e| e.0)?);
        if let Ok(mut scopes) = self.scopes.lock() {
            scopes.insert(job.id.clone(), scope.clone());
        }
        Ok(scope)
    }

    /// `command list`: the rows the job's scope admits among those its person
    /// reaches, each stamped `readOnlyGranted`.
    pub async fn list(&self, job: Option<&str>) -> Result<Vec<Value>, Box<Outcome>> {
        let (job, scope) = self.job(job).await?;
        let caller = job.caller();
        let rows = self
            .host
            .agent_commands(&caller)
            .await
            .map_err(|e| Box::new(failed(e.to_string())))?;
        Ok(rows
            .into_iter()
            .filter(|row| scope.admits(&row.name, row.effect))
            .map(|row| stamped(row, &scope))
            .collect())
    }

    /// `command run`: one call, as the job's agent.
    pub async fn run(&self, request: RunRequest) -> Outcome {
        let (job, scope) = match self.job(request.job.as_deref()).await {
            Ok(found) => found,
            Err(refusal) => return *refusal,
        };
        if request.actor.is_some() {
            tracing::debug!(job = %shown_job(&job.id), "the request named an actor; it runs as the job's agent");
        }
        let caller = job.caller();
        let row = match self.host.agent_command(&caller, &request.command).await {
            Ok(row) => row,
            Err(error) => return failed(error.to_string()),
        };
        let Some(row) = row else {
            if scope.names(&request.command) {
                return Outcome::refusal(
                    Code::NotFound,
                    format!(
                        "no command {} that {} reaches — `shed command list --json` lists what this job may run",
                        request.command, job.person.handle
                    ),
                    Label::of_caller(&caller),
                );
            }
            return outside(&request.command, &job);
        };
        if !scope.admits(&row.name, row.effect) {
            return outside(&row.name, &job);
        }
        if request.read_only && !scope.grants_read_only(&row.name, row.effect) {
            let why = match row.effect {
                Effect::Write => format!(
                    "{} changes data, and a read-only run runs only reads — run it without --read-only if the job allows it",
                    row.name
                ),
                Effect::Read => format!(
                    "job {} grants no read-only run of {} — its --read-only globs do not name it",
                    shown_job(&job.id),
                    row.name
                ),
            };
            return Outcome::forbidden(why, public());
        }
        let call = AgentCall {
            name: row.name.clone(),
            args: filled_from_job(&row, request.args, &job),
            loom: request.loom,
            expect: request.expect,
            origin: Origin::Session,
            consented: Vec::new(),
        };
        let answered = self.host.agent_run(&caller, &call).await;
        outcome(row.effect, answered)
    }

    /// The host this broker asks.
    pub fn host(&self) -> &Host {
        &self.host
    }
}

/// The refusal of a command outside the job's scope.
fn outside(name: &str, job: &Job) -> Outcome {
    Outcome::forbidden(
        format!(
            "{name} is outside job {}'s scope ({}) — this job runs only what `shed command list --json` shows",
            shown_job(&job.id),
            job.allow
                .iter()
                .chain(&job.read_only)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        public(),
    )
}

fn failed(message: String) -> Outcome {
    Outcome::refusal(Code::Error, message, public())
}

/// The row as listed, with the broker's read-only stamp.
fn stamped(row: CommandRow, scope: &Scope) -> Value {
    let granted = scope.grants_read_only(&row.name, row.effect);
    let mut fields = row.row;
    fields.insert("readOnlyGranted".into(), Value::Bool(granted));
    Value::Object(fields)
}

/// The args with every input the row marks `x-source: "job.person"` set to
/// the job's person, whatever the request said.
fn filled_from_job(row: &CommandRow, args: Value, job: &Job) -> Value {
    let sourced: Vec<&String> = row
        .row
        .get("inputSchema")
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, schema)| {
                    schema.get("x-source").and_then(Value::as_str) == Some("job.person")
                })
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default();
    if sourced.is_empty() {
        return args;
    }
    let mut fields = match args {
        Value::Object(fields) => fields,
        Value::Null => Map::new(),
        other => return other, // the host says what is wrong with it
    };
    for name in sourced {
        fields.insert(name.clone(), Value::String(job.person.handle.clone()));
    }
    Value::Object(fields)
}

/// The outcome of what the host answered.
fn outcome(effect: Effect, answered: shed_host::agents::AgentAnswer) -> Outcome {
    let id = Outcome::new_id();
    match answered.answer {
        Ok(answer) => {
            let completed: Vec<String> = match effect {
                Effect::Write => answer
                    .data
                    .get("entities")
                    .and_then(Value::as_array)
                    .map(|eids| {
                        eids.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
                Effect::Read => Vec::new(),
            };
            Outcome {
                ok: true,
                id,
                code: Code::Ok,
                may_have_landed: effect == Effect::Write,
                completed,
                body: answer.data,
                ifc: answered.label,
                version: answered.version,
                message: answer.text,
            }
        }
        Err(error) => {
            let code = Code::of(&error);
            Outcome {
                ok: false,
                id,
                code,
                may_have_landed: effect == Effect::Write && code == Code::Error,
                completed: Vec::new(),
                body: Value::Null,
                ifc: answered.label,
                version: answered.version,
                message: error.to_string(),
            }
        }
    }
}
