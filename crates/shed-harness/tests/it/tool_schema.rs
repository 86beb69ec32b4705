//! The tool definitions `shed-harness run` sends the model server, read from
//! the requests the scripted server recorded: once the listing is known and
//! fits its bound, `run_command`'s and `run_read_command`'s `command` is an
//! `enum` of the names it shows (for `run_read_command`, those it may run),
//! and where the commands' schemas are small enough `args` follows each
//! one's (an `anyOf` of one `{command: const, args: schema}` per command);
//! nothing is constrained when the listing was cut; and a call outside the
//! enum is still refused as before.

use crate::common;

use common::model_server::{ScriptedModel, tool_calls, tool_messages};
use common::{Host, TYPED_TASK, row, stderr};
use serde_json::{Value, json};

/// `shed-harness run` with a task the person typed against `model`, the
/// global flags `before` first.
fn run(host: &Host, model: &ScriptedModel, before: &[&str]) -> std::process::Output {
    let mut args = TYPED_TASK.to_vec();
    args.extend_from_slice(before);
    args.extend([
        "run",
        "--task",
        "log my run",
        "--model",
        "m",
        "--base-url",
        &model.url,
    ]);
    host.harness(&args)
}

/// The `parameters` of the tool `name` a request offered.
fn parameters(request: &Value, name: &str) -> Value {
    request["tools"]
        .as_array()
        .expect("the request offers tools")
        .iter()
        .find(|t| t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {}", request["tools"]))["function"]["parameters"]
        .clone()
}

/// The names a tool's schema constrains `command` to, in the single call
/// and in a batch's calls (which must agree); `None` where it leaves it open.
fn command_enum(request: &Value, name: &str) -> Option<Vec<String>> {
    let schema = parameters(request, name);
    let single = schema["properties"]["command"].get("enum").cloned();
    let batch = schema["properties"]["calls"]["items"]["properties"]["command"]
        .get("enum")
        .cloned();
    assert_eq!(
        single, batch,
        "{name}: a batch's call names what one call names"
    );
    single.map(|names| serde_json::from_value(names).unwrap())
}

fn answer(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// The listing of the first tests: a write, a granted read, a read without
/// the grant, a row an agent may not run (hidden) and a row above the
/// ceiling (hidden too).
fn host_with_five_rows() -> Host {
    let mut hidden = row("a/b.dev", "write");
    hidden["developer"] = json!(true);
    let mut private = row("a/b.private", "read");
    private["ifc"] = json!({"readers": ["space:secret"], "integrity": "trusted"});
    let mut ungranted = row("a/b.peek", "read");
    ungranted["readOnlyGranted"] = json!(false);
    Host::new(json!([
        row("a/b.log", "write"),
        row("a/b.find", "read"),
        ungranted,
        hidden,
        private,
    ]))
}

const CEILING: [&str; 2] = ["--observation-ceiling", "space:demo"];

// "`run_command`'s and `run_read_command`'s `command` is an `enum` of the
// names the listing showed (when the listing fits its bound)". The first
// turn already has it: the harness reads the listing before it, as
// `list_commands` would show it; each later turn has the listing the model
// was last shown.
#[test]
fn after_a_listing_command_is_an_enum_of_exactly_the_listed_names() {
    let host = host_with_five_rows();
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        answer("listed"),
    ]);
    let out = run(&host, &model, &CEILING);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let listed = &tool_messages(&requests[1])[0];
    let shown: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["a/b.log", "a/b.find", "a/b.peek"], "{listed}");
    for request in &requests {
        assert_eq!(
            command_enum(request, "run_command").unwrap(),
            shown,
            "run_command names every listed command, and no hidden one"
        );
        assert_eq!(
            command_enum(request, "run_read_command").unwrap(),
            ["a/b.find"],
            "run_read_command names the listed reads it may run: effect read and readOnlyGranted"
        );
        assert_eq!(
            parameters(request, "list_commands"),
            json!({
                "type": "object",
                "properties": {"detail": {"type": "array", "items": {"type": "string"}, "maxItems": 16, "description": "Command names whose full input schema you want."}},
                "additionalProperties": false
            }),
            "list_commands is unchanged"
        );
    }
    // The listing the first turn's tools carry is an observation, as the
    // listing is.
    let transcript = host.path("t.json");
    let model = ScriptedModel::start(vec![answer("nothing to do")]);
    let out = run(
        &host,
        &model,
        &[
            CEILING[0],
            CEILING[1],
            "--transcript",
            transcript.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(command_enum(&model.requests()[0], "run_command").is_some());
    let observations = &common::read_json(&transcript)["journal"]["observations"];
    assert_eq!(observations.as_array().unwrap().len(), 1, "{observations}");
    assert_eq!(observations[0]["channel"], "tools", "{observations}");
    assert_eq!(observations[0]["tool"], "list_commands", "{observations}");

    // A run offering run_command alone: the schema is the model's one way to
    // learn the names, and it has them.
    let model = ScriptedModel::start(vec![answer("nothing to do")]);
    let out = run(
        &host,
        &model,
        &[CEILING[0], CEILING[1], "--allow-tool", "run_command"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let request = &model.requests()[0];
    assert_eq!(request["tools"].as_array().unwrap().len(), 1);
    assert_eq!(command_enum(request, "run_command").unwrap(), shown);
}

// "A server that ignores schemas loses nothing": a call naming a command
// outside the enum is answered as it was before there was one — refused,
// with the nearest listed names, and nothing reaches the host.
#[test]
fn a_call_outside_the_enum_is_still_refused_and_nothing_is_sent() {
    let host = host_with_five_rows();
    let model = ScriptedModel::start(vec![
        tool_calls(&[
            (
                "run_command",
                json!({"command": "a/b.logg", "args": {"q": "x"}}),
            ),
            (
                "run_read_command",
                json!({"command": "a/b.peek", "args": {"q": "x"}}),
            ),
        ]),
        answer("could not"),
    ]);
    let out = run(&host, &model, &CEILING);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    let names = command_enum(&requests[0], "run_command").unwrap();
    assert!(!names.contains(&"a/b.logg".to_string()), "{names:?}");
    let read_names = command_enum(&requests[0], "run_read_command").unwrap();
    assert!(
        !read_names.contains(&"a/b.peek".to_string()),
        "{read_names:?}"
    );
    let results = tool_messages(&requests[1]);
    assert_eq!(results[0]["status"], "unknown_command", "{}", results[0]);
    assert_eq!(results[0]["suggestions"][0], "a/b.log", "{}", results[0]);
    assert_eq!(results[1]["status"], "not_granted", "{}", results[1]);
    assert!(host.runs().is_empty(), "{:?}", host.runs());
}

// "(when the listing fits its bound)": a listing cut to the run's bound
// leaves rows out, and an enum of what it kept would hold the model to a
// part of what it may run. Its tools constrain nothing, before and after
// the model lists.
#[test]
fn a_cut_listing_constrains_nothing() {
    let rows: Vec<Value> = (0..60)
        .map(|i| {
            let mut r = row(&format!("a/b.c{i:02}"), "read");
            r["description"] = json!("d".repeat(300));
            r
        })
        .collect();
    let host = Host::new(json!(rows));
    // Within the default bound the same listing fits: every name.
    let model = ScriptedModel::start(vec![answer("ok")]);
    let out = run(&host, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        command_enum(&model.requests()[0], "run_command").map(|n| n.len()),
        Some(60)
    );
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        answer("listed"),
    ]);
    let out = run(&host, &model, &["--tool-output-bound", "2048"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    let listed = &tool_messages(&requests[1])[0];
    assert!(listed["omitted"].as_u64().unwrap() > 0, "cut: {listed}");
    for request in &requests {
        for tool in ["run_command", "run_read_command"] {
            assert_eq!(command_enum(request, tool), None, "{tool}");
            let schema = parameters(request, tool);
            assert!(schema.get("anyOf").is_none(), "{tool}: {schema}");
            assert_eq!(
                schema["properties"]["command"],
                json!({"type": "string", "description": "A command name from list_commands."}),
            );
        }
    }
}

// "where the server accepts it, `args` follows the named command's input
// schema (e.g. an `anyOf` of one `{command: const, args: schema}` per
// command)". The schema is the host's without its `x-*` keywords, an input
// the host fills (`x-source`) is not required of the model, and a batch's
// calls take the same alternatives.
#[test]
fn where_the_listing_is_small_args_follow_each_commands_schema() {
    let mut log = row("a/b.log", "write");
    log["inputSchema"] = json!({
        "type": "object",
        "properties": {
            "miles": {"type": "number", "x-unit": "mile"},
            "person": {"type": "string"},
            "loomId": {"type": "string", "x-source": "job"}
        },
        "required": ["miles", "person", "loomId"],
        "additionalProperties": false
    });
    let mut open = row("a/b.any", "write");
    open.as_object_mut().unwrap().remove("inputSchema");
    let host = Host::new(json!([log, row("a/b.find", "read"), open]));
    let model = ScriptedModel::start(vec![answer("ok")]);
    let out = run(&host, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = &model.requests()[0];
    let log_args = json!({
        "type": "object",
        "properties": {
            "miles": {"type": "number"},
            "person": {"type": "string"},
            "loomId": {"type": "string"}
        },
        "required": ["miles", "person"],
        "additionalProperties": false
    });
    let find_args =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let branch = |name: &str, args: &Value| {
        json!({
            "type": "object",
            "properties": {
                "command": {"const": name},
                "args": args,
                "loomId": {"type": "string"},
                "expectedVersion": {"type": "integer", "minimum": 0}
            },
            "required": ["command", "args"],
            "additionalProperties": false
        })
    };
    let alternatives = |branches: Vec<Value>| {
        let mut all = branches.clone();
        all.push(json!({
            "type": "object",
            "properties": {"calls": {
                "type": "array",
                "minItems": 1,
                "maxItems": 16,
                "items": {"anyOf": branches},
                "description": "A batch of independent calls, instead of `command`."
            }},
            "required": ["calls"],
            "additionalProperties": false
        }));
        json!(all)
    };
    let run_command = parameters(request, "run_command");
    assert_eq!(
        run_command["anyOf"],
        alternatives(vec![
            branch("a/b.log", &log_args),
            branch("a/b.find", &find_args),
            branch("a/b.any", &json!({"type": "object"})),
        ]),
        "{run_command}"
    );
    assert_eq!(
        run_command["properties"]["command"]["enum"],
        json!(["a/b.log", "a/b.find", "a/b.any"])
    );
    let run_read_command = parameters(request, "run_read_command");
    assert_eq!(
        run_read_command["anyOf"],
        alternatives(vec![branch("a/b.find", &find_args)])
    );

    // Schemas too large for the tool bound keep the enum, without anyOf.
    let big: Vec<Value> = (0..12)
        .map(|i| {
            let mut r = row(&format!("a/b.big{i:02}"), "write");
            let properties: serde_json::Map<String, Value> = (0..40)
                .map(|p| {
                    (
                        format!("field_{p:02}"),
                        json!({"type": "string", "description": "a field of some length"}),
                    )
                })
                .collect();
            r["inputSchema"] = json!({"type": "object", "properties": properties});
            r
        })
        .collect();
    host.set_listing(json!(big));
    let model = ScriptedModel::start(vec![answer("ok")]);
    let out = run(&host, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run_command = parameters(&model.requests()[0], "run_command");
    assert!(run_command.get("anyOf").is_none(), "too large for anyOf");
    assert_eq!(
        command_enum(&model.requests()[0], "run_command")
            .unwrap()
            .len(),
        12
    );
}
