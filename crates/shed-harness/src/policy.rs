//! Policy: which tool calls a run may make, judged by the tool's effect class
//! (from [`crate::tools`]), the run's mode, the slot its task is bound in and
//! the run's context label (whether it has observed untrusted data), and the
//! JSONL trace every call's decision is written to — one line per call, before
//! the call is made, so a call whose decision cannot be recorded is not made.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::labels::{Integrity, Label};
use crate::tools::{EffectClass, ToolName};

/// The longest tool or command name a trace line repeats, in characters: the
/// names come from the model, so a line stays small whatever it sent.
const TRACE_NAME_MAX_CHARS: usize = 200;

/// The run's policy mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Every tool call runs.
    Off,
    /// A write tool runs only for a `direct-command` task.
    EnforceExplicit,
    /// As explicit, and read tools only for a `direct-command` task, except
    /// the host-command reads for a `context` task.
    EnforceStrict,
}

/// How the run's task is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskSlot {
    /// The person typed the task.
    DirectCommand,
    /// The task arrived with other content, such as a request a pattern submitted.
    Context,
    /// The task is quoted material.
    Quoted,
    /// No task authority.
    Absent,
}

impl Mode {
    /// The mode as `--policy` spells it, and as the trace and a refusal
    /// name it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::EnforceExplicit => "enforce-explicit",
            Mode::EnforceStrict => "enforce-strict",
        }
    }
}

impl TaskSlot {
    /// The slot as `--task-slot` spells it, and as the trace, the system
    /// prompt and the transcript name it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TaskSlot::DirectCommand => "direct-command",
            TaskSlot::Context => "context",
            TaskSlot::Quoted => "quoted",
            TaskSlot::Absent => "absent",
        }
    }
}

/// One decision, with the name the trace gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The call may run; false refuses it (`refused_by_policy`).
    pub admitted: bool,
    /// The rule that decided, as the trace and a refusal's `decision` name
    /// it (`cfc_off`, `cfc_write_requires_direct_command`, …).
    pub name: &'static str,
    /// The sentence saying why, which a refused call's `message` carries.
    pub reason: String,
}

/// The sentence a write refused after an untrusted observation carries: what
/// the model should do instead.
pub const OFFER_THE_WRITE: &str = "this run has read data that someone other than the person wrote (untrusted), and enforce-strict makes no write after that — do not retry it: offer the write to the person in your answer (the command and its arguments), so they can make it themselves";

/// Judges one tool call, given the run's context label (the join of every
/// observation so far). A batch is one call: it is judged whole.
pub fn decide(mode: Mode, slot: TaskSlot, tool: ToolName, context: &Label) -> Decision {
    let class = tool.effect_class();
    let admit = |name, reason: &str| Decision {
        admitted: true,
        name,
        reason: reason.to_string(),
    };
    let refuse = |name, reason: &str| Decision {
        admitted: false,
        name,
        reason: reason.to_string(),
    };
    match (mode, class, slot) {
        (Mode::Off, _, _) => admit("cfc_off", "policy is off: every tool call runs"),
        (Mode::EnforceStrict, EffectClass::Write, TaskSlot::DirectCommand)
            if context.integrity == Integrity::Untrusted =>
        {
            refuse("cfc_write_after_untrusted_observation", OFFER_THE_WRITE)
        }
        (Mode::EnforceExplicit, EffectClass::Write, TaskSlot::DirectCommand)
            if context.integrity == Integrity::Untrusted =>
        {
            admit(
                "cfc_write_after_untrusted_observation",
                "a write tool runs for a task the person typed (direct-command), and this run has read untrusted data: enforce-explicit admits it, enforce-strict would refuse it",
            )
        }
        (_, EffectClass::Write, TaskSlot::DirectCommand) => admit(
            "cfc_write_direct_command",
            "a write tool runs for a task the person typed (direct-command)",
        ),
        (_, EffectClass::Write, _) => refuse(
            "cfc_write_requires_direct_command",
            "a write tool runs only when the task is bound as a direct-command prompt slot; this task is not",
        ),
        (Mode::EnforceExplicit, EffectClass::Read, _) => admit(
            "cfc_enforce_explicit_read",
            "enforce-explicit admits read tools whatever the task slot",
        ),
        (Mode::EnforceStrict, EffectClass::Read, TaskSlot::DirectCommand) => admit(
            "cfc_enforce_strict_read_direct_command",
            "enforce-strict admits a read tool for a direct-command task",
        ),
        (Mode::EnforceStrict, EffectClass::Read, TaskSlot::Context)
            if tool.is_host_command_read() =>
        {
            admit(
                "cfc_enforce_strict_host_command_read",
                "enforce-strict admits list_commands and run_read_command for a context-bound task: the narrow host-broker read exception; the broker's grant is still checked on invocation",
            )
        }
        (Mode::EnforceStrict, EffectClass::Read, _) => refuse(
            "cfc_enforce_strict_read_requires_authority",
            "enforce-strict admits a read tool only for a direct-command task (host-command reads also for a context task); quoted or absent task authority cannot invoke it",
        ),
    }
}

