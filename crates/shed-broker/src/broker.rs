//! The broker: answers one request for a job by one call to shed-host
//! ([`Host::job_commands`], [`Host::job_run`]), which decides everything —
//! the job, its scope and read-only grant, who reaches which app, a
//! built-in's declarations. The broker only turns the typed answer into the
//! wire's JSON.

use serde_json::Value;
use shed_host::Host;
use shed_host::agents::RunCall;

use crate::outcome::{Answered, Outcome};
use crate::protocol::{Request, RunRequest};

/// The broker of one host. Cheap to share behind an `Arc`.
pub struct Broker {
    host: Host,
}

impl Broker {
    /// A broker answering for `host`.
    pub fn new(host: Host) -> Broker {
        Broker { host }
    }

    /// The answer to a request, typed until it is sent.
    pub async fn answer(&self, request: Request) -> Answered {
        match request {
            Request::List { job } => match self.host.job_commands(job.as_deref()).await {
                Ok(rows) => Answered::Listed {
                    commands: rows.into_iter().map(|row| Value::Object(row.row)).collect(),
                },
                Err(refusal) => Answered::Outcome(Outcome::of_refusal(&refusal)),
            },
            Request::Run(run) => Answered::Outcome(self.run(*run).await),
        }
    }

    /// `command run`: one call, as the job's agent.
    pub async fn run(&self, request: RunRequest) -> Outcome {
        if request.actor.is_some() {
            tracing::debug!("the request named an actor; it runs as the job's agent");
        }
        let run = RunCall {
            name: request.command.clone(),
            args: request.args,
            loom: request.loom,
            expect: request.expect,
            read_only: request.read_only,
        };
        let outcome = Outcome::of_job(self.host.job_run(request.job.as_deref(), run).await);
        // The agent by its job's public name; the job's secret is never logged.
        tracing::debug!(
            actor = %outcome.actor.as_deref().unwrap_or("-"),
            command = %request.command,
            code = ?outcome.code,
            "ran a job's command"
        );
        outcome
    }
}
