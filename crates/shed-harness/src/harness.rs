//! The harness of one run: the allowed tools, the run's catalog, policy on
//! every tool call, the batch engine with its bounds, and the run's journal.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};

use crate::calls::{
    self, Answer, CallContext, CallResult, CallSpec, Form, Input, MAX_IN_FLIGHT, Refusal,
};
use crate::catalog::{Catalog, CatalogRow};
use crate::config::HostConfig;
use crate::ending::RunEnd;
use crate::host::{HostCli, ListError};
use crate::journal::{Journal, Provenance};
use crate::labels::{Ceiling, Label};
use crate::listing::{self, DETAIL_MAX_NAMES, json_len};
use crate::policy::{self, Attempt, Decision, Mode, PolicyTrace, TaskSlot, TraceLine, Verdict};
use crate::tools::ToolName;

/// The model bound for one tool result unless the run says otherwise (32 KiB).
pub const DEFAULT_OUTPUT_BOUND: usize = 32 * 1024;

/// Everything a run is started with.
#[derive(Debug)]
pub struct RunSettings {
    /// How to reach the host's CLI; `None` when the run has no host
    /// configuration, and every command tool call is refused
    /// `not_configured`.
    pub host: Option<HostConfig>,
    /// The host job id of this invocation, from the embedder only.
    pub command_job_id: Option<String>,
    /// The tools the run offers, in the order they are offered; a call
    /// naming any other is answered `unknown_tool`.
    pub allowed: Vec<ToolName>,
    /// The policy mode every tool call is judged under.
    pub mode: Mode,
    /// How the run's task is bound: what the policy judges a call by, and
    /// whether the run's context starts trusted.
    pub task_slot: TaskSlot,
    /// The most the run may observe of the host's answers and listed rows;
    /// `None` shows every one.
    pub ceiling: Option<Ceiling>,
    /// The most bytes of JSON one tool result may show the model
    /// ([`DEFAULT_OUTPUT_BOUND`] unless the run says otherwise).
    pub output_bound: usize,
    /// Where each call's policy decision is written before the call is made;
    /// the default keeps no trace.
    pub trace: PolicyTrace,
}

/// A flag a turn's cancellation sets.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Cancels the turn: a call of it not yet sent is not sent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether [`CancelFlag::cancel`] was called on this flag or a clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// One run of the harness.
pub struct Harness {
    settings: RunSettings,
    host: Option<HostCli>,
    catalog: tokio::sync::Mutex<Option<Arc<Catalog>>>,
    next_output: AtomicU64,
    journal: Mutex<Journal>,
    /// Set when a decision could not be recorded: the sentence the run ends
    /// with. No call is made after it.
    trace_failure: Mutex<Option<String>>,
    /// The last listing the model was shown, where it fit its bound: what
    /// the command tools' schemas hold `command` to.
    shown: Mutex<Option<Shown>>,
    /// Whether the tools' schemas were asked for yet: the first time, the
    /// listing is read and shown through them.
    schemas_asked: AtomicBool,
    /// What the run met that decides how it ends: the job over, a write
    /// refused, a write landed.
    end: Mutex<RunEnd>,
}

/// A listing the model was shown that left no row out: the catalog it was
/// rendered from, and the names it showed, in its order.
#[derive(Clone)]
struct Shown {
    catalog: Arc<Catalog>,
    names: Vec<String>,
}

/// A tool call as the policy judged it, with what it judged by.
struct Judged {
    tool: ToolName,
    decision: Decision,
    context: Label,
}

impl Harness {
    /// A run with these settings. Nothing is started yet: the host's CLI
    /// runs only when a tool call needs it.
    pub fn new(settings: RunSettings) -> Harness {
        let host = settings
            .host
            .clone()
            .map(|config| HostCli::new(config, settings.command_job_id.clone()));
        let journal = Mutex::new(Journal::new(settings.task_slot));
        Harness {
            settings,
            host,
            catalog: tokio::sync::Mutex::new(None),
            next_output: AtomicU64::new(1),
            journal,
            trace_failure: Mutex::new(None),
            shown: Mutex::new(None),
            schemas_asked: AtomicBool::new(false),
            end: Mutex::new(RunEnd::default()),
        }
    }

