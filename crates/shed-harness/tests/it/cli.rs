//! Black-box tests of `shed-harness tool …` against the fake host CLI. Each
//! test names the sentence of spec/host-commands.md it proves.

use crate::common;

use common::{Host, TYPED_TASK, harness, row, stderr};
use serde_json::{Value, json};

// "The batch CLI accepts `--loom-commands-config /absolute/host-config.json`
// or `CF_HARNESS_LOOM_COMMANDS_CONFIG`."
#[test]
fn the_configuration_comes_from_the_flag_or_the_variable() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let out = std::process::Command::new(common::HARNESS)
        .args(["tool", "list_commands"])
        .env("CF_HARNESS_LOOM_COMMANDS_CONFIG", host.config())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["entries"][0]["name"], "a/b.find");
    let relative = harness(&[
        "--loom-commands-config",
        "host.json",
        "tool",
        "list_commands",
    ]);
    assert_eq!(relative.status.code(), Some(2));
    assert!(
        stderr(&relative).contains("is not absolute"),
        "{}",
        stderr(&relative)
    );
}

// "Without it the command tools are absent, including when `--allow-tool`
// names one: naming one without the configuration is refused at argument parsing."
#[test]
fn without_a_configuration_the_tools_are_absent() {
    let out = harness(&[
        "--allow-tool",
        "run_command",
        "tool",
        "run_command",
        "--input",
        "{}",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--allow-tool run_command needs a host configuration"),
        "{}",
        stderr(&out)
    );
    let out = harness(&["tool", "list_commands"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs a host configuration"),
        "{}",
        stderr(&out)
    );
}

// "Only the broker transport is accepted. … A direct transport would leave
// the attribution to the configuration, so it is refused when the file is read."
#[test]
fn a_direct_transport_is_refused_when_the_file_is_read() {
    let host = Host::with_config(json!([]), |mut c| {
        c["transport"]["kind"] = json!("direct");
        c
    });
    let out = host.harness(&["tool", "list_commands"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("only the broker transport is accepted"),
        "{err}"
    );
    assert!(err.contains("attribution"), "{err}");
    assert!(host.invocations().is_empty(), "nothing may start");
}

// "The variable name must use uppercase letters, digits, and underscores,
// starting with a letter or underscore, and cannot replace `PATH` or `LOOM_PAGE_RPC_QUEUE`."
#[test]
fn a_bad_job_id_variable_is_refused() {
    for bad in ["job_id", "9JOB", "PATH", "LOOM_PAGE_RPC_QUEUE"] {
        let host = Host::with_config(json!([]), |mut c| {
            c["jobIdEnvVar"] = json!(bad);
            c
        });
        let out = host.harness(&["tool", "list_commands"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("jobIdEnvVar"), "{}", stderr(&out));
    }
}

// "Each call runs the host's CLI over a cleared environment with
// `LOOM_PAGE_RPC_QUEUE` set to the queue" / "Both discovery and execution
// receive the id in their cleared host environment when the variable and id
// are present." / "a `jobId` in the configuration file is ignored" /
// "Neither the model's arguments nor ambient process environment select the id."
#[test]
fn the_host_gets_a_cleared_environment_with_the_job_id() {
    let host = Host::with_config(json!([row("a/b.log", "write")]), |mut c| {
        c["jobId"] = json!("file-job-must-be-ignored");
        c
    });
    let job = host.job_id_file("job-42");
    host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": {"q": "x"}}),
        &[
            "--task-slot",
            "direct-command",
            "--command-job-id-file",
            &job,
        ],
    );
    let invocations = host.invocations();
    assert_eq!(invocations.len(), 2, "one listing, one run");
    for invocation in &invocations {
        let env = invocation["env"].as_object().unwrap();
        let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(
            names,
            ["LOOM_COMMAND_JOB_ID", "LOOM_PAGE_RPC_QUEUE", "PATH"]
        );
        assert_eq!(env["LOOM_COMMAND_JOB_ID"], "job-42");
        assert_eq!(env["LOOM_PAGE_RPC_QUEUE"], host.queue().to_str().unwrap());
    }
}

// "Without a supplied id the variable is omitted"
#[test]
fn without_a_job_id_the_variable_is_omitted() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    host.tool("list_commands", json!({}), &[]);
    let env = host.invocations()[0]["env"].as_object().unwrap().clone();
    let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["LOOM_PAGE_RPC_QUEUE", "PATH"]);
}

// | `run_command` | `loom command run <id> --args-json - --json [--loom] [--expect]` |
// "The invocation appends `--read-only`, outside the model's JSON arguments."
// "`run_command` sends no read-only demand."
#[test]
fn run_invocations_carry_the_spec_arguments_and_stdin() {
    let host = Host::new(json!([row("a/b.log", "write"), row("a/b.find", "read")]));
    host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": {"q": "x"}, "loomId": "jeff/runs", "expectedVersion": 3}),
        &TYPED_TASK,
    );
    host.tool(
        "run_read_command",
        json!({"command": "a/b.find", "args": {"q": "y"}}),
        &[],
    );
    let runs = host.runs();
    assert_eq!(
        runs[0]["argv"],
        json!([
            "command",
            "run",
            "a/b.log",
            "--args-json",
            "-",
            "--json",
            "--loom=jeff/runs",
            "--expect",
            "3"
        ])
    );
    assert_eq!(runs[0]["stdin"], r#"{"q":"x"}"#);
    assert_eq!(
        runs[1]["argv"],
        json!([
            "command",
            "run",
            "a/b.find",
            "--args-json",
            "-",
            "--json",
            "--read-only"
        ])
    );
    assert_eq!(
        host.invocations()[0]["argv"],
        json!(["command", "list", "--json"])
    );
}

// "Each call … is one `loom command run` process; a call refused before it is sent starts none."
#[test]
fn a_refused_call_starts_no_process() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    let unknown = host.tool("run_command", json!({"command": "a/b.nope"}), &TYPED_TASK);
    assert_eq!(unknown["status"], "unknown_command");
    let malformed = host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": "nope"}),
        &TYPED_TASK,
    );
    assert_eq!(malformed["status"], "failed_to_deliver");
    assert_eq!(malformed["reason"], "invalid_input");
    let both = host.tool(
        "run_command",
        json!({"command": "a/b.log", "calls": [{"command": "a/b.log"}]}),
        &TYPED_TASK,
    );
    assert_eq!(both["reason"], "invalid_input");
    let big = host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": {"q": "x".repeat(17 * 1024)}}),
        &TYPED_TASK,
    );
    assert_eq!(big["landed"], "no");
    assert!(big["message"].as_str().unwrap().contains("16 KiB"));
    assert!(host.runs().is_empty(), "no run process may start");
}

