//! Black-box tests of policy (every mode × task slot × tool, with its trace
//! line) and of `shed-harness run` driven by a scripted OpenAI-compatible
//! model server (`common::model_server`); how a run meets a real server's
//! answers is `model_server`'s.

use crate::common;

use common::model_server::{ScriptedModel, tool_calls, tool_messages};
use common::{Host, row, stderr};
use serde_json::{Value, json};

const MODES: [&str; 3] = ["off", "enforce-explicit", "enforce-strict"];
const SLOTS: [&str; 4] = ["direct-command", "context", "quoted", "absent"];
const TOOLS: [&str; 3] = ["list_commands", "run_command", "run_read_command"];

/// What the spec says each mode does with each tool for each slot, and the
/// decision's name in the trace.
fn expected(mode: &str, slot: &str, tool: &str) -> (bool, &'static str) {
    match (mode, tool, slot) {
        ("off", _, _) => (true, "cfc_off"),
        (_, "run_command", "direct-command") => (true, "cfc_write_direct_command"),
        (_, "run_command", _) => (false, "cfc_write_requires_direct_command"),
        ("enforce-explicit", _, _) => (true, "cfc_enforce_explicit_read"),
        (_, _, "direct-command") => (true, "cfc_enforce_strict_read_direct_command"),
        (_, _, "context") => (true, "cfc_enforce_strict_host_command_read"),
        _ => (false, "cfc_enforce_strict_read_requires_authority"),
    }
}

// "The tool's effect class is `write` for every call … under `enforce-explicit`
// and `enforce-strict` a call runs only when the run's task is bound as a
// `direct-command` prompt slot" / "Its effect class is `read`, so an enforcing
// context-bound task may invoke it." / "At `enforce-strict`, `list_commands`
// and `run_read_command` are the narrow host-broker read exception for an
// explicitly `context`-bound task. Quoted or absent task authority still
// cannot invoke them … The policy trace names this admission
// `cfc_enforce_strict_host_command_read`"
#[test]
fn every_mode_slot_and_tool_is_judged_and_traced() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    for mode in MODES {
        for slot in SLOTS {
            for tool in TOOLS {
                let trace = host.path(&format!("trace-{mode}-{slot}-{tool}.jsonl"));
                let input = if tool == "list_commands" {
                    json!({})
                } else {
                    json!({"command": "a/b.find"})
                };
                let before_runs = host.runs().len();
                let before_lists = host.lists();
                let out = host.tool(
                    tool,
                    input,
                    &[
                        "--policy",
                        mode,
                        "--task-slot",
                        slot,
                        "--policy-trace",
                        trace.to_str().unwrap(),
                    ],
                );
                let (admitted, name) = expected(mode, slot, tool);
                let line: Value = serde_json::from_str(
                    std::fs::read_to_string(&trace)
                        .unwrap()
                        .lines()
                        .next()
                        .unwrap(),
                )
                .unwrap();
                let case = format!("{mode} {slot} {tool}");
                assert_eq!(line["tool"], tool, "{case}");
                assert_eq!(line["mode"], mode, "{case}");
                assert_eq!(line["taskSlot"], slot, "{case}");
                assert_eq!(line["name"], name, "{case}");
                assert_eq!(
                    line["decision"],
                    if admitted { "admit" } else { "refuse" },
                    "{case}"
                );
                assert_eq!(
                    line["effectClass"],
                    if tool == "run_command" {
                        "write"
                    } else {
                        "read"
                    },
                    "{case}"
                );
                if admitted {
                    assert_ne!(out["status"], "refused_by_policy", "{case}");
                } else {
                    assert_eq!(out["status"], "refused_by_policy", "{case}");
                    assert_eq!(out["decision"], name, "{case}");
                    assert_eq!(host.runs().len(), before_runs, "{case}: nothing may run");
                    assert_eq!(host.lists(), before_lists, "{case}: nothing may be listed");
                }
            }
        }
    }
}

// "Policy judges a tool call, so a batch is authorized or refused whole, as one write."
#[test]
fn a_batch_of_reads_through_run_command_is_one_write() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let trace = host.path("trace.jsonl");
    let out = host.tool(
        "run_command",
        json!({"calls": [{"command": "a/b.find"}, {"command": "a/b.find"}]}),
        &[
            "--task-slot",
            "context",
            "--policy-trace",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(out["status"], "refused_by_policy");
    let lines = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(lines.lines().count(), 1, "one decision for the whole batch");
    assert!(host.invocations().is_empty());
}

// The batch CLI: list → run → answer.
#[test]
fn a_model_lists_runs_and_answers() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        tool_calls(&[(
            "run_command",
            json!({"command": "jeff/runs.log_run", "args": {"q": "5 miles"}, "loomId": "jeff/runs"}),
        )]),
        json!({"role": "assistant", "content": "Logged your 5 mile run."}),
    ]);
    let transcript = host.path("transcript.json");
    let trace = host.path("trace.jsonl");
    let out = host.harness(&[
        "--task-slot",
        "direct-command",
        "--transcript",
        transcript.to_str().unwrap(),
        "--policy-trace",
        trace.to_str().unwrap(),
        "run",
        "--task",
        "log my 5 mile run",
        "--model",
        "scripted",
        "--base-url",
        &model.url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Logged your 5 mile run."
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["path"], "/v1/chat/completions");
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["list_commands", "run_command", "run_read_command"]
    );
    let listed = &tool_messages(&requests[1])[0];
    assert_eq!(
        listed["entries"][0]["signature"],
        "jeff/runs.log_run(q: string) -> {rows}  [write, app]"
    );
    let ran = &tool_messages(&requests[2])[1];
    assert_eq!(ran["status"], "executed");
    assert_eq!(host.runs().len(), 1);
    assert_eq!(host.runs()[0]["stdin"], r#"{"q":"5 miles"}"#);
    let record = common::read_json(&transcript);
    assert_eq!(record["taskSlot"], "direct-command");
    assert!(record["messages"].as_array().unwrap().len() >= 6);
    assert_eq!(std::fs::read_to_string(&trace).unwrap().lines().count(), 2);
}