    /// The tools this run offers.
    pub fn tools(&self) -> &[ToolName] {
        &self.settings.allowed
    }

    /// Each offered tool with the input schema it is offered with now: once
    /// the model was shown a listing that fit its bound, the command tools'
    /// schemas hold it to the commands listed
    /// ([`ToolName::listed_input_schema`]); else, and after a listing that
    /// was cut, [`ToolName::input_schema`]. The first time, the listing is
    /// read and shown through them (see [`Harness::show_listing_first`]).
    pub async fn input_schemas(&self) -> Vec<(ToolName, Value)> {
        if !self.schemas_asked.swap(true, Ordering::SeqCst) {
            self.show_listing_first().await;
        }
        let shown = self.shown.lock().ok().and_then(|shown| shown.clone());
        self.settings
            .allowed
            .iter()
            .map(|&tool| {
                let schema = match &shown {
                    Some(shown) => {
                        let rows: Vec<&CatalogRow> = shown
                            .names
                            .iter()
                            .filter_map(|name| shown.catalog.shown(name))
                            .collect();
                        tool.listed_input_schema(&rows)
                    }
                    None => tool.input_schema(),
                };
                (tool, schema)
            })
            .collect()
    }

    /// Before its first turn, a run that offers a command tool, and whose
    /// policy admits `list_commands` now (offered or not: the schemas are
    /// then the only way the model learns what it may call), reads the
    /// listing — held for the run, as for the first tool that needs it —
    /// and shows it through the command tools' schemas: the listing
    /// `list_commands` would show, recorded as an observation on the
    /// `tools` channel (its titles and schemas are the deployers' words).
    /// It is no tool call, so the trace has no line for it. A listing that
    /// cannot be read constrains nothing; the model's first call meets the
    /// failure.
    async fn show_listing_first(&self) {
        let offered = |tool| self.settings.allowed.contains(&tool);
        if !(offered(ToolName::RunCommand) || offered(ToolName::RunReadCommand)) {
            return;
        }
        let context = self.context_label();
        let mode = self.settings.mode;
        if !policy::decide(
            mode,
            self.settings.task_slot,
            ToolName::ListCommands,
            &context,
        )
        .admitted
        {
            return;
        }
        let Ok(catalog) = self.read_catalog(false).await else {
            return;
        };
        let id = self.mint();
        let listed = listing::render(&catalog, &[], self.settings.output_bound, &id);
        if self.remember_shown(&catalog, &listed) {
            let label = listing::shown_label(&catalog, &listed, &context);
            if let Ok(mut journal) = self.journal.lock() {
                journal.observe("tools", ToolName::ListCommands.as_str(), &id, &label);
            }
        }
    }