// "A batch's calls run concurrently, at most four in flight to the host at
// once, and one call's failure does not stop the others."
#[test]
fn sixteen_calls_never_have_more_than_four_in_flight() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    host.set_delay_ms(150);
    host.set_outcome("a/b.lost", json!({"$exit": 3}));
    let mut calls: Vec<Value> = (0..15)
        .map(|i| json!({"command": "a/b.log", "args": {"q": i.to_string()}}))
        .collect();
    calls.insert(5, json!({"command": "a/b.lost"}));
    let mut listing = vec![row("a/b.log", "write")];
    listing.push(row("a/b.lost", "write"));
    host.set_listing(json!(listing));
    let result = host.tool("run_command", json!({"calls": calls}), &TYPED_TASK);
    assert_eq!(host.runs().len(), 16);
    let max = host.max_in_flight();
    assert!(max <= 4, "{max} calls were in flight at once");
    assert!(max >= 2, "the calls did not run concurrently ({max})");
    let results = result["results"].as_array().unwrap();
    assert_eq!(results.len(), 16);
    assert_eq!(results[5]["status"], "failed_to_deliver");
    assert_eq!(results[5]["landed"], "unknown");
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| i == 5 || r["status"] == "executed")
    );
}

// "`list_commands` … Returns: outputId, status, notice, entries, hidden"
// "An entry carries `readOnlyGranted: true` where the broker grants read-only execution"
// "A manifest row is left out, and counted as `hidden`, when its own declarations say an agent may not run it"
#[test]
fn list_commands_shows_signatures_hides_rows_and_marks_grants() {
    let mut dossier = row("people-discovery.dossier", "read");
    dossier["inputSchema"] = json!({
        "type": "object",
        "properties": {"entity_id": {"type": "string"}, "limit": {"type": "integer", "default": 50}},
        "required": ["entity_id"]
    });
    dossier["outputs"] = json!({"messages": {}, "records": {}});
    dossier["scope"] = Value::Null;
    let mut hidden_rows = vec![];
    for (key, value) in [
        ("origin", json!("pattern")),
        ("developer", json!(true)),
        ("actors", json!(["person"])),
        ("origins_refused", json!(["session"])),
        ("origins_required", json!(["web"])),
        ("grant", json!({"consent": "x"})),
    ] {
        let mut r = row(&format!("hidden.{key}"), "read");
        r[key] = value;
        hidden_rows.push(r);
    }
    let mut all = vec![dossier, row("a/b.log", "write")];
    all.extend(hidden_rows);
    all.push(json!("not a row"));
    let host = Host::new(json!(all));
    let out = host.tool("list_commands", json!({}), &[]);
    assert_eq!(out["status"], "ok");
    assert!(out["outputId"].as_str().unwrap().starts_with("out-"));
    assert!(
        out["notice"]
            .as_str()
            .unwrap()
            .starts_with("A command's effect is shown only where the host declares it;")
    );
    assert_eq!(out["hidden"], 6);
    assert_eq!(out["omitted"], 1);
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0]["signature"],
        "people-discovery.dossier(entity_id: string, limit?: integer = 50) -> {messages, records}  [read, global]"
    );
    assert_eq!(entries[0]["readOnlyGranted"], true);
    assert!(entries[1].get("readOnlyGranted").is_none());
    assert_eq!(
        entries[1]["signature"],
        "a/b.log(q: string) -> {rows}  [write, app]"
    );
}

