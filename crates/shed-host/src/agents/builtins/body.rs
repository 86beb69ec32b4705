//! A built-in's body: the trait every built-in's type implements, and what
//! its body is given — the caller, the call's arguments read by name, the
//! `--loom` app — with the write of a bundle two built-ins share.

use serde_json::{Map, Value};

use super::row::BuiltinRow;
use crate::act::AppAct;
use crate::answer::Answer;
use crate::registry::LiveApp;
use crate::{Caller, Host, HostError};

/// One built-in command: its row and its body.
pub(super) trait BuiltinCommand {
    const ROW: BuiltinRow;

    /// Runs the built-in, its declarations having admitted the call.
    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError>;
}

/// One admitted call of a built-in.
pub(super) struct Invocation<'a> {
    pub(super) host: &'a Host,
    pub(super) caller: &'a Caller,
    /// The built-in's name.
    pub(super) name: &'static str,
    pub(super) args: Args<'a>,
    /// `--expect`, for a write.
    pub(super) expect: Option<u64>,
    /// The `--loom` app, for a built-in of scope loom that was given one.
    pub(super) app: Option<&'a LiveApp>,
}

impl<'a> Invocation<'a> {
    /// The app the built-in acts on, which the call must name.
    pub(super) fn loom(&self) -> Result<&'a LiveApp, HostError> {
        self.app.ok_or_else(|| {
            HostError::BadInput(format!(
                "{} acts on an app — name it with --loom <space/app>",
                self.name
            ))
        })
    }

    /// Writes a bundle to an app as the caller, under the app's access.
    pub(super) async fn write(&self, app: &LiveApp, bundle: Value) -> Result<Answer, HostError> {
        let reach = self.host.reach(self.caller).await?;
        let standing = reach.standing(&app.space);
        let acted = self
            .host
            .act_on_app(
                self.caller,
                None,
                app,
                standing,
                AppAct::Write {
                    bundle,
                    command: self.name,
                },
                self.expect,
            )
            .await?;
        Ok(Answer {
            text: acted.sentence(&app.name, Some(self.name)),
            data: acted.into(),
        })
    }
}

/// A call's arguments, read by name.
pub(super) struct Args<'a> {
    command: &'a str,
    fields: Map<String, Value>,
}

impl<'a> Args<'a> {
    pub(super) fn read(command: &'a str, args: Value) -> Result<Args<'a>, HostError> {
        match args {
            Value::Null => Ok(Args {
                command,
                fields: Map::new(),
            }),
            Value::Object(fields) => Ok(Args { command, fields }),
            _ => Err(HostError::BadInput(format!(
                "args is an object of {command}'s arguments"
            ))),
        }
    }

    pub(super) fn text(&self, name: &str) -> Result<Option<String>, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(HostError::BadInput(format!("{name} is text"))),
        }
    }

    pub(super) fn required_text(&self, name: &str) -> Result<String, HostError> {
        self.text(name)?.ok_or_else(|| {
            HostError::BadInput(format!("{name} is required — {} needs it", self.command))
        })
    }

    pub(super) fn required(&self, name: &str) -> Result<Value, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Err(HostError::BadInput(format!(
                "{name} is required — {} needs it",
                self.command
            ))),
            Some(value) => Ok(value.clone()),
        }
    }

    pub(super) fn texts(&self, name: &str) -> Result<Vec<String>, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| HostError::BadInput(format!("{name} is a list of text")))
                })
                .collect(),
            Some(_) => Err(HostError::BadInput(format!("{name} is a list of text"))),
        }
    }
}