    /// Remembers a listing the model was shown: its names where it left no
    /// row out (`omitted` 0), else none — a cut listing holds the model to
    /// nothing. Whether it was remembered.
    fn remember_shown(&self, catalog: &Arc<Catalog>, listed: &Value) -> bool {
        let names: Option<Vec<String>> = (listed["omitted"] == 0).then(|| {
            listed["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|entry| entry["name"].as_str().map(str::to_string))
                .collect()
        });
        let shown = names.map(|names| Shown {
            catalog: catalog.clone(),
            names,
        });
        let remembered = shown.is_some();
        if let Ok(mut held) = self.shown.lock() {
            *held = shown;
        }
        remembered
    }

    /// The host's sentence, once an answer said the job this run acts for
    /// is over: nothing more can run.
    pub fn job_over(&self) -> Option<String> {
        self.end.lock().ok().and_then(|end| end.job_over.clone())
    }

    /// The last line of a run that wrote nothing because a write was
    /// refused ([`RunEnd::nothing_written`]).
    pub fn nothing_written(&self) -> Option<String> {
        self.end.lock().ok().and_then(|end| end.nothing_written())
    }

    /// Notes in the run's end what `note` says.
    fn note(&self, note: impl FnOnce(&mut RunEnd)) {
        if let Ok(mut end) = self.end.lock() {
            note(&mut end);
        }
    }

    /// The run's journal: context label, referents, observations.
    pub fn journal_json(&self) -> Value {
        self.journal
            .lock()
            .map(|j| j.to_json())
            .unwrap_or(Value::Null)
    }

    /// Why the run stopped: a decision that could not be recorded. Whoever
    /// drives the run ends it with this sentence and a non-zero exit.
    pub fn trace_failure(&self) -> Option<String> {
        self.trace_failure.lock().ok().and_then(|f| f.clone())
    }

    /// Records one call's decision; when it cannot be recorded the run
    /// stops, and the caller must not make the call.
    fn trace(&self, line: &TraceLine<'_>) -> Result<(), String> {
        let Err(error) = self.settings.trace.record(line) else {
            return Ok(());
        };
        let sentence = format!(
            "{error} — the call was not made, and the run stops: make room or point --policy-trace at a writable file, then run again"
        );
        if let Ok(mut failure) = self.trace_failure.lock() {
            failure.get_or_insert_with(|| sentence.clone());
        }
        Err(sentence)
    }

    /// A trace line for a call of this run.
    fn line<'a>(
        &self,
        tool: &'a str,
        context: &'a Label,
        attempt: Attempt<'a>,
        output_id: &'a str,
        verdict: Verdict<'a>,
    ) -> TraceLine<'a> {
        TraceLine {
            mode: self.settings.mode,
            slot: self.settings.task_slot,
            context,
            tool,
            effect_class: ToolName::parse(tool).map(ToolName::effect_class),
            attempt,
            output_id,
            verdict,
        }
    }

    fn context_label(&self) -> Label {
        self.journal
            .lock()
            .map(|j| j.context_label())
            .unwrap_or_else(|_| Label::bottom())
    }

    fn mint(&self) -> String {
        format!("out-{}", self.next_output.fetch_add(1, Ordering::SeqCst))
    }

    /// Runs one tool call, never cancelled.
    pub async fn call(&self, name: &str, input: Value) -> Value {
        self.call_cancellable(name, input, &CancelFlag::default())
            .await
    }

    /// Runs one tool call; calls reached after `cancel` is set are not sent.
    pub async fn call_cancellable(&self, name: &str, input: Value, cancel: &CancelFlag) -> Value {
        if let Some(sentence) = self.trace_failure() {
            return calls::refusal(&trace_failed(sentence), &self.mint());
        }
        let context = self.context_label();
        let Some(tool) = ToolName::parse(name).filter(|t| self.settings.allowed.contains(t)) else {
            let id = self.mint();
            let line = self.line(name, &context, Attempt::Tool, &id, Verdict::UnknownTool);
            let _ = self.trace(&line);
            let offered: Vec<&str> = self.settings.allowed.iter().map(|t| t.as_str()).collect();
            return json!({
                "outputId": id,
                "status": "unknown_tool",
                "message": format!("this run has no tool named {name:?}; it offers {}", if offered.is_empty() { "none".to_string() } else { offered.join(", ") }),
            });
        };
        let decision = policy::decide(self.settings.mode, self.settings.task_slot, tool, &context);
        if !decision.admitted {
            let id = self.mint();
            let line = self.line(
                tool.as_str(),
                &context,
                attempt_of(tool, &input),
                &id,
                Verdict::Policy(&decision),
            );
            let _ = self.trace(&line);
            let message = format!("{} was not run: {}", tool.as_str(), decision.reason);
            if tool == ToolName::RunCommand {
                let hint = match self.settings.task_slot {
                    TaskSlot::DirectCommand => "",
                    _ => " — pass --task-slot direct-command when the person typed the task",
                };
                self.note(|end| end.write_refused(&format!("{message}{hint}")));
            }
            return json!({
                "outputId": id,
                "status": "refused_by_policy",
                "policy": self.settings.mode.as_str(),
                "decision": decision.name,
                "message": message,
            });
        }
        let judged = Judged {
            tool,
            decision,
            context,
        };
        match tool {
            ToolName::ListCommands => self.list_commands(&judged, &input).await,
            ToolName::RunCommand => self.run_commands(&judged, &input, false, cancel).await,
            ToolName::RunReadCommand => self.run_commands(&judged, &input, true, cancel).await,
        }
    }

    /// Traces a tool call the harness refused whole, before sending
    /// anything; the refusal as the model reads it.
    fn refuse_whole(&self, judged: &Judged, input: &Value, refusal: &Refusal) -> Value {
        let id = self.mint();
        let verdict = Verdict::Harness {
            policy: &judged.decision,
            code: refusal.reason,
            message: &refusal.message,
        };
        let attempt = attempt_of(judged.tool, input);
        let line = self.line(judged.tool.as_str(), &judged.context, attempt, &id, verdict);
        let _ = self.trace(&line);
        calls::refusal(refusal, &id)
    }

    async fn read_catalog(&self, fresh: bool) -> Result<Arc<Catalog>, Refusal> {
        let Some(host) = &self.host else {
            return Err(not_configured());
        };
        let mut held = self.catalog.lock().await;
        if !fresh && let Some(catalog) = held.as_ref() {
            return Ok(catalog.clone());
        }
        let ceiling = self.settings.ceiling.as_ref();
        let catalog = host
            .list()
            .await
            .inspect_err(|e| {
                if let ListError::Refused(code, message) = e {
                    self.note(|end| end.listing_refused(code, message));
                }
            })
            .and_then(|listing| {
                Catalog::from_listing_within(listing, ceiling)
                    .map_err(|e| ListError::MalformedPayload(e.to_string()))
            })
            .map_err(|e| Refusal {
                reason: e.reason(),
                message: e.to_string(),
            })?;
        let catalog = Arc::new(catalog);
        *held = Some(catalog.clone());
        Ok(catalog)
    }

    /// The listing, recorded as an observation with the join of the labels
    /// of the rows it shows: their titles and descriptions are written by
    /// whoever deployed each app.
    async fn list_commands(&self, judged: &Judged, input: &Value) -> Value {
        let detail = match read_detail(input) {
            Ok(detail) => detail,
            Err(message) => {
                let refusal = Refusal {
                    reason: "invalid_input",
                    message,
                };
                return self.refuse_whole(judged, input, &refusal);
            }
        };
        let id = self.mint();
        let line = self.line(
            judged.tool.as_str(),
            &judged.context,
            Attempt::Tool,
            &id,
            Verdict::Policy(&judged.decision),
        );
        if let Err(sentence) = self.trace(&line) {
            return calls::refusal(&trace_failed(sentence), &id);
        }
        match self.read_catalog(true).await {
            Ok(catalog) => {
                let value = listing::render(&catalog, &detail, self.settings.output_bound, &id);
                self.remember_shown(&catalog, &value);
                let label = listing::shown_label(&catalog, &value, &judged.context);
                if let Ok(mut journal) = self.journal.lock() {
                    journal.observe("output", judged.tool.as_str(), &id, &label);
                }
                value
            }
            Err(refusal) => calls::refusal(&refusal, &id),
        }
    }

    async fn run_commands(
        &self,
        judged: &Judged,
        input: &Value,
        read_only: bool,
        cancel: &CancelFlag,
    ) -> Value {
        let tool = judged.tool;
        let parsed = match calls::parse_input(input) {
            Ok(parsed) => parsed,
            Err(refusal) => return self.refuse_whole(judged, input, &refusal),
        };
        if cancel.is_cancelled() {
            let refusal = Refusal {
                reason: "cancelled",
                message: "the turn was cancelled before anything was sent".into(),
            };
            return self.refuse_whole(judged, input, &refusal);
        }
        let catalog = match self.read_catalog(read_only).await {
            Ok(catalog) => catalog,
            Err(refusal) => return self.refuse_whole(judged, input, &refusal),
        };
        let Some(host) = &self.host else {
            return self.refuse_whole(judged, input, &not_configured());
        };
        let input_label = judged.context.clone();
        let is_cancelled = || cancel.is_cancelled();
        let ctx = CallContext {
            host,
            catalog: &catalog,
            read_only,
            ceiling: self.settings.ceiling.as_ref(),
            input_label: &input_label,
            cancelled: &is_cancelled,
        };
        match parsed {
            Input::Single(spec) => {
                let id = self.mint();
                let result = self.perform_traced(&ctx, judged, Ok(spec), None, &id).await;
                let (value, shown) = render_alone(&result, &id, self.settings.output_bound);
                self.record(tool, std::slice::from_ref(&(id, result)), &[shown]);
                value
            }
            Input::Batch(specs) => {
                let batch_id = self.mint();
                let ids: Vec<String> = specs.iter().map(|_| self.mint()).collect();
                let ctx = &ctx;
                let calls = specs.into_iter().zip(ids.clone()).enumerate();
                let results: Vec<CallResult> = futures::stream::iter(calls)
                    .map(|(index, (spec, id))| async move {
                        self.perform_traced(ctx, judged, spec, Some(index), &id)
                            .await
                    })
                    .buffered(MAX_IN_FLIGHT)
                    .collect()
                    .await;
                let results: Vec<(String, CallResult)> = ids.into_iter().zip(results).collect();
                let (value, shown) = render_batch(&results, &batch_id, self.settings.output_bound);
                self.record(tool, &results, &shown);
                value
            }
        }
    }

    /// One call, its decision traced: the policy's admission just before it
    /// is sent (a call whose line cannot be written is not sent), or the
    /// harness's refusal when a check stopped it first.
    async fn perform_traced(
        &self,
        ctx: &CallContext<'_>,
        judged: &Judged,
        call: Result<CallSpec, String>,
        batch_index: Option<usize>,
        id: &str,
    ) -> CallResult {
        let command = call.as_ref().ok().map(|spec| spec.command.clone());
        let args_bytes = call.as_ref().ok().map(|spec| json_len(&spec.args));
        let attempt = || Attempt::Call {
            command: command.as_deref(),
            batch_index,
            args_bytes,
        };
        let tool = judged.tool.as_str();
        let sent = AtomicBool::new(false);
        let before_send = |_: &CallSpec| {
            sent.store(true, Ordering::SeqCst);
            let verdict = Verdict::Policy(&judged.decision);
            self.trace(&self.line(tool, &judged.context, attempt(), id, verdict))
        };
        let result = calls::perform(ctx, call, &before_send).await;
        if let CallResult::Executed { spec, outcome, .. } = &result {
            let declared = ctx.catalog.rows().iter().find(|r| r.name == spec.command);
            let write = judged.tool == ToolName::RunCommand
                && declared.and_then(|r| r.effect.as_deref()) != Some("read");
            self.note(|end| end.answered(outcome, write));
        }
        if !sent.load(Ordering::SeqCst) {
            let (code, message) = refusal_of(&result);
            let verdict = Verdict::Harness {
                policy: &judged.decision,
                code,
                message: &message,
            };
            let _ = self.trace(&self.line(tool, &judged.context, attempt(), id, verdict));
        }
        result
    }

    /// Holds every admitted answer as a referent and records one observation
    /// — the join of the admitted labels the model was shown.
    fn record(&self, tool: ToolName, results: &[(String, CallResult)], shown: &[bool]) {
        let Ok(mut journal) = self.journal.lock() else {
            return;
        };
        let mut observed: Option<Label> = None;
        for ((id, result), &was_shown) in results.iter().zip(shown) {
            let CallResult::Executed {
                spec,
                outcome,
                answer: calls::Answer::Admitted { entry, label },
                ..
            } = result
            else {
                continue;
            };
            // The agent as the host names it: the job's public name. The
            // job id this run carries is a secret and is never written.
            let provenance = Provenance {
                command: spec.command.clone(),
                actor: outcome.actor.clone().unwrap_or_else(|| "agent".into()),
                loom: spec.loom_id.clone(),
                version: outcome.version.clone(),
            };
            journal.hold(id, label, &provenance, entry);
            if was_shown {
                observed = Some(match observed {
                    None => label.clone(),
                    Some(so_far) => so_far.join(label),
                });
            }
        }
        if let Some(label) = observed {
            let id = if results.len() == 1 {
                results
                    .first()
                    .map(|(id, _)| id.clone())
                    .unwrap_or_default()
            } else {
                "batch".to_string()
            };
            journal.observe("output", tool.as_str(), &id, &label);
        }
    }
}

