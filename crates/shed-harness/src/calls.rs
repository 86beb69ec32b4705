//! `run_command` and `run_read_command` calls: reading the input (one call or
//! a batch), checking each call before anything is sent, running it on the
//! host, measuring its answer's label, and shaping each call's result.

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::host::{HostCli, RunError, RunRequest, is_app_name};
use crate::labels::{Ceiling, Label, Withheld};
use crate::outcome::{HostOutcome, SummaryForm, cut};

/// The most calls a batch carries.
pub const BATCH_MAX_CALLS: usize = 16;
/// The largest `args` of one call, as JSON.
pub const ARGS_MAX_BYTES: usize = 16 * 1024;
/// The most calls of one batch in flight to the host at once.
pub const MAX_IN_FLIGHT: usize = 4;
/// The longest command name repeated in a result (a suggestion's too).
const NAME_MAX_CHARS: usize = 200;
/// The longest `message` a result repeats: a refusal's sentence can quote
/// what the model sent (an unknown key, say), which the output bound must
/// not have to carry whole.
pub const MESSAGE_MAX_CHARS: usize = 400;

/// The hint of an executed call the host refused as not granted (the
/// broker's `forbidden`, the command layer's `refused`).
const NOT_GRANTED_HINT: &str = "The host did not grant this command to this run. Do not retry it: offer it to the person in your answer, so they can run it or grant it.";
/// The hint of a call naming a command the run's catalog does not hold.
const UNKNOWN_HINT: &str = "No command this run can see has that name. Call list_commands and use a name exactly as listed.";
/// The hint of a call whose answer the run's observation ceiling withheld.
const WITHHELD_HINT: &str = "Nothing of this answer is shown, not even whether it succeeded: it is above this run's observation ceiling. The call was delivered, so a command that changes data may have taken effect. Tell the person rather than sending it again.";
/// The hint of a `run_read_command` call refused because its command is not
/// declared `read` or not granted read-only.
/// The host's code for a call kept for its person's approval.
const WAITING_CODE: &str = "waiting-for-approval";

const AWAITING_APPROVAL_HINT: &str = "Nothing ran: the host keeps this call until the person approves it. Do not send it again: tell the person to open the address to approve it.";

const READ_ONLY_HINT: &str = "run_read_command runs only commands list_commands shows with effect read and readOnlyGranted. Offer this command to the person, or use run_command if the task lets you change data.";

/// One call as the model wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallSpec {
    /// The command's name as the model wrote it (not blank); whether the
    /// run's catalog lists it is checked only when the call is performed.
    pub command: String,
    /// The command's arguments, a JSON object of at most [`ARGS_MAX_BYTES`];
    /// a call without `args` (or with `null`) gets an empty object.
    pub args: Value,
    /// The call's `loomId`: the app the command acts on, `<space>/<app>` as
    /// [`is_app_name`] checks it, passed to the host as `--loom`. `None` when
    /// the call names no app.
    pub loom_id: Option<String>,
    /// The call's `expectedVersion`: the host refuses the command unless the
    /// app's data is at this version (`--expect`). `None` asks no version.
    pub expected_version: Option<u64>,
}

/// A tool input read: one call, or a batch whose malformed calls are kept as
/// that call's refusal.
#[derive(Debug)]
pub enum Input {
    /// The input named a `command`: one call, read whole.
    Single(CallSpec),
    /// The input carried `calls`: 1 to [`BATCH_MAX_CALLS`] calls in the
    /// model's order, each read, or the sentence saying why it did not read
    /// (that call alone is refused; the others still run).
    Batch(Vec<Result<CallSpec, String>>),
}

/// A refusal of the whole tool call; nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The result's `reason` code, such as `invalid_input`,
    /// `batch_too_large`, `cancelled` or `not_configured`.
    pub reason: &'static str,
    /// The sentence the model reads: what was wrong and what to send instead.
    pub message: String,
}

impl Refusal {
    fn invalid(message: impl Into<String>) -> Refusal {
        Refusal {
            reason: "invalid_input",
            message: message.into(),
        }
    }
}