// "A command named in `detail` also carries its `inputSchema`: the host's
// schema with its `x-*` extension keywords removed … or `true`"
// "Takes an optional `detail`, naming up to sixteen commands."
#[test]
fn detail_carries_stripped_schemas_up_to_sixteen() {
    let mut r = row("a/b.log", "write");
    r["inputSchema"] = json!({"type": "object", "x-host": 1, "properties": {"q": {"type": "string", "x-source": "job"}}});
    let mut open = row("a/b.open", "write");
    open["inputSchema"] = json!("not an object");
    let host = Host::new(json!([r, open]));
    let out = host.tool(
        "list_commands",
        json!({"detail": ["a/b.log", "a/b.open"]}),
        &[],
    );
    assert_eq!(
        out["entries"][0]["inputSchema"],
        json!({"type": "object", "properties": {"q": {"type": "string"}}})
    );
    assert_eq!(out["entries"][1]["inputSchema"], json!(true));
    let seventeen: Vec<String> = (0..17).map(|i| format!("c{i}")).collect();
    let refused = host.tool("list_commands", json!({"detail": seventeen}), &[]);
    assert_eq!(refused["reason"], "invalid_input");
}

// "A listing larger than the model bound keeps its first entries whole and
// the rest without description; a command named in `detail` is always kept
// whole. … `compacted` the entries shown without description."
#[test]
fn a_small_bound_compacts_the_listing() {
    let rows: Vec<Value> = (0..60)
        .map(|i| {
            let mut r = row(&format!("a/b.c{i:02}"), "read");
            r["description"] = json!("d".repeat(300));
            r
        })
        .collect();
    let host = Host::new(json!(rows));
    let out = host.tool(
        "list_commands",
        json!({"detail": ["a/b.c59"]}),
        &["--tool-output-bound", "12288"],
    );
    assert!(out.to_string().len() <= 12288);
    let entries = out["entries"].as_array().unwrap();
    let compacted = out["compacted"].as_u64().unwrap() as usize;
    assert!(compacted > 0);
    assert!(entries[0].get("description").is_some());
    let first_compact = entries
        .iter()
        .position(|e| e.get("description").is_none())
        .unwrap();
    assert!(
        entries[first_compact..]
            .iter()
            .all(|e| e.get("description").is_none() || e["name"] == "a/b.c59")
    );
    let c59 = entries
        .iter()
        .find(|e| e["name"] == "a/b.c59")
        .expect("detail entry kept");
    assert!(c59.get("description").is_some() && c59.get("inputSchema").is_some());
    assert_eq!(
        entries.len() + out["omitted"].as_u64().unwrap() as usize,
        60,
        "every row is shown or counted"
    );
}