/// What a call stopped before it was sent comes to, for its trace line.
fn refusal_of(result: &CallResult) -> (&'static str, String) {
    match result {
        CallResult::Unknown { .. } => (
            "unknown_command",
            "the run's catalog shows no command of that name; nothing was sent".into(),
        ),
        CallResult::NotGranted { message, .. } => ("not_granted", message.clone()),
        CallResult::NotDelivered { reason, message } => (reason, message.clone()),
        CallResult::Executed { .. }
        | CallResult::Lost { .. }
        | CallResult::AwaitingApproval { .. } => (
            "not_sent",
            "the call was answered without being sent".into(),
        ),
    }
}

/// A tool call's input as a trace line names it, read loosely: the batch's
/// commands, or the one call's command and the size of its args.
fn attempt_of(tool: ToolName, input: &Value) -> Attempt<'_> {
    if tool == ToolName::ListCommands {
        return Attempt::Tool;
    }
    if let Some(calls) = input.get("calls").and_then(Value::as_array) {
        return Attempt::Batch(
            calls
                .iter()
                .map(|call| call.get("command").and_then(Value::as_str).unwrap_or(""))
                .collect(),
        );
    }
    match input.get("command").and_then(Value::as_str) {
        Some(command) => Attempt::Call {
            command: Some(command),
            batch_index: None,
            args_bytes: Some(input.get("args").map_or(0, json_len)),
        },
        None => Attempt::Tool,
    }
}