/// Reads a `run_command` / `run_read_command` input.
pub fn parse_input(input: &Value) -> Result<Input, Refusal> {
    let Some(object) = input.as_object() else {
        return Err(Refusal::invalid(
            "the input must be an object: {\"command\": …, \"args\": {…}} or {\"calls\": [ … ]}",
        ));
    };
    let Some(calls) = object.get("calls") else {
        return parse_call(input)
            .map(Input::Single)
            .map_err(Refusal::invalid);
    };
    if object.contains_key("command") {
        return Err(Refusal::invalid(
            "the input names both command and calls — send one call with command, or a batch with calls, not both",
        ));
    }
    if let Some(other) = object.keys().find(|k| k.as_str() != "calls") {
        return Err(Refusal::invalid(format!(
            "a batch takes only calls, and this one also has {other:?} — put loomId, args and expectedVersion inside each call"
        )));
    }
    let Some(list) = calls.as_array() else {
        return Err(Refusal::invalid("calls must be a list of calls"));
    };
    if list.is_empty() {
        return Err(Refusal::invalid(
            "calls is empty — a batch carries 1 to 16 calls",
        ));
    }
    if list.len() > BATCH_MAX_CALLS {
        return Err(Refusal {
            reason: "batch_too_large",
            message: format!(
                "the batch has {} calls and a batch carries at most {BATCH_MAX_CALLS} — split it into smaller batches",
                list.len()
            ),
        });
    }
    Ok(Input::Batch(list.iter().map(parse_call).collect()))
}

fn parse_call(call: &Value) -> Result<CallSpec, String> {
    let Some(object) = call.as_object() else {
        return Err("a call must be an object {\"command\": …, \"args\": {…}}".to_string());
    };
    if let Some(other) = object.keys().find(|k| {
        !matches!(
            k.as_str(),
            "command" | "args" | "loomId" | "expectedVersion"
        )
    }) {
        return Err(format!(
            "a call takes command, args, loomId and expectedVersion; {other:?} is none of them — remove it"
        ));
    }
    let command = match object.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(_) => {
            return Err("command must be a command name from list_commands, as a string".into());
        }
        None => {
            return Err(
                "the call names no command — add \"command\" with a name from list_commands".into(),
            );
        }
    };
    let args = match object.get("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(format!("the args of {command} must be an object")),
    };
    let size = serde_json::to_vec(&args)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    if size > ARGS_MAX_BYTES {
        return Err(format!(
            "the args of {command} are {size} bytes of JSON and a call's args are bounded at 16 KiB — send less"
        ));
    }
    let loom_id = match object.get("loomId") {
        None | Some(Value::Null) => None,
        Some(Value::String(l)) if is_app_name(l) => Some(l.clone()),
        Some(_) => {
            return Err(
                "loomId must name an app as <space>/<app>, like demo/runs — a-z, 0-9 and -, each part starting with a letter"
                    .into(),
            );
        }
    };
    let expected_version = match object.get("expectedVersion") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or("expectedVersion must be a whole number, 0 or more")?,
        ),
    };
    Ok(CallSpec {
        command,
        args,
        loom_id,
        expected_version,
    })
}

/// What the model may see of an answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The answer's label flows to the run's observation ceiling (or the run
    /// has none): the model may read it.
    Admitted {
        /// The result's `entry`: the host's data and sentence, their strings
        /// bounded ([`HostOutcome::admitted_entry`]).
        entry: Value,
        /// The answer's label: its own `ifc` where the host gave one, else
        /// the run's context label when the tool call was judged.
        label: Label,
    },
    /// The answer is kept from the model: it sees only that the call was
    /// delivered.
    Withheld {
        /// The `reasonCode` the model sees: the ceiling's
        /// ([`Withheld::reason_code`]), or `malformed_label` when the
        /// answer's own label did not read.
        reason_code: &'static str,
    },
}

impl Answer {
    /// The result's `entry`.
    pub fn entry(&self) -> Value {
        match self {
            Answer::Admitted { entry, .. } => entry.clone(),
            Answer::Withheld { reason_code } => {
                json!({"status": "withheld", "reasonCode": reason_code})
            }
        }
    }
}

