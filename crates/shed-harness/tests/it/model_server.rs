//! `shed-harness run` against what model servers really answer: the
//! recorded answers of llama-cpp-python's server (`tests/recorded/`), tool
//! calls that are not JSON, name no tool or do not fit one, `--tool-choice`,
//! `--max-turns`, server errors with their retries, and progress only on a
//! terminal.

use crate::common;

use common::model_server::{Reply, ScriptedModel, tool_calls, tool_messages};
use common::{Host, TYPED_TASK, row, stderr};
use serde_json::{Value, json};

/// `shed-harness run` with a task the person typed against `model`, then
/// `extra` flags.
fn run(host: &Host, model: &ScriptedModel, extra: &[&str]) -> std::process::Output {
    let mut args = TYPED_TASK.to_vec();
    args.extend([
        "run",
        "--task",
        "log my run",
        "--model",
        "smollm2",
        "--base-url",
        &model.url,
    ]);
    args.extend_from_slice(extra);
    host.harness(&args)
}

fn answer(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

// "a tool call whose arguments are not JSON, name an unknown tool, or do not
// match the tool's schema keeps being answered to the model with a sentence —
// never a crash, never a host call". The first is the recorded call of a
// real small model: raw newlines inside a JSON string.
#[test]
fn calls_that_are_not_json_name_no_tool_or_misfit_one_are_answered_and_reach_no_host() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::replying(vec![
        Reply::recorded(200, "malformed-arguments.json"),
        Reply::Message(tool_calls(&[
            ("delete_everything", json!({})),
            ("run_command", json!({"cmd": "jeff/runs.log_run"})),
            ("run_command", json!({"command": 7})),
            ("list_commands", json!({"detail": "all of them"})),
        ])),
        Reply::Message(answer("I could not do it.")),
    ]);
    let out = run(&host, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "I could not do it."
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);

    let not_json = &tool_messages(&requests[1])[0];
    assert_eq!(not_json["status"], "failed_to_deliver");
    assert_eq!(not_json["landed"], "no");
    assert_eq!(not_json["reason"], "invalid_input");
    assert!(
        not_json["message"]
            .as_str()
            .unwrap()
            .starts_with("the tool call's arguments are not JSON"),
        "{not_json}"
    );
    // The answer goes back under the recorded call's own id.
    let tool_turn = &requests[1]["messages"][3];
    assert_eq!(
        tool_turn["tool_call_id"],
        requests[1]["messages"][2]["tool_calls"][0]["id"]
    );

    let results = tool_messages(&requests[2]);
    assert_eq!(results.len(), 5, "every call is answered");
    let unknown = &results[1];
    assert_eq!(unknown["status"], "unknown_tool");
    assert_eq!(
        unknown["message"],
        "this run has no tool named \"delete_everything\"; it offers list_commands, run_command, run_read_command"
    );
    for misfit in &results[2..] {
        assert_eq!(misfit["status"], "failed_to_deliver", "{misfit}");
        assert_eq!(misfit["reason"], "invalid_input", "{misfit}");
        assert_eq!(misfit["landed"], "no", "{misfit}");
    }
    assert!(
        results[2]["message"]
            .as_str()
            .unwrap()
            .contains("\"cmd\" is none of them"),
        "{}",
        results[2]
    );
    assert_eq!(
        results[4]["message"],
        "detail must be a list of command names"
    );
    // The one host process is the listing read before the first turn, which
    // the tools' schemas show (`tool_schema`).
    assert_eq!(host.lists(), 1);
    assert!(
        host.runs().is_empty(),
        "no call reached the host: {:?}",
        host.runs()
    );
}