/// The refusal of a call whose decision could not be recorded.
fn trace_failed(sentence: String) -> Refusal {
    Refusal {
        reason: "policy_trace_failed",
        message: sentence,
    }
}

fn not_configured() -> Refusal {
    Refusal {
        reason: "not_configured",
        message: "this run has no host configuration — start it with --loom-commands-config".into(),
    }
}

fn read_detail(input: &Value) -> Result<Vec<String>, String> {
    let object = match input {
        Value::Null => return Ok(Vec::new()),
        Value::Object(o) => o,
        _ => return Err("list_commands takes an object such as {\"detail\": [\"name\"]}".into()),
    };
    if let Some(other) = object.keys().find(|k| k.as_str() != "detail") {
        return Err(format!(
            "list_commands takes only detail, and got {other:?} — remove it"
        ));
    }
    let list = match object.get("detail") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err("detail must be a list of command names".into()),
    };
    if list.len() > DETAIL_MAX_NAMES {
        return Err(format!(
            "detail names {} commands and takes at most {DETAIL_MAX_NAMES} — ask for fewer",
            list.len()
        ));
    }
    list.iter()
        .map(|n| {
            n.as_str()
                .map(str::to_string)
                .ok_or_else(|| "detail must hold command names as strings".to_string())
        })
        .collect()
}