/// One call's result before it is shaped.
#[derive(Clone, Debug, PartialEq)]
pub enum CallResult {
    /// The host ran the call and answered (a refusal by the host is an
    /// answer too): status `executed`.
    Executed {
        /// The call as it was sent.
        spec: Box<CallSpec>,
        /// The host's answer, read leniently.
        outcome: Box<HostOutcome>,
        /// The command's signature line from the catalog, repeated only when
        /// the host refused the arguments (code `bad-args`); `None` otherwise.
        signature: Option<String>,
        /// What the model may see of the answer.
        answer: Answer,
    },
    /// The call named a command the run's catalog does not hold; nothing was
    /// sent (status `unknown_command`).
    Unknown {
        /// The name as the model wrote it.
        command: String,
        /// Up to three listed names nearest it ([`Catalog::suggestions`]).
        suggestions: Vec<String>,
    },
    /// Nothing reached the host (status `failed_to_deliver`, landed `no`).
    NotDelivered {
        /// Why: for one call, `invalid_input` (it did not read), `cancelled`,
        /// `policy_trace_failed` (its decision could not be recorded) or
        /// `command_failed` (the host's CLI did not start, or refused its
        /// command line); for a whole tool call, its [`Refusal`]'s reason.
        reason: &'static str,
        /// The sentence saying what went wrong.
        message: String,
    },
    /// `run_read_command` refused a command not declared `read` or not
    /// granted read-only; nothing was sent (status `not_granted`).
    NotGranted {
        /// The command's name as the model wrote it.
        command: String,
        /// The sentence naming which of the two it lacks.
        message: String,
    },
    /// The host kept the call for its person's approval: nothing ran
    /// (status `awaiting_approval`, landed `no`); the model tells the person
    /// where to approve it.
    AwaitingApproval {
        /// The command's name as the model wrote it.
        command: String,
        /// The host's sentence: what waits, and where.
        message: String,
        /// The page where the person approves it.
        address: String,
    },
    /// The call was sent and its answer lost, so it may have taken effect
    /// (status `failed_to_deliver`, landed `unknown`).
    Lost {
        /// The command's name as the model wrote it.
        command: String,
        /// What the host's CLI did instead of answering.
        message: String,
    },
}

/// What one call needs from its run.
pub struct CallContext<'a> {
    /// The host's CLI the call is sent through.
    pub host: &'a HostCli,
    /// The run's catalog the call's command is looked up in.
    pub catalog: &'a Catalog,
    /// The call came through `run_read_command`: only a command declared
    /// `read` and granted read-only runs, and the host runs it read-only.
    pub read_only: bool,
    /// The run's observation ceiling; `None` admits every answer.
    pub ceiling: Option<&'a Ceiling>,
    /// The run's context label when the tool call was judged: the label of
    /// an answer that carries none of its own.
    pub input_label: &'a Label,
    /// Answers `true` once the turn is cancelled; a call not yet sent then
    /// is not sent.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
}

/// What runs just before a checked call is sent: the run's record of its
/// decision. An error (the sentence why) means the call is not sent.
pub type BeforeSend<'a> = dyn Fn(&CallSpec) -> Result<(), String> + Sync + 'a;

/// Checks one call, sends it when every check passes and `before_send`
/// agrees, and measures its answer.
pub async fn perform(
    ctx: &CallContext<'_>,
    call: Result<CallSpec, String>,
    before_send: &BeforeSend<'_>,
) -> CallResult {
    let spec = match call {
        Ok(spec) => spec,
        Err(message) => {
            return CallResult::NotDelivered {
                reason: "invalid_input",
                message,
            };
        }
    };
    if (ctx.cancelled)() {
        return CallResult::NotDelivered {
            reason: "cancelled",
            message: "the turn was cancelled before this call was sent".into(),
        };
    }
    let Some(row) = ctx.catalog.get(&spec.command) else {
        return CallResult::Unknown {
            suggestions: ctx.catalog.suggestions(&spec.command),
            command: spec.command,
        };
    };
    if ctx.read_only {
        let effect = row.effect.as_deref().unwrap_or("undeclared");
        let message = if effect != "read" {
            Some(format!(
                "{} is declared with effect {effect}, not read, so run_read_command does not run it",
                row.name
            ))
        } else if !row.read_only_granted {
            Some(format!(
                "the broker has not granted read-only execution of {} to this run",
                row.name
            ))
        } else {
            None
        };
        if let Some(message) = message {
            return CallResult::NotGranted {
                command: spec.command,
                message,
            };
        }
    }
    if let Err(message) = before_send(&spec) {
        return CallResult::NotDelivered {
            reason: "policy_trace_failed",
            message,
        };
    }
    let request = RunRequest {
        command: spec.command.clone(),
        args: spec.args.clone(),
        loom_id: spec.loom_id.clone(),
        expected_version: spec.expected_version,
        read_only: ctx.read_only,
    };
    let answer = match ctx.host.run(&request).await {
        Ok(answer) => answer,
        Err(RunError::NotSent(message)) => {
            return CallResult::NotDelivered {
                reason: "command_failed",
                message,
            };
        }
        Err(RunError::Lost(message)) => {
            return CallResult::Lost {
                command: spec.command,
                message,
            };
        }
    };
    let outcome = HostOutcome::from_json(&answer);
    if outcome.code == WAITING_CODE {
        let address = outcome.body["address"].as_str().unwrap_or_default();
        return CallResult::AwaitingApproval {
            command: spec.command,
            message: outcome
                .message
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
            address: address.to_string(),
        };
    }
    let signature = (outcome.code == "bad-args").then(|| row.signature.clone());
    let answer = measure(&outcome, ctx.input_label, ctx.ceiling);
    CallResult::Executed {
        spec: Box::new(spec),
        outcome: Box::new(outcome),
        signature,
        answer,
    }
}

