//! Running one command for an agent: an app command (`demo/runs.log_run`)
//! through the app's ordinary doors as the caller, or a built-in. Whatever
//! happens, the answer carries the label of what it read or wrote — for rows
//! read, the join of the rows' labels — and the app's data version after the
//! call.

use std::sync::Arc;

use super::builtins::Builtin;
use super::command::{AgentCall, Scope, split_app_command};
use super::label::Label;
use crate::access::{Act, may};
use crate::act::AppAct;
use crate::answer::{Answer, Data};
use crate::names::shown;
use crate::reach::Reach;
use crate::registry::{LiveApp, Snapshot};
use crate::{Caller, Host, HostError};

/// What a call came to.
#[derive(Debug)]
pub struct AgentAnswer {
    /// The command's answer, or the refusal or failure whose sentence the
    /// agent is told.
    pub answer: Result<Answer, HostError>,
    /// The label of what the answer holds.
    pub(crate) label: Label,
    /// The app's data version after the call, where the call named an app.
    pub version: Option<u64>,
    /// The app acted on (`space/slug`), where there was one.
    pub app: Option<String>,
}

impl Host {
    /// Runs one call as `caller` (the broker's agent, usually). Never fails
    /// as a whole: a refusal is an answer too, with its label and version.
    pub async fn agent_run(&self, caller: &Caller, call: &AgentCall) -> AgentAnswer {
        self.agent_run_within(caller, call, None).await
    }

    /// [`Host::agent_run`], in the caller's reach when it is read already
    /// (a job's run reads it once, to find the command's row).
    pub(super) async fn agent_run_within(
        &self,
        caller: &Caller,
        call: &AgentCall,
        reach: Option<(Reach, Arc<Snapshot>)>,
    ) -> AgentAnswer {
        let mut app: Option<Arc<LiveApp>> = None;
        let answer = self.agent_dispatch(caller, call, reach, &mut app).await;
        let (label, version, name) = match &app {
            Some(app) => {
                let version = match self.inner.store.data_version(&app.name).await {
                    Ok(version) => Some(version),
                    Err(error) => {
                        tracing::warn!(app = %app.name, %error, "could not read the app's data version");
                        None
                    }
                };
                let label = match &answer {
                    Ok(Answer {
                        data: Data::Rows(listing),
                        ..
                    }) => Label::of_rows(app, caller, &listing.authors),
                    _ => Label::of_app(app),
                };
                (label, version, Some(app.name.clone()))
            }
            None => (Label::of_caller(caller), None, None),
        };
        AgentAnswer {
            answer,
            label,
            version,
            app: name,
        }
    }

    async fn agent_dispatch(
        &self,
        caller: &Caller,
        call: &AgentCall,
        reach: Option<(Reach, Arc<Snapshot>)>,
        acted_on: &mut Option<Arc<LiveApp>>,
    ) -> Result<Answer, HostError> {
        if let Some((app_name, command)) = split_app_command(&call.name) {
            return self
                .run_app_command(caller, call, (app_name, command), reach, acted_on)
                .await;
        }
        let Some(builtin) = Builtin::named(&call.name) else {
            return Err(HostError::NotFound(format!(
                "no command {} — `shed command list --json` lists the commands this job may run",
                shown(&call.name)
            )));
        };
        match (builtin.scope(), &call.loom) {
            (Scope::Loom, Some(loom)) => {
                let (app, standing) = self.named_app(caller, loom).await?;
                may(app.subject(), standing, Act::Read)?;
                *acted_on = Some(app.clone());
                self.check_expect(&app, call.expect).await?;
                builtin.run(self, caller, call, Some(&app)).await
            }
            (Scope::Global, _) if call.expect.is_some() => Err(HostError::BadInput(format!(
                "{} acts on no app, so there is no version to expect — leave --expect out",
                builtin.name()
            ))),
            _ => builtin.run(self, caller, call, None).await,
        }
    }

    async fn run_app_command(
        &self,
        caller: &Caller,
        call: &AgentCall,
        (app_name, command_name): (&str, &str),
        reach: Option<(Reach, Arc<Snapshot>)>,
        acted_on: &mut Option<Arc<LiveApp>>,
    ) -> Result<Answer, HostError> {
        if let Some(loom) = &call.loom
            && loom != app_name
        {
            return Err(HostError::BadInput(format!(
                "{} acts on {app_name}, and --loom names {} — leave --loom out or name {app_name}",
                shown(&call.name),
                shown(loom)
            )));
        }
        let (reach, snapshot) = match reach {
            Some(read) => read,
            None => self.reach_and_snapshot(caller).await?,
        };
        let app = reach.resolve(&snapshot, app_name)?;
        *acted_on = Some(app.clone());
        let parts = self.parts(&app).await?;
        let Some(command) = parts.manifest.command(command_name) else {
            return Err(HostError::NotFound(format!(
                "no command {} in {} — `shed command list --json` lists the commands this job may run",
                shown(command_name),
                app.name
            )));
        };
        crate::measure::command_run(&app.name, command_name, async {
            let standing = reach.standing(&app.space);
            let act = AppAct::Command {
                command,
                args: call.args.clone(),
            };
            let acted = self
                .act_on_app(caller, None, &app, standing, act, call.expect)
                .await?;
            Ok(Answer {
                text: acted.sentence(&app.name, Some(&command.name)),
                data: acted.into(),
            })
        })
        .await
    }
}