/// Today's date, UTC, as 2026-12-01.
fn utc_today() -> String {
    jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date()
        .to_string()
}

// A model has no clock: the system prompt it receives carries the date and
// time (UTC), so "log today's run" can name a date — written as commands
// take a time (`2026-09-01T10:00:00Z`), for a model to copy.
#[test]
fn the_model_is_told_the_date_and_time() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::start(vec![json!({"role": "assistant", "content": "Done."})]);
    let before = utc_today();
    let out = host.harness(&[
        "run",
        "--task",
        "log my 5 mile run today",
        "--model",
        "scripted",
        "--base-url",
        &model.url,
    ]);
    let after = utc_today();
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    let system = &requests[0]["messages"][0];
    assert_eq!(system["role"], "system");
    let prompt = system["content"].as_str().unwrap();
    assert!(
        prompt.contains(&format!("{before}T")) || prompt.contains(&format!("{after}T")),
        "no date {before} in: {prompt}"
    );
    assert!(prompt.contains(" UTC"), "{prompt}");
}

// "so a task that arrived as `context` — a request a pattern submitted, say —
// cannot invoke this tool."
#[test]
fn a_context_task_under_enforce_explicit_cannot_write() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[(
            "run_command",
            json!({"command": "jeff/runs.log_run", "args": {"q": "x"}}),
        )]),
        json!({"role": "assistant", "content": "I could not log it."}),
    ]);
    let trace = host.path("trace.jsonl");
    let out = host.harness(&[
        "--policy",
        "enforce-explicit",
        "--task-slot",
        "context",
        "--policy-trace",
        trace.to_str().unwrap(),
        "run",
        "--task",
        "please log a run",
        "--model",
        "scripted",
        "--base-url",
        &model.url,
    ]);
    // The run answered, and says nothing was written (exit 4).
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let refused = &tool_messages(&model.requests()[1])[0];
    assert_eq!(refused["status"], "refused_by_policy");
    // The listing a context task may read (and the tools' schemas show)
    // is the host's one process: the write never reached it.
    assert_eq!(host.lists(), 1);
    assert!(host.runs().is_empty(), "the write never reached the host");
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&trace).unwrap().trim()).unwrap();
    assert_eq!(line["decision"], "refuse");
    assert_eq!(line["name"], "cfc_write_requires_direct_command");
}

// "the host's listing is read the first time a tool needs it and kept for
// the rest of the run, so a run that calls many commands lists once."
#[test]
fn fifty_run_commands_read_the_catalog_once() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let calls: Vec<(&str, Value)> = (0..50)
        .map(|i| {
            (
                "run_command",
                json!({"command": "jeff/runs.log_run", "args": {"q": i.to_string()}}),
            )
        })
        .collect();
    let model = ScriptedModel::start(vec![
        tool_calls(&calls),
        json!({"role": "assistant", "content": "done"}),
    ]);
    let out = host.harness(&[
        "--task-slot",
        "direct-command",
        "run",
        "--task",
        "log fifty",
        "--model",
        "scripted",
        "--base-url",
        &model.url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(host.runs().len(), 50);
    assert_eq!(host.lists(), 1);
    let results = tool_messages(&model.requests()[1]);
    assert_eq!(results.len(), 50);
    assert!(results.iter().all(|r| r["status"] == "executed"));
}

// "An explicit `list_commands`, and every `run_read_command`, reads the host afresh"
#[test]
fn list_commands_and_run_read_command_read_afresh() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[
            ("run_command", json!({"command": "a/b.find"})),
            ("run_command", json!({"command": "a/b.find"})),
        ]),
        tool_calls(&[
            ("list_commands", json!({})),
            ("run_read_command", json!({"command": "a/b.find"})),
            ("run_read_command", json!({"command": "a/b.find"})),
        ]),
        json!({"role": "assistant", "content": "done"}),
    ]);
    let out = host.harness(&[
        "--task-slot",
        "direct-command",
        "run",
        "--task",
        "t",
        "--model",
        "scripted",
        "--base-url",
        &model.url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        host.lists(),
        4,
        "one held read for run_command, then one per list_commands and run_read_command"
    );
}