// "the catalog could not be read (`command_failed`, `malformed_payload`)"
// "A read that fails is not held; the next call asks the host again."
#[test]
fn a_listing_that_fails_is_reported_and_not_held() {
    let host = Host::new(json!([]));
    host.fail_listing(5);
    let out = host.tool("run_command", json!({"command": "a/b.log"}), &TYPED_TASK);
    assert_eq!(out["status"], "failed_to_deliver");
    assert_eq!(out["landed"], "no");
    assert_eq!(out["reason"], "command_failed");
    std::fs::remove_file(host.queue().join("list-exit")).unwrap();
    host.set_raw_listing("this is not json");
    let out = host.tool("list_commands", json!({}), &[]);
    assert_eq!(out["reason"], "malformed_payload");
    assert!(host.runs().is_empty());
}

// A host that refuses the listing (the broker, for an ended job) answers an
// outcome in its place: the catalog could not be read, and the model reads
// the host's sentence rather than a complaint about the payload's shape.
#[test]
fn a_refused_listing_reports_the_hosts_sentence() {
    let host = Host::new(json!([]));
    host.set_raw_listing(
        r#"{"ok": false, "code": "forbidden", "message": "this job has ended — start a new one with shed job create"}"#,
    );
    let out = host.tool("list_commands", json!({}), &[]);
    assert_eq!(out["status"], "failed_to_deliver");
    assert_eq!(out["reason"], "command_failed");
    let message = out["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("forbidden: this job has ended — start a new one with shed job create"),
        "{out}"
    );
}

// "`executed`: … `outcome` holds `ok`, `id`, `code`, `mayHaveLanded`,
// `completed`, and `bodyBytes`, each text cut to an identifier's length and
// `completed` to its first 32 operation ids"
#[test]
fn an_executed_call_returns_a_small_summary_and_its_entry() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    let completed: Vec<String> = (0..40).map(|i| format!("op-{i}")).collect();
    host.set_outcome(
        "a/b.log",
        json!({"ok": true, "id": "x".repeat(90), "code": "ok", "mayHaveLanded": true, "completed": completed,
               "body": {"entities": ["e1"]}, "version": 7, "message": "log_run: wrote 1 entity"}),
    );
    let out = host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": {"q": "x"}}),
        &TYPED_TASK,
    );
    assert_eq!(out["status"], "executed");
    let outcome = &out["outcome"];
    assert_eq!(outcome["id"].as_str().unwrap().chars().count(), 64);
    assert_eq!(outcome["completed"].as_array().unwrap().len(), 32);
    assert_eq!(
        outcome["bodyBytes"],
        json!({"entities": ["e1"]}).to_string().len()
    );
    assert_eq!(outcome["mayHaveLanded"], true);
    assert_eq!(out["entry"]["status"], "admitted");
    assert_eq!(out["entry"]["body"], json!({"entities": ["e1"]}));
    assert!(out.get("hint").is_none());
}

// "A refusal by the broker (`forbidden`) or by the command layer (`refused`)
// reads as `code: "not_granted"`, with the host's code beside it as
// `hostCode` and a `hint`" / "An answer the command layer refused as
// `bad-args` … carries the command's `signature`"
#[test]
fn refusals_read_not_granted_and_bad_args_carry_the_signature() {
    let host = Host::new(json!([row("a/b.log", "write"), row("a/b.deny", "write")]));
    host.set_outcome(
        "a/b.deny",
        json!({"ok": false, "code": "forbidden", "message": "not in scope"}),
    );
    host.set_outcome(
        "a/b.log",
        json!({"ok": false, "code": "bad-args", "message": "q is a string"}),
    );
    let denied = host.tool("run_command", json!({"command": "a/b.deny"}), &TYPED_TASK);
    assert_eq!(denied["outcome"]["code"], "not_granted");
    assert_eq!(denied["outcome"]["hostCode"], "forbidden");
    assert!(
        denied["hint"]
            .as_str()
            .unwrap()
            .contains("offer it to the person")
    );
    let bad = host.tool(
        "run_command",
        json!({"command": "a/b.log", "args": {"q": 1}}),
        &TYPED_TASK,
    );
    assert_eq!(bad["outcome"]["code"], "bad-args");
    assert_eq!(
        bad["signature"],
        "a/b.log(q: string) -> {rows}  [write, app]"
    );
}