/// An answer's own label where it carries one, else the input's, measured
/// against the ceiling.
pub fn measure(outcome: &HostOutcome, input_label: &Label, ceiling: Option<&Ceiling>) -> Answer {
    let label = match &outcome.ifc {
        None => input_label.clone(),
        Some(ifc) => match Label::from_json(ifc) {
            Ok(label) => label,
            Err(_) => {
                return Answer::Withheld {
                    reason_code: "malformed_label",
                };
            }
        },
    };
    match ceiling.map(|c| c.admits(&label)) {
        Some(Err(withheld)) => Answer::Withheld {
            reason_code: Withheld::reason_code(withheld),
        },
        _ => Answer::Admitted {
            entry: outcome.admitted_entry(),
            label,
        },
    }
}

/// How much of a result's summary is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A call sent alone: the full summary and its hint.
    Alone,
    /// A batch's call: a compact summary, its `signature` or `suggestions`
    /// kept; its hint goes once into the batch's `hints`.
    Batch,
    /// A batch's call past the bound: `signature` and `suggestions` dropped.
    BatchShort,
    /// A batch's call further past: its status and whether it landed; an
    /// admitted answer's outcome keeps only `ok`, `code` and `bodyBytes`.
    BatchMinimal,
}

/// The result's `status`.
pub fn status(result: &CallResult) -> &'static str {
    match result {
        CallResult::Executed { .. } => "executed",
        CallResult::Unknown { .. } => "unknown_command",
        CallResult::NotDelivered { .. } | CallResult::Lost { .. } => "failed_to_deliver",
        CallResult::NotGranted { .. } => "not_granted",
        CallResult::AwaitingApproval { .. } => "awaiting_approval",
    }
}

/// The hint a result carries when its call is sent alone; a batch carries
/// each distinct one once, in `hints`. A withheld answer's hint is the same
/// whatever the answer said.
pub fn hint(result: &CallResult) -> Option<&'static str> {
    match result {
        CallResult::Executed {
            answer: Answer::Withheld { .. },
            ..
        } => Some(WITHHELD_HINT),
        CallResult::Executed { outcome, .. } if outcome.not_granted() => Some(NOT_GRANTED_HINT),
        CallResult::Executed { .. } | CallResult::NotDelivered { .. } | CallResult::Lost { .. } => {
            None
        }
        CallResult::Unknown { .. } => Some(UNKNOWN_HINT),
        CallResult::NotGranted { .. } => Some(READ_ONLY_HINT),
        CallResult::AwaitingApproval { .. } => Some(AWAITING_APPROVAL_HINT),
    }
}