// llama-cpp-python sends `content: null` beside its tool calls and refuses
// that null when it comes back (recorded: `validation-500.json`); the
// harness sends the turn back with "" and without the legacy
// `function_call` the server added.
#[test]
fn a_recorded_tool_call_turn_goes_back_as_the_real_server_accepts_it() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::replying(vec![
        Reply::recorded(200, "forced-tool-call.json"),
        Reply::Message(answer("done")),
    ]);
    let out = run(&host, &model, &["--tool-choice", "run_command"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = &model.requests()[1]["messages"][2];
    assert_eq!(sent["role"], "assistant");
    assert_eq!(sent["content"], "");
    assert!(sent.get("function_call").is_none(), "{sent}");
    assert_eq!(sent["tool_calls"][0]["function"]["name"], "run_command");
    // The model's call named a command nobody lists: answered, not run.
    let result = &tool_messages(&model.requests()[1])[0];
    assert_eq!(result["status"], "unknown_command", "{result}");
    assert!(host.runs().is_empty());
}

// "`--tool-choice auto|required|none|<tool name>` passes OpenAI's
// `tool_choice` through (auto by default)"; a forced choice holds for the
// first turn, so the run can still end in an answer.
#[test]
fn the_tool_choice_goes_to_the_first_turn_and_auto_after_it() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        answer("listed"),
    ]);
    let out = run(&host, &model, &["--tool-choice", "list_commands"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    assert_eq!(
        requests[0]["tool_choice"],
        json!({"type": "function", "function": {"name": "list_commands"}})
    );
    assert_eq!(requests[1]["tool_choice"], "auto");
    let listed = &tool_messages(&requests[1])[0];
    assert_eq!(listed["entries"][0]["name"], "jeff/runs.log_run");

    for (choice, sent) in [
        ("required", json!("required")),
        ("none", json!("none")),
        ("auto", json!("auto")),
    ] {
        let model = ScriptedModel::start(vec![answer("ok")]);
        let out = run(&host, &model, &["--tool-choice", choice]);
        assert!(out.status.success(), "{choice}: {}", stderr(&out));
        assert_eq!(model.requests()[0]["tool_choice"], sent, "{choice}");
    }
    let model = ScriptedModel::start(vec![answer("ok")]);
    assert!(run(&host, &model, &[]).status.success());
    assert_eq!(
        model.requests()[0]["tool_choice"],
        "auto",
        "auto by default"
    );
}

// `--temperature` goes with every request; without it none is sent, and the
// server's own default holds (llama-cpp-python's is 0.8, which makes a small
// model's arguments a lottery). Outside 0 to 2 it is refused before any
// request.
#[test]
fn a_temperature_given_goes_with_every_request() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        answer("listed"),
    ]);
    let out = run(&host, &model, &["--temperature", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request["temperature"], json!(0.0), "{request}");
    }
    let model = ScriptedModel::start(vec![answer("ok")]);
    assert!(run(&host, &model, &[]).status.success());
    assert!(model.requests()[0].get("temperature").is_none());
    let model = ScriptedModel::start(vec![answer("never asked")]);
    let out = run(&host, &model, &["--temperature", "2.5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--temperature must be from 0 to 2"),
        "{}",
        stderr(&out)
    );
    assert!(model.requests().is_empty());
}