/// The run's policy trace: one JSON line per decision.
#[derive(Debug, Default)]
pub struct PolicyTrace {
    file: Option<Mutex<File>>,
}

/// Why the trace could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot open the policy trace {path}: {source} — check the directory exists and is writable"
)]
pub struct TraceError {
    path: String,
    source: std::io::Error,
}

impl PolicyTrace {
    /// Appends to `path`; `None` keeps no trace.
    pub fn open(path: Option<&Path>) -> Result<PolicyTrace, TraceError> {
        let Some(path) = path else {
            return Ok(PolicyTrace::default());
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(crate::transcript::PRIVATE_FILE_MODE)
            .open(path)
            .map_err(|source| TraceError {
                path: path.display().to_string(),
                source,
            })?;
        Ok(PolicyTrace {
            file: Some(Mutex::new(file)),
        })
    }

    /// Writes one call's line, whole, before the call is made. An error
    /// means the decision was not recorded, so the call must not be made.
    pub fn record(&self, line: &TraceLine<'_>) -> Result<(), TraceWriteError> {
        tracing::info!(
            tool = line.tool,
            decision = line.verdict.name(),
            admitted = line.verdict.admitted(),
            "policy"
        );
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut text = line.to_json().to_string();
        text.push('\n');
        let mut file = file.lock().map_err(|_| TraceWriteError::Poisoned)?;
        file.write_all(text.as_bytes())
            .map_err(TraceWriteError::Write)
    }
}

/// Why a decision could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum TraceWriteError {
    /// Writing the line to the trace file failed (a full disk, say).
    #[error("the policy trace could not be written ({0})")]
    Write(std::io::Error),
    /// An earlier write panicked while it held the trace file; the trace is
    /// not written again.
    #[error("the policy trace could not be written (an earlier write panicked)")]
    Poisoned,
}

/// What decided one call.
#[derive(Clone, Copy, Debug)]
pub enum Verdict<'a> {
    /// The policy's decision, and nothing else stopped the call.
    Policy(&'a Decision),
    /// The policy admitted the tool call, and the harness refused this call
    /// before sending it: `code` (`not_granted`, `unknown_command`,
    /// `invalid_input`, …) with its sentence.
    Harness {
        /// The policy's decision that admitted the tool call.
        policy: &'a Decision,
        /// The refusal's code, as the call's result gives it.
        code: &'a str,
        /// The refusal's sentence.
        message: &'a str,
    },
    /// The model named a tool this run does not offer.
    UnknownTool,
}

impl Verdict<'_> {
    fn admitted(&self) -> bool {
        matches!(self, Verdict::Policy(decision) if decision.admitted)
    }

    fn name(&self) -> &str {
        match self {
            Verdict::Policy(decision) => decision.name,
            Verdict::Harness { code, .. } => code,
            Verdict::UnknownTool => "unknown_tool",
        }
    }
}