/// A result without its `entry`. A withheld answer's summary is the same
/// whatever the answer said: its outcome says only that the call was
/// delivered ([`HostOutcome::withheld_summary`]).
pub fn summary(result: &CallResult, output_id: &str, form: Form) -> Value {
    let mut out = Map::new();
    out.insert("outputId".into(), json!(output_id));
    out.insert("status".into(), json!(status(result)));
    let whole = form != Form::BatchMinimal;
    let aids = matches!(form, Form::Alone | Form::Batch);
    let name = |c: &str| json!(cut(c, NAME_MAX_CHARS));
    let message = |m: &str| json!(cut(m, MESSAGE_MAX_CHARS));
    let mut outcome_marks_itself = false;
    match result {
        CallResult::Executed {
            spec,
            outcome,
            signature,
            answer,
        } => {
            if whole {
                out.insert("command".into(), name(&spec.command));
            }
            match answer {
                Answer::Withheld { .. } => {
                    out.insert("outcome".into(), HostOutcome::withheld_summary());
                }
                Answer::Admitted { .. } => {
                    let summary_form = match form {
                        Form::Alone => SummaryForm::Full,
                        Form::Batch | Form::BatchShort => SummaryForm::Compact,
                        Form::BatchMinimal => SummaryForm::Minimal,
                    };
                    out.insert("outcome".into(), outcome.summary(summary_form));
                    // The minimal outcome carries its own `summaryOmitted`.
                    outcome_marks_itself = true;
                    if let Some(signature) = signature
                        && aids
                    {
                        out.insert("signature".into(), json!(signature));
                    }
                }
            }
        }
        CallResult::Unknown {
            command,
            suggestions,
        } => {
            if whole {
                out.insert("command".into(), name(command));
            }
            if aids {
                let suggestions: Vec<Value> = suggestions.iter().map(|s| name(s)).collect();
                out.insert("suggestions".into(), Value::Array(suggestions));
            }
        }
        CallResult::NotDelivered { reason, message: m } => {
            out.insert("landed".into(), json!("no"));
            out.insert("reason".into(), json!(reason));
            if whole {
                out.insert("message".into(), message(m));
            }
        }
        CallResult::NotGranted {
            command,
            message: m,
        } => {
            out.insert("landed".into(), json!("no"));
            if whole {
                out.insert("command".into(), name(command));
                out.insert("message".into(), message(m));
            }
        }
        CallResult::AwaitingApproval {
            command,
            message: m,
            address,
        } => {
            out.insert("landed".into(), json!("no"));
            out.insert("address".into(), json!(address));
            if whole {
                out.insert("command".into(), name(command));
                out.insert("message".into(), message(m));
            }
        }
        CallResult::Lost {
            command,
            message: m,
        } => {
            out.insert("landed".into(), json!("unknown"));
            out.insert("reason".into(), json!("answer_lost"));
            if whole {
                out.insert("command".into(), name(command));
                out.insert(
                    "message".into(),
                    json!(format!(
                        "{} — the command may have taken effect; check before sending it again",
                        cut(m, MESSAGE_MAX_CHARS)
                    )),
                );
            }
        }
    }
    if form == Form::Alone
        && let Some(hint) = hint(result)
    {
        out.insert("hint".into(), json!(hint));
    }
    if !whole && !outcome_marks_itself {
        out.insert("summaryOmitted".into(), Value::Bool(true));
    }
    Value::Object(out)
}

/// A whole-tool refusal shaped as a result.
pub fn refusal(refusal: &Refusal, output_id: &str) -> Value {
    summary(
        &CallResult::NotDelivered {
            reason: refusal.reason,
            message: refusal.message.clone(),
        },
        output_id,
        Form::Alone,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_read_or_refused() {
        assert!(matches!(
            parse_input(&json!({"command": "a"})),
            Ok(Input::Single(_))
        ));
        let both = parse_input(&json!({"command": "a", "calls": [{"command": "a"}]})).unwrap_err();
        assert_eq!(both.reason, "invalid_input");
        let many: Vec<Value> = (0..17).map(|_| json!({"command": "a"})).collect();
        assert_eq!(
            parse_input(&json!({"calls": many})).unwrap_err().reason,
            "batch_too_large"
        );
        assert_eq!(
            parse_input(&json!({"calls": []})).unwrap_err().reason,
            "invalid_input"
        );
        let Ok(Input::Batch(calls)) =
            parse_input(&json!({"calls": [{"command": "a"}, {"args": {}}]}))
        else {
            panic!("a batch")
        };
        assert!(calls[0].is_ok() && calls[1].is_err());
        let big = json!({"command": "a", "args": {"t": "x".repeat(ARGS_MAX_BYTES)}});
        let err = parse_input(&big).unwrap_err();
        assert!(err.message.contains("16 KiB"), "{}", err.message);
    }
}
