//! An outcome: the one answer of `shed command run`, `{ ok, id, code,
//! mayHaveLanded, completed, body, ifc, version, message, actor? }` — the
//! host's typed [`JobOutcome`] in the wire's words. `actor` (`agent:job-3`,
//! the job's public name) is there when the command ran.

use serde::Serialize;
use serde_json::Value;
use shed_host::HostError;
use shed_host::agents::{JobOutcome, JobRefusal, Label};

/// What became of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The command ran.
    Ok,
    /// The job refused it: no job, an ended or expired one, or a command
    /// outside the job's scope or read-only grant.
    Forbidden,
    /// The command layer refused it: the person's access, or a declaration.
    Refused,
    /// The args do not fit the command.
    BadArgs,
    /// No such command, app or entity.
    NotFound,
    /// The app's data version is not the one expected, or changed under it.
    Conflict,
    /// The host failed.
    Error,
    /// The write waits for the person's approval: nothing ran yet; the
    /// message says what waits and the address where they approve it.
    WaitingForApproval,
}

impl Code {
    /// The code a host error is.
    pub fn of(error: &HostError) -> Code {
        match error {
            HostError::SignIn(_) | HostError::Refused(_) | HostError::Busy(_) => Code::Refused,
            HostError::BadInput(_) => Code::BadArgs,
            HostError::NotFound(_) => Code::NotFound,
            HostError::Conflict(_) | HostError::ChangedSince(_) => Code::Conflict,
            HostError::Internal(_) => Code::Error,
            HostError::Waiting(_) => Code::WaitingForApproval,
        }
    }

    /// The word of the code, as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "ok",
            Code::Forbidden => "forbidden",
            Code::Refused => "refused",
            Code::BadArgs => "bad-args",
            Code::NotFound => "not-found",
            Code::Conflict => "conflict",
            Code::Error => "error",
            Code::WaitingForApproval => "waiting-for-approval",
        }
    }

    /// The code a job's refusal is.
    pub fn of_refusal(refusal: &JobRefusal) -> Code {
        match refusal {
            JobRefusal::Forbidden(_) => Code::Forbidden,
            JobRefusal::Failed(_) => Code::Error,
            JobRefusal::Host(error) => Code::of(error),
        }
    }
}

/// The answer to one run.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Whether the command ran and answered; false when it was refused or
    /// failed (`code` says which, `message` why).
    pub ok: bool,
    /// This run's id, 32 hex digits.
    pub id: String,
    /// What the run came to, as a word.
    pub code: Code,
    /// True only when a write was committed, or may have been.
    pub may_have_landed: bool,
    /// The operations the run committed: each entity a write wrote, by eid.
    pub completed: Vec<String>,
    /// The command's answer (its structured data); null when refused; for
    /// `waiting-for-approval`, the approval: `{approval, state, address}`.
    pub body: Value,
    /// The label of what the answer holds.
    pub ifc: Label,
    /// The app's data version after the call, where it named an app.
    pub version: Option<u64>,
    /// The answer's text — its lines, then its data as compact JSON,
    /// bounded as every door bounds it — or the sentence of a refusal.
    pub message: String,
    /// Who the command ran as, `agent:<job name>`, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

impl Outcome {
    /// A fresh run id.
    pub fn new_id() -> String {
        format!("{:032x}", rand::random::<u128>())
    }

    /// What a job's run came to.
    pub fn of_job(outcome: JobOutcome) -> Outcome {
        let (ok, code, body, message) = match outcome.answer {
            Ok(answer) => {
                let said = answer.said();
                (true, Code::Ok, said.json, said.text)
            }
            Err(refusal) => {
                // A write waiting for its person: the approval (its id and
                // address) is the body; nothing ran.
                let body = match &refusal {
                    JobRefusal::Host(HostError::Waiting(waiting)) => {
                        serde_json::to_value(&waiting.data).unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                };
                (false, Code::of_refusal(&refusal), body, refusal.to_string())
            }
        };
        Outcome {
            ok,
            id: Outcome::new_id(),
            code,
            may_have_landed: outcome.may_have_landed,
            completed: outcome.completed,
            body,
            ifc: outcome.label,
            version: outcome.version,
            message,
            actor: outcome.actor,
        }
    }

    /// A job's listing refused: nothing ran, and its sentence holds nobody's
    /// data.
    pub fn of_refusal(refusal: &JobRefusal) -> Outcome {
        Outcome::refusal(
            Code::of_refusal(refusal),
            refusal.to_string(),
            Label::public(),
        )
    }

    /// An answer with nothing run behind it.
    pub fn refusal(code: Code, message: String, ifc: Label) -> Outcome {
        Outcome {
            ok: false,
            id: Outcome::new_id(),
            code,
            may_have_landed: false,
            completed: Vec::new(),
            body: Value::Null,
            ifc,
            version: None,
            message,
            actor: None,
        }
    }

    /// The JSON of it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The answer to one request of the queue: a `command list`'s rows
/// (`{"commands": […]}`), or an outcome. Typed until it is sent, so what it
/// came to is read off the type, never back out of its JSON.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Answered {
    /// `command list`, answered with its rows.
    Listed {
        /// The commands, one row each.
        commands: Vec<Value>,
    },
    /// `command run`, or any refusal.
    Outcome(Outcome),
}

impl Answered {
    /// What the answer came to, as a metric's label: its outcome's code,
    /// or `listed` for a `command list` answered with its rows.
    pub fn label(&self) -> &'static str {
        match self {
            Answered::Listed { .. } => "listed",
            Answered::Outcome(outcome) => outcome.code.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code, in the order declared.
    const ALL: [Code; 8] = [
        Code::Ok,
        Code::Forbidden,
        Code::Refused,
        Code::BadArgs,
        Code::NotFound,
        Code::Conflict,
        Code::Error,
        Code::WaitingForApproval,
    ];

    #[test]
    fn a_code_s_word_is_the_wire_s_and_its_label_is_that_word() {
        for code in ALL {
            let wire = serde_json::to_value(code).unwrap();
            assert_eq!(wire.as_str(), Some(code.as_str()));
            let answered =
                Answered::Outcome(Outcome::refusal(code, String::new(), Label::public()));
            assert_eq!(serde_json::to_value(&answered).unwrap()["code"], wire);
            assert_eq!(answered.label(), code.as_str());
        }
        let listed = Answered::Listed {
            commands: Vec::new(),
        };
        assert_eq!(
            serde_json::to_value(&listed).unwrap(),
            serde_json::json!({ "commands": [] })
        );
        assert_eq!(listed.label(), "listed");
    }
}