/// One call as the trace records it.
#[derive(Clone, Debug)]
pub struct TraceLine<'a> {
    /// The run's policy mode.
    pub mode: Mode,
    /// How the run's task is bound.
    pub slot: TaskSlot,
    /// The run's context label when the call was judged.
    pub context: &'a Label,
    /// The tool as the model named it.
    pub tool: &'a str,
    /// The tool's effect class; `None` for a tool this run does not offer.
    pub effect_class: Option<EffectClass>,
    /// What the tool call attempted.
    pub attempt: Attempt<'a>,
    /// The result's `outputId`.
    pub output_id: &'a str,
    /// What decided the call.
    pub verdict: Verdict<'a>,
}

/// What one traced tool call attempted.
#[derive(Clone, Debug)]
pub enum Attempt<'a> {
    /// No command: `list_commands`, an unknown tool, an input that did not read.
    Tool,
    /// One call: alone (`batch_index` `None`) or one call of a batch; its
    /// command and the size of its `args` as JSON, where it read.
    Call {
        /// The command the call names; `None` where the call did not read.
        command: Option<&'a str>,
        /// The call's place in its batch, from 0; `None` for a call alone.
        batch_index: Option<usize>,
        /// The size of its `args` as JSON, in bytes; `None` where the call
        /// did not read.
        args_bytes: Option<usize>,
    },
    /// A batch judged whole (a policy refusal): each call's command, where
    /// it named one.
    Batch(Vec<&'a str>),
}

impl TraceLine<'_> {
    fn to_json(&self) -> Value {
        let mut line = Map::new();
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        line.insert("atMs".into(), json!(at_ms));
        line.insert("tool".into(), json!(cut(self.tool)));
        line.insert(
            "effectClass".into(),
            json!(self.effect_class.map(EffectClass::as_str)),
        );
        line.insert("mode".into(), json!(self.mode.as_str()));
        line.insert("taskSlot".into(), json!(self.slot.as_str()));
        line.insert("contextLabel".into(), self.context.to_json());
        match &self.attempt {
            Attempt::Tool => {}
            Attempt::Call {
                command,
                batch_index,
                args_bytes,
            } => {
                line.insert("command".into(), json!(command.map(cut)));
                if let Some(index) = batch_index {
                    line.insert("batchIndex".into(), json!(index));
                }
                if let Some(bytes) = args_bytes {
                    line.insert("argsBytes".into(), json!(bytes));
                }
            }
            Attempt::Batch(commands) => {
                let names: Vec<&str> = commands.iter().map(|c| cut(c)).collect();
                line.insert("commands".into(), json!(names));
            }
        }
        line.insert("outputId".into(), json!(self.output_id));
        let admitted = self.verdict.admitted();
        line.insert(
            "decision".into(),
            json!(if admitted { "admit" } else { "refuse" }),
        );
        line.insert("name".into(), json!(self.verdict.name()));
        match self.verdict {
            Verdict::Policy(decision) => {
                line.insert("reason".into(), json!(decision.reason));
                if !admitted {
                    line.insert("refusedBy".into(), json!("policy"));
                }
            }
            Verdict::Harness {
                policy, message, ..
            } => {
                line.insert("reason".into(), json!(message));
                line.insert("refusedBy".into(), json!("harness"));
                line.insert("policy".into(), json!(policy.name));
            }
            Verdict::UnknownTool => {
                line.insert(
                    "reason".into(),
                    json!("this run offers no tool of that name; nothing was run"),
                );
                line.insert("refusedBy".into(), json!("harness"));
            }
        }
        Value::Object(line)
    }
}

/// A name cut to [`TRACE_NAME_MAX_CHARS`] characters.
fn cut(name: &str) -> &str {
    match name.char_indices().nth(TRACE_NAME_MAX_CHARS) {
        Some((end, _)) => &name[..end],
        None => name,
    }
}