// "`unknown_command`: … `suggestions` names up to three listed commands
// nearest the one called — names containing it first, then by edit distance
// — and `hint` points the model back to `list_commands`."
#[test]
fn unknown_commands_get_suggestions() {
    let host = Host::new(json!([
        row("graph.query", "read"),
        row("jeff/runs.log_run", "write"),
        row("apps.list", "read"),
        row("graph.apply", "write"),
        row("jeff/runs.log_run_fast", "write"),
    ]));
    let out = host.tool("run_command", json!({"command": "log_run"}), &TYPED_TASK);
    assert_eq!(out["status"], "unknown_command");
    let suggestions = out["suggestions"].as_array().unwrap();
    assert_eq!(suggestions.len(), 3);
    assert_eq!(suggestions[0], "jeff/runs.log_run");
    assert_eq!(suggestions[1], "jeff/runs.log_run_fast");
    assert!(out["hint"].as_str().unwrap().contains("list_commands"));
    let typo = host.tool("run_command", json!({"command": "graph.qury"}), &TYPED_TASK);
    assert_eq!(typo["suggestions"][0], "graph.query");
}

// "`failed_to_deliver` with `landed: "unknown"`: the answer was lost after
// the command was sent, and the command may have taken effect."
#[test]
fn a_lost_answer_is_landed_unknown() {
    let host = Host::new(json!([
        row("a/b.log", "write"),
        row("a/b.garbled", "write")
    ]));
    // Exit 1: the broker's answer did not come back. (Exit 2, the CLI's
    // usage error, sent nothing: `cli_hardening::a_host_usage_error_did_not_land`.)
    host.set_outcome("a/b.log", json!({"$exit": 1}));
    host.set_outcome("a/b.garbled", json!({"$stdout": "{not json"}));
    for command in ["a/b.log", "a/b.garbled"] {
        let out = host.tool("run_command", json!({"command": command}), &TYPED_TASK);
        assert_eq!(out["status"], "failed_to_deliver");
        assert_eq!(out["landed"], "unknown", "{out}");
    }
}

// "A batch carries one to sixteen calls" / "`batch_too_large` (more than
// sixteen calls)" / "In a batch, a malformed call … come[s] back as that
// call's result; the rest stop the whole tool call and come back in place of the batch."
#[test]
fn batch_limits_and_malformed_calls() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    let seventeen: Vec<Value> = (0..17).map(|_| json!({"command": "a/b.log"})).collect();
    let out = host.tool("run_command", json!({"calls": seventeen}), &TYPED_TASK);
    assert_eq!(out["status"], "failed_to_deliver");
    assert_eq!(out["reason"], "batch_too_large");
    assert!(host.invocations().is_empty());
    let out = host.tool(
        "run_command",
        json!({"calls": [{"command": "a/b.log"}, {"args": {}}]}),
        &TYPED_TASK,
    );
    assert_eq!(out["status"], "batch");
    assert_eq!(out["results"][0]["status"], "executed");
    assert_eq!(out["results"][1]["status"], "failed_to_deliver");
    assert_eq!(out["results"][1]["reason"], "invalid_input");
    assert_eq!(host.runs().len(), 1);
}

// "`results` holds one result per call, in the calls' order, … with its own
// `outputId`, minted in the calls' order." / "An executed call's summary is
// compact: `completed` is replaced by its count, `outcome.completedOmitted`,
// and `hint` is left out; the `signature` a `bad-args` refusal carries is kept."
#[test]
fn a_batch_has_compact_summaries_in_call_order() {
    let host = Host::new(json!([
        row("a/b.log", "write"),
        row("a/b.deny", "write"),
        row("a/b.bad", "write")
    ]));
    host.set_outcome(
        "a/b.log",
        json!({"ok": true, "code": "ok", "completed": ["o1", "o2"], "body": {}}),
    );
    host.set_outcome(
        "a/b.deny",
        json!({"ok": false, "code": "refused", "body": null}),
    );
    host.set_outcome(
        "a/b.bad",
        json!({"ok": false, "code": "bad-args", "body": null}),
    );
    let out = host.tool(
        "run_command",
        json!({"calls": [{"command": "a/b.log"}, {"command": "a/b.deny"}, {"command": "a/b.bad"}, {"command": "zzz"}]}),
        &TYPED_TASK,
    );
    assert_eq!(out["status"], "batch");
    assert_eq!(out["truncated"], false);
    let results = out["results"].as_array().unwrap();
    let ids: Vec<u64> = results
        .iter()
        .map(|r| {
            r["outputId"]
                .as_str()
                .unwrap()
                .trim_start_matches("out-")
                .parse()
                .unwrap()
        })
        .collect();
    assert!(ids.windows(2).all(|w| w[0] + 1 == w[1]), "{ids:?}");
    assert_eq!(results[0]["outcome"]["completedOmitted"], 2);
    assert!(results[0]["outcome"].get("completed").is_none());
    assert_eq!(results[1]["outcome"]["code"], "not_granted");
    assert!(results[1].get("hint").is_none());
    assert_eq!(
        results[2]["signature"],
        "a/b.bad(q: string) -> {rows}  [write, app]"
    );
    assert_eq!(results[3]["status"], "unknown_command");
}

