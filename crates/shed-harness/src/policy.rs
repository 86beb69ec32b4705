//! Policy: which tool calls a run may make, judged by the tool's effect class
//! (from [`crate::tools`]), the run's mode and the slot its task is bound in,
//! and the JSONL trace every decision is written to.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use serde_json::json;

use crate::tools::{EffectClass, ToolName};

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
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::EnforceExplicit => "enforce-explicit",
            Mode::EnforceStrict => "enforce-strict",
        }
    }
}

impl TaskSlot {
    pub fn as_str(self) -> &'static str {
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
    pub admitted: bool,
    pub name: &'static str,
    pub reason: String,
}

/// Judges one tool call. A batch is one call: it is judged whole.
pub fn decide(mode: Mode, slot: TaskSlot, tool: ToolName) -> Decision {
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

    /// Writes one decision.
    pub fn record(&self, mode: Mode, slot: TaskSlot, tool: ToolName, decision: &Decision) {
        let line = json!({
            "atMs": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            "tool": tool.as_str(),
            "effectClass": tool.effect_class().as_str(),
            "mode": mode.as_str(),
            "taskSlot": slot.as_str(),
            "decision": if decision.admitted { "admit" } else { "refuse" },
            "name": decision.name,
            "reason": decision.reason,
        });
        tracing::info!(
            tool = tool.as_str(),
            decision = decision.name,
            admitted = decision.admitted,
            "policy"
        );
        if let Some(file) = &self.file
            && let Ok(mut f) = file.lock()
            && let Err(e) = writeln!(f, "{line}")
        {
            tracing::warn!("could not write the policy trace: {e}");
        }
    }
}