/// What a `truncated` mark adds to a result.
const TRUNCATED_MARK: &str = ",\"truncated\":true";

/// A call sent alone: when the whole result would pass the bound, an
/// admitted answer is shown as the host's own bounded text (its first rows
/// whole, the rows `shed command run` prints) where that fits, and left
/// out where it does not; the result is marked truncated either way.
pub fn render_alone(result: &CallResult, output_id: &str, bound: usize) -> (Value, bool) {
    let mut value = calls::summary(result, output_id, Form::Alone);
    let CallResult::Executed {
        answer, outcome, ..
    } = result
    else {
        return (value, false);
    };
    value["entry"] = answer.entry();
    if json_len(&value) <= bound {
        return (value, true);
    }
    let Some(object) = value.as_object_mut() else {
        return (value, false);
    };
    object.insert("truncated".into(), Value::Bool(true));
    if let (Answer::Admitted { .. }, Some(said)) = (answer, outcome.said_entry()) {
        object.insert("entry".into(), said);
        if json_len(&value) <= bound {
            return (value, true);
        }
    }
    if let Some(object) = value.as_object_mut() {
        object.remove("entry");
    }
    (value, false)
}

/// A batch's result: each distinct hint once, compact summaries charged in
/// call order against one bound beside the smallest form of every later
/// call, then the answers measured in order against what the summaries
/// leave. Calls whose smallest forms do not fit at all are left out from the
/// last call back, counted by status in `omitted`, and the batch is marked
/// truncated: the whole result stays within the bound.
pub fn render_batch(
    results: &[(String, CallResult)],
    batch_id: &str,
    bound: usize,
) -> (Value, Vec<bool>) {
    // An executed call's summary is charged with room for its `truncated`
    // mark, given back when its answer fits.
    let mark = |r: &CallResult| match r {
        CallResult::Executed { .. } => TRUNCATED_MARK.len(),
        _ => 0,
    };
    let minimal: Vec<usize> = results
        .iter()
        .map(|(id, r)| json_len(&calls::summary(r, id, Form::BatchMinimal)) + 1 + mark(r))
        .collect();
    // The envelope of a batch showing its first `kept` results: the hints
    // those need, and the count of the rest.
    let envelope = |kept: usize| {
        batch_value(
            batch_id,
            &results[..kept],
            Vec::new(),
            &results[kept..],
            false,
        )
    };
    // The most results whose smallest forms fit, from the first.
    let kept = (0..=results.len())
        .rev()
        .find(|&kept| json_len(&envelope(kept)) + minimal[..kept].iter().sum::<usize>() <= bound)
        .unwrap_or(0);
    let (shown_results, left_out) = results.split_at(kept);
    let mut later_minimal: usize = minimal[..kept].iter().sum();
    let mut used = json_len(&envelope(kept));
    let mut summaries = Vec::with_capacity(kept);
    for ((id, result), own_minimal) in shown_results.iter().zip(&minimal) {
        later_minimal -= own_minimal;
        let mut chosen = None;
        for form in [Form::Batch, Form::BatchShort] {
            let candidate = calls::summary(result, id, form);
            let size = json_len(&candidate) + 1 + mark(result);
            if used + size + later_minimal <= bound {
                used += size;
                chosen = Some(candidate);
                break;
            }
        }
        let summary = chosen.unwrap_or_else(|| {
            used += own_minimal;
            calls::summary(result, id, Form::BatchMinimal)
        });
        summaries.push(summary);
    }
    let mut shown = vec![false; results.len()];
    let mut truncated = !left_out.is_empty();
    for (((_, result), summary), was_shown) in shown_results
        .iter()
        .zip(summaries.iter_mut())
        .zip(shown.iter_mut())
    {
        let CallResult::Executed { answer, .. } = result else {
            continue;
        };
        let entry = answer.entry();
        let size = json_len(&entry) + ",\"entry\":".len();
        if used - TRUNCATED_MARK.len() + size <= bound {
            used = used - TRUNCATED_MARK.len() + size;
            summary["entry"] = entry;
            *was_shown = true;
        } else {
            summary["truncated"] = Value::Bool(true);
            truncated = true;
        }
    }
    let value = batch_value(batch_id, shown_results, summaries, left_out, truncated);
    (value, shown)
}