// "The summaries are charged against one output bound for the whole batch …
// in the calls' order, each beside the smallest form of every call after it;
// one that does not fit drops its `signature`, and then keeps only the
// outcome's `ok`, `code`, and `bodyBytes`, marked `summaryOmitted: true`, so
// later calls shrink first. The answers are measured in the calls' order
// against what the summaries leave … `truncated` says whether any was."
#[test]
fn a_batch_over_the_bound_shrinks_later_calls_first() {
    let mut bad = row("a/b.bad", "write");
    let props: serde_json::Map<String, Value> = (0..30)
        .map(|i| (format!("argument_{i}"), json!({"type": "string"})))
        .collect();
    bad["inputSchema"] = json!({"type": "object", "properties": props});
    let host = Host::new(json!([bad]));
    host.set_outcome("a/b.bad", json!({"ok": false, "code": "bad-args", "id": "i".repeat(60), "completed": ["a"], "body": {"text": "b".repeat(700)}}));
    let calls: Vec<Value> = (0..16).map(|_| json!({"command": "a/b.bad"})).collect();
    let out = host.tool(
        "run_command",
        json!({"calls": calls}),
        &[
            "--task-slot",
            "direct-command",
            "--tool-output-bound",
            "4096",
        ],
    );
    assert!(out.to_string().len() <= 4096, "{}", out.to_string().len());
    let results = out["results"].as_array().unwrap();
    let stage = |r: &Value| {
        if r["outcome"].get("summaryOmitted").is_some() {
            2
        } else if r.get("signature").is_none() {
            1
        } else {
            0
        }
    };
    let stages: Vec<i32> = results.iter().map(stage).collect();
    assert!(
        stages.windows(2).all(|w| w[0] <= w[1]),
        "later calls shrink first: {stages:?}"
    );
    assert_eq!(stages[0], 0);
    assert_eq!(*stages.last().unwrap(), 2);
    let minimal = results.last().unwrap();
    assert_eq!(
        minimal["outcome"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["ok", "code", "bodyBytes", "summaryOmitted"]
    );
    assert_eq!(out["truncated"], true);
    assert!(
        results
            .iter()
            .any(|r| r["truncated"] == true && r.get("entry").is_none())
    );
}

// "Before execution it reads the host's catalog afresh and requires, for each
// call, that the selected row has both `effect: "read"` and the broker's
// literal `readOnlyGranted: true`. … a changed or unknown effect, or an absent
// read-only grant, returns `not_granted` with `landed: "no"` and a `hint`,
// without issuing a command."
#[test]
fn run_read_command_needs_a_read_effect_and_the_literal_grant() {
    let mut stringly = row("a/b.stringly", "read");
    stringly["readOnlyGranted"] = json!("true");
    let mut ungranted = row("a/b.ungranted", "read");
    ungranted["readOnlyGranted"] = json!(false);
    let mut no_effect = row("a/b.noeffect", "read");
    no_effect.as_object_mut().unwrap().remove("effect");
    no_effect["readOnlyGranted"] = json!(true);
    let mut write = row("a/b.write", "write");
    write["readOnlyGranted"] = json!(true);
    let host = Host::new(json!([
        stringly,
        ungranted,
        no_effect,
        write,
        row("a/b.ok", "read")
    ]));
    for command in ["a/b.stringly", "a/b.ungranted", "a/b.noeffect", "a/b.write"] {
        let out = host.tool("run_read_command", json!({"command": command}), &[]);
        assert_eq!(out["status"], "not_granted", "{command}: {out}");
        assert_eq!(out["landed"], "no");
        assert!(out["hint"].is_string());
    }
    assert!(host.runs().is_empty());
    let out = host.tool(
        "run_read_command",
        json!({"calls": [{"command": "a/b.ok"}, {"command": "a/b.write"}, {"command": "a/b.gone"}]}),
        &[],
    );
    assert_eq!(out["results"][0]["status"], "executed");
    assert_eq!(out["results"][1]["status"], "not_granted");
    assert_eq!(out["results"][2]["status"], "unknown_command");
    assert_eq!(host.runs().len(), 1);
}

// "An admitted answer is shown to the model as the `entry`, its strings
// bounded, and held as a `document` referent with label source `command` and
// provenance naming the command, the agent actor, the loom, and the version"
// "A withheld answer shows none of its content: the model reads the `outcome`
// summary and the entry's `status` and `reasonCode`."
#[test]
fn answers_above_the_ceiling_are_withheld_and_admitted_ones_held() {
    let host = Host::new(json!([row("a/b.mine", "read"), row("a/b.theirs", "read")]));
    host.set_outcome(
        "a/b.mine",
        json!({"ok": true, "code": "ok", "body": {"secret": "s".repeat(5000)}, "version": 9,
               "ifc": {"readers": ["space:jeff", "space:ann"], "integrity": "trusted"},
               "actor": "agent:job-7"}),
    );
    host.set_outcome(
        "a/b.theirs",
        json!({"ok": true, "code": "ok", "body": {"secret": "ann's diary"}, "version": 2,
               "ifc": {"readers": ["space:ann"], "integrity": "trusted"}}),
    );
    let transcript = host.path("t.json");
    let t = transcript.to_str().unwrap();
    let job = host.job_id_file("secret-j-7");
    let common = [
        "--task-slot",
        "direct-command",
        "--observation-ceiling",
        "space:jeff",
        "--command-job-id-file",
        &job,
        "--transcript",
        t,
    ];
    let mine = host.tool(
        "run_command",
        json!({"command": "a/b.mine", "loomId": "jeff/runs"}),
        &common,
    );
    assert_eq!(mine["entry"]["status"], "admitted");
    assert!(
        mine["entry"]["body"]["secret"]
            .as_str()
            .unwrap()
            .chars()
            .count()
            <= 2048
    );
    let record = common::read_json(&transcript);
    let referent = &record["journal"]["referents"][0];
    assert_eq!(referent["kind"], "document");
    assert_eq!(referent["labelSource"], "command");
    assert_eq!(
        referent["provenance"],
        json!({"command": "a/b.mine", "actor": "agent:job-7", "loom": "jeff/runs", "version": 9})
    );
    // The provenance names the agent as the host does; the job id the run
    // carries is its secret and is written nowhere.
    assert!(
        !std::fs::read_to_string(&transcript)
            .unwrap()
            .contains("secret-j-7"),
        "the job id leaked into the transcript"
    );
    assert_eq!(record["journal"]["observations"][0]["channel"], "output");
    let theirs = host.tool("run_command", json!({"command": "a/b.theirs"}), &common);
    assert_eq!(
        theirs["entry"],
        json!({"status": "withheld", "reasonCode": "above_observation_ceiling"})
    );
    assert!(!theirs.to_string().contains("diary"));
    // Issue 23, finding 2: its outcome says only that the call was delivered
    // — no code, size or ids, each of which can differ with the content.
    assert_eq!(
        theirs["outcome"],
        json!({"delivered": true, "landed": "unknown"})
    );
    assert!(
        theirs["hint"]
            .as_str()
            .unwrap()
            .contains("observation ceiling")
    );
    let record = common::read_json(&transcript);
    assert!(
        record["journal"]["referents"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        record["journal"]["observations"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

// "its own `ifc` label where it carries one, else the query's label" /
// "A batch records one observation, the join of its admitted answers' labels."
#[test]
fn a_batch_records_one_observation_the_join_of_its_labels() {
    let host = Host::new(json!([
        row("a/b.one", "read"),
        row("a/b.two", "read"),
        row("a/b.plain", "read")
    ]));
    host.set_outcome("a/b.one", json!({"ok": true, "code": "ok", "body": 1, "ifc": {"readers": ["space:jeff", "person:ada"], "integrity": "trusted"}}));
    host.set_outcome("a/b.two", json!({"ok": true, "code": "ok", "body": 2, "ifc": {"readers": ["space:jeff"], "integrity": "untrusted"}}));
    let transcript = host.path("t.json");
    let out = host.tool(
        "run_command",
        json!({"calls": [{"command": "a/b.one"}, {"command": "a/b.two"}, {"command": "a/b.plain"}]}),
        &["--task-slot", "direct-command", "--transcript", transcript.to_str().unwrap()],
    );
    assert!(
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["entry"]["status"] == "admitted")
    );
    let journal = common::read_json(&transcript)["journal"].clone();
    let observations = journal["observations"].as_array().unwrap();
    assert_eq!(observations.len(), 1);
    assert_eq!(
        observations[0]["label"],
        json!({"readers": ["space:jeff"], "integrity": "untrusted"})
    );
    // The unlabeled answer took the batch input's label: public, trusted (a direct-command task).
    assert_eq!(
        journal["referents"][2]["label"],
        json!({"readers": ["public"], "integrity": "trusted"})
    );
}

// "An answer that alone passes the output bound is left out and the result is marked truncated."
#[test]
fn an_answer_over_the_bound_alone_is_left_out() {
    let host = Host::new(json!([row("a/b.big", "read")]));
    let body: Vec<String> = (0..20)
        .map(|i| format!("{i}{}", "x".repeat(1000)))
        .collect();
    host.set_outcome("a/b.big", json!({"ok": true, "code": "ok", "body": body}));
    let out = run_big_under_4_kib(&host);
    assert_eq!(out["truncated"], true);
    assert!(out.get("entry").is_none());
    assert_eq!(out["outcome"]["ok"], true);
}

/// `run_command` of `a/b.big` as a direct command, under a 4 KiB bound.
fn run_big_under_4_kib(host: &Host) -> Value {
    host.tool(
        "run_command",
        json!({"command": "a/b.big"}),
        &[
            "--task-slot",
            "direct-command",
            "--tool-output-bound",
            "4096",
        ],
    )
}

// Issue 24, point 1: an answer over the bound alone shows the host's own
// text — its sentence, its first rows whole and the line saying how many
// more — the rows `shed command run` prints, rather than nothing.
#[test]
fn an_answer_over_the_bound_shows_the_hosts_bounded_text() {
    let host = Host::new(json!([row("a/b.big", "read")]));
    let rows: Vec<Value> = (0..20)
        .map(|i| json!({"num": i, "note": "x".repeat(1000)}))
        .collect();
    let said = format!(
        "big: 20 rows in a/b\n{}\n… and 18 more rows not shown here",
        json!({"rows": rows[..2]})
    );
    host.set_outcome(
        "a/b.big",
        json!({"ok": true, "code": "ok", "body": {"rows": rows}, "message": said, "version": 3}),
    );
    let out = run_big_under_4_kib(&host);
    assert_eq!(out["truncated"], true, "{out}");
    assert_eq!(
        out["entry"],
        json!({"status": "admitted", "text": said, "version": 3}),
        "{out}"
    );
    assert_eq!(out["outcome"]["ok"], true);
}

// The host's text after its sentence is its data again: beside the data as
// `body`, an entry carries the sentence alone.
#[test]
fn an_entry_carries_the_hosts_sentence_beside_its_body() {
    let host = Host::new(json!([row("a/b.board", "read")]));
    let body = json!({"rows": [{"num": 1}]});
    host.set_outcome(
        "a/b.board",
        json!({"ok": true, "code": "ok", "body": body,
               "message": format!("board: 1 row in a/b\n{body}")}),
    );
    let out = host.tool(
        "run_command",
        json!({"command": "a/b.board"}),
        &["--task-slot", "direct-command"],
    );
    assert_eq!(
        out["entry"],
        json!({"status": "admitted", "body": body, "message": "board: 1 row in a/b"}),
        "{out}"
    );
}

// "A command whose target is `loom` takes a `loomId`; `run_command` passes
// the one a call names and infers none from the target."
#[test]
fn a_loom_command_gets_only_the_loom_the_call_names() {
    let mut r = row("graph.query", "read");
    r["scope"] = json!("loom");
    let host = Host::new(json!([r]));
    let listed = host.tool("list_commands", json!({}), &[]);
    assert_eq!(
        listed["entries"][0]["signature"],
        "graph.query(q: string) -> {rows}  [read, loom]"
    );
    host.tool(
        "run_command",
        json!({"command": "graph.query", "args": {"q": ".jog!"}}),
        &TYPED_TASK,
    );
    host.tool(
        "run_command",
        json!({"command": "graph.query", "loomId": "jeff/runs"}),
        &TYPED_TASK,
    );
    let runs = host.runs();
    assert!(
        !runs[0]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().starts_with("--loom"))
    );
    assert_eq!(
        runs[1]["argv"].as_array().unwrap()[6..],
        [json!("--loom=jeff/runs")]
    );
}