#[test]
fn a_tool_choice_the_run_cannot_offer_is_refused_before_any_request() {
    let host = Host::new(json!([]));
    let model = ScriptedModel::start(vec![answer("never asked")]);
    for (extra, said) in [
        (
            vec![
                "--allow-tool",
                "list_commands",
                "run",
                "--tool-choice",
                "run_command",
            ],
            "error: --tool-choice run_command names a tool this run does not offer (list_commands) — offer it with --allow-tool, or choose another\n",
        ),
        (
            vec!["run", "--tool-choice", "everything"],
            "error: --tool-choice everything is neither auto, required, none nor a tool — the tools are list_commands, run_command and run_read_command\n",
        ),
    ] {
        let mut args = extra.clone();
        args.extend(["--task", "t", "--model", "m", "--base-url", &model.url]);
        let out = host.harness(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert_eq!(stderr(&out), said);
    }
    // Without a host configuration no tool is offered, and none is asked for.
    let out = common::harness(&[
        "run",
        "--task",
        "t",
        "--model",
        "m",
        "--base-url",
        &model.url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let request = &model.requests()[0];
    assert!(request.get("tools").is_none() && request.get("tool_choice").is_none());
}

// "`--max-turns` ends a run that goes nowhere with a sentence and a non-zero
// exit (check that it does)"
#[test]
fn max_turns_ends_a_run_that_goes_nowhere_with_a_sentence_and_exit_1() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::start(vec![
        tool_calls(&[("list_commands", json!({}))]),
        tool_calls(&[("list_commands", json!({}))]),
        tool_calls(&[("list_commands", json!({}))]),
    ]);
    let transcript = host.path("t.json");
    let out = run(
        &host,
        &model,
        &[
            "--max-turns",
            "2",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "error: the model made tool calls for 2 turns without answering — raise --max-turns or simplify the task\n"
    );
    assert_eq!(model.requests().len(), 2, "no third turn");
    assert_eq!(
        host.lists(),
        3,
        "the listing the first turn's tools show, then each turn's call answered"
    );
    let record = common::read_json(&transcript);
    assert_eq!(record["messages"].as_array().unwrap().len(), 6);

    let out = run(&host, &model, &["--max-turns", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

// "a server error (HTTP 4xx/5xx …) ends the run with one sentence naming the
// server and what it said; retries with backoff for 429 and 5xx, bounded"
#[test]
fn a_failing_server_is_tried_four_times_then_named_in_one_sentence() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::replying(
        (0..5)
            .map(|_| Reply::Raw {
                status: 500,
                headers: "Retry-After: 0\r\n",
                body: std::fs::read_to_string(format!(
                    "{}/tests/recorded/llama-cpp-python/required-500.json",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .unwrap(),
            })
            .collect(),
    );
    let out = run(&host, &model, &["--tool-choice", "required"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: the model server at {}/chat/completions answered HTTP 500 (4 tries): internal_server_error, with no message — the server failed at this request; its log says more\n",
            model.url
        )
    );
    assert_eq!(model.requests().len(), 4, "bounded: four tries");
}

#[test]
fn a_429_or_a_503_is_tried_again_and_the_run_goes_on() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::replying(vec![
        Reply::Raw {
            status: 429,
            headers: "Retry-After: 0\r\n",
            body: r#"{"error": {"message": "slow down", "type": "rate_limit"}}"#.into(),
        },
        // No Retry-After: the first backoff, one second.
        Reply::Raw {
            status: 503,
            headers: "",
            body: "loading".into(),
        },
        Reply::Message(answer("fine")),
    ]);
    let started = std::time::Instant::now();
    let out = run(&host, &model, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
    assert_eq!(model.requests().len(), 3);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "it waited"
    );
    assert!(out.stderr.is_empty(), "piped: no progress, no retry notes");
}

#[test]
fn a_4xx_is_not_tried_again_and_says_what_to_check() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::replying(vec![
        Reply::recorded(404, "not-found-404.json"),
        Reply::Message(answer("never")),
    ]);
    let out = run(&host, &model, &[]);
    assert_eq!(out.status.code(), Some(1));
    let url = format!("{}/chat/completions", model.url);
    assert_eq!(
        stderr(&out),
        format!(
            "error: the model server at {url} answered HTTP 404: Not Found — check --base-url: requests go to {url}, and most servers want the base URL to end in /v1\n"
        )
    );
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn a_body_that_is_not_a_completion_a_silent_server_and_no_server_each_end_the_run() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = ScriptedModel::replying(vec![Reply::Raw {
        status: 200,
        headers: "",
        body: "<html>a proxy's page</html>".into(),
    }]);
    let out = run(&host, &model, &[]);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.starts_with(&format!(
            "error: the model server at {}/chat/completions answered something that is not a chat completion (it is not JSON",
            model.url
        )) && said.trim_end().ends_with("): <html>a proxy's page</html>"),
        "{said}"
    );

    let silent = ScriptedModel::replying(vec![Reply::Silence]);
    let out = run(&host, &silent, &["--request-timeout", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: the model server at {}/chat/completions did not answer within 1 s — raise --request-timeout, or give it a smaller task\n",
            silent.url
        )
    );
    assert_eq!(silent.requests().len(), 1, "a timeout is not tried again");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let out = host.harness(&["run", "--task", "t", "--model", "m", "--base-url", &url]);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.starts_with(&format!(
            "error: cannot reach the model server at {url}/chat/completions: "
        )) && said
            .trim_end()
            .ends_with("— check --base-url and that the server is up"),
        "{said}"
    );
}

// "progress on a terminal (turn, tool called, elapsed), nothing extra when
// piped": `script` gives the harness a terminal.
#[test]
fn progress_shows_on_a_terminal_and_not_when_piped() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let script = || {
        ScriptedModel::start(vec![
            tool_calls(&[("list_commands", json!({}))]),
            answer("all listed"),
        ])
    };
    let piped = script();
    let out = run(&host, &piped, &[]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "all listed\n");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    let model = script();
    let screen = host.run_on_a_terminal(&model.url);
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let progress: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with('['))
        .map(|l| l.split_once("s] ").map_or(*l, |(_, rest)| rest))
        .collect();
    assert_eq!(
        progress,
        [
            "turn 1 of 32: asking the model",
            "  list_commands → ok",
            "turn 2 of 32: asking the model",
            "the model answered"
        ],
        "{screen}"
    );
    assert!(lines.contains(&"all listed"), "{screen}");
}