/// A batch's result value: the hints its shown results call for, each once;
/// their summaries; and, where results were left out, their count by status.
fn batch_value(
    batch_id: &str,
    shown: &[(String, CallResult)],
    summaries: Vec<Value>,
    left_out: &[(String, CallResult)],
    truncated: bool,
) -> Value {
    let mut hints: Vec<&str> = Vec::new();
    for hint in shown.iter().filter_map(|(_, r)| calls::hint(r)) {
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    let mut value = serde_json::Map::new();
    value.insert("outputId".into(), json!(batch_id));
    value.insert("status".into(), json!("batch"));
    if !hints.is_empty() {
        value.insert("hints".into(), json!(hints));
    }
    value.insert("results".into(), Value::Array(summaries));
    if !left_out.is_empty() {
        let mut by_status = std::collections::BTreeMap::new();
        for (_, result) in left_out {
            *by_status.entry(calls::status(result)).or_insert(0usize) += 1;
        }
        value.insert(
            "omitted".into(),
            json!({"count": left_out.len(), "byStatus": by_status}),
        );
    }
    value.insert("truncated".into(), json!(truncated));
    Value::Object(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ALL_TOOLS;

    fn settings(host: Option<HostConfig>) -> RunSettings {
        RunSettings {
            host,
            command_job_id: None,
            allowed: ALL_TOOLS.to_vec(),
            mode: Mode::Off,
            task_slot: TaskSlot::DirectCommand,
            ceiling: None,
            output_bound: DEFAULT_OUTPUT_BOUND,
            trace: PolicyTrace::default(),
        }
    }

    // "`failed_to_deliver` with `landed: "no"`: nothing was sent — `not_configured`, …"
    #[tokio::test]
    async fn a_run_without_a_host_is_not_configured() {
        let harness = Harness::new(settings(None));
        let out = harness.call("run_command", json!({"command": "a"})).await;
        assert_eq!(out["status"], "failed_to_deliver");
        assert_eq!(out["landed"], "no");
        assert_eq!(out["reason"], "not_configured");
        let out = harness.call("list_commands", json!({})).await;
        assert_eq!(out["reason"], "not_configured");
    }

    // "… `cancelled` … a call reached after the turn was cancelled, come back
    // as that call's result"
    #[tokio::test]
    async fn a_cancelled_turn_sends_nothing() {
        let host = HostConfig {
            cli_path: "/nonexistent/host-cli".into(),
            job_id_env_var: None,
            queue_path: "/nonexistent/queue".into(),
        };
        let harness = Harness::new(settings(Some(host)));
        let cancel = CancelFlag::default();
        cancel.cancel();
        let out = harness
            .call_cancellable("run_command", json!({"command": "a"}), &cancel)
            .await;
        assert_eq!(out["reason"], "cancelled");
        assert_eq!(out["landed"], "no");

        let catalog = Catalog::from_listing(&json!({"commands": [{"name": "a"}]})).unwrap();
        let host = HostCli::new(
            HostConfig {
                cli_path: "/nonexistent/host-cli".into(),
                job_id_env_var: None,
                queue_path: "/q".into(),
            },
            None,
        );
        let cancelled = || true;
        let ctx = CallContext {
            host: &host,
            catalog: &catalog,
            read_only: false,
            ceiling: None,
            input_label: &Label::bottom(),
            cancelled: &cancelled,
        };
        let spec = calls::CallSpec {
            command: "a".into(),
            args: json!({}),
            loom_id: None,
            expected_version: None,
        };
        let result = calls::perform(&ctx, Ok(spec), &|_| Ok(())).await;
        assert!(matches!(
            result,
            CallResult::NotDelivered {
                reason: "cancelled",
                ..
            }
        ));
    }
}
