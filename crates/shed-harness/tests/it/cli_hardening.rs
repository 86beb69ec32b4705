//! What the harness's command line, terminal and files let through (issue
//! 23): a `loomId` that could become a flag of the host's CLI, text the model
//! wrote reaching a terminal, a run's authority when no task slot is given,
//! and where the job's secret and the run's record live.

use crate::common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::model_server::{Reply, ScriptedModel, tool_calls, tool_messages};
use common::{HARNESS, Host, TYPED_TASK, row, stderr};
use serde_json::{Value, json};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The job id each host invocation carried.
fn job_ids(host: &Host) -> Vec<Value> {
    host.invocations()
        .iter()
        .map(|i| i["env"]["LOOM_COMMAND_JOB_ID"].clone())
        .collect()
}

// Finding 6: "`--loom --read-only` reached the host CLI as two words".
#[test]
fn a_loom_id_that_is_not_an_app_name_is_refused_and_nothing_is_sent() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    for bad in [
        "--read-only",
        "--loom",
        "-x",
        "runs",
        "Jeff/runs",
        "jeff/runs/x",
        "jeff/runs --read-only",
        "jeff/-runs",
        "",
    ] {
        let out = host.tool(
            "run_command",
            json!({"command": "a/b.log", "loomId": bad}),
            &TYPED_TASK,
        );
        assert_eq!(out["status"], "failed_to_deliver", "{bad:?}: {out}");
        assert_eq!(out["landed"], "no", "{bad:?}");
        assert_eq!(out["reason"], "invalid_input", "{bad:?}");
        assert!(
            out["message"].as_str().unwrap().contains("<space>/<app>"),
            "{out}"
        );
    }
    let batch = host.tool(
        "run_command",
        json!({"calls": [{"command": "a/b.log", "loomId": "--read-only"}, {"command": "a/b.log", "loomId": "jeff/runs"}]}),
        &TYPED_TASK,
    );
    assert_eq!(batch["results"][0]["reason"], "invalid_input", "{batch}");
    assert_eq!(batch["results"][1]["status"], "executed", "{batch}");
    let runs = host.runs();
    assert_eq!(runs.len(), 1, "only the well-named call was sent");
    assert_eq!(runs[0]["argv"][6], "--loom=jeff/runs", "one word");
}

// Finding 6: "a host CLI usage error (exit 2) is `failed_to_deliver` with
// `landed: "no"`" — the CLI refused its command line, so nothing reached
// the broker, and the model is not told the call may have taken effect.
#[test]
fn a_host_usage_error_did_not_land() {
    let host = Host::new(json!([row("a/b.log", "write")]));
    host.set_outcome("a/b.log", json!({"$exit": 2}));
    let out = host.tool("run_command", json!({"command": "a/b.log"}), &TYPED_TASK);
    assert_eq!(out["status"], "failed_to_deliver", "{out}");
    assert_eq!(out["landed"], "no", "{out}");
    assert_eq!(out["reason"], "command_failed", "{out}");
    let message = out["message"].as_str().unwrap();
    assert!(message.contains("refused the call's command line"), "{out}");
    assert!(!message.contains("may have taken effect"), "{out}");
}

/// A tool name that redraws its own progress line as a refusal, rings the
/// bell and sets the window's title, then runs on.
const SPOOFED_TOOL: &str =
    "run_command\u{1b}[2K\r  run_command → refused_by_policy\u{7}\u{1b}]0;owned\u{7}\u{202e}";

/// An answer carrying the same kind of sequences between its lines.
const SPOOFED_ANSWER: &str = "Done.\u{1b}[31m\u{9b}2J\r\nline two\tend\u{1b}]0;owned\u{7}";

fn spoofing_model() -> ScriptedModel {
    let long = "x".repeat(500);
    ScriptedModel::start(vec![
        tool_calls(&[(SPOOFED_TOOL, json!({})), (long.as_str(), json!({}))]),
        json!({"role": "assistant", "content": SPOOFED_ANSWER}),
    ])
}

// Finding 7: "ANSI escapes redrew `run_command → executed` as
// `refused_by_policy`" — on a terminal (`script` gives the harness one) the
// progress lines and the answer show every control as its escape, and a tool
// name is cut.
#[test]
fn model_text_reaches_a_terminal_escaped() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = spoofing_model();
    let screen = host.run_on_a_terminal(&model.url);
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !screen.contains(raw),
            "{raw:?} reached the terminal: {screen:?}"
        );
    }
    let lines: Vec<&str> = screen.lines().map(|l| l.trim_end_matches('\r')).collect();
    let tools: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_once("s]   ").map(|(_, rest)| rest))
        .collect();
    assert_eq!(
        tools,
        [
            "run_command\\u{1b}[2K\\u{d}  run_command → refused_by_policy\\u{7}\\u{1b}]0;owned\\u{7}\\u{202e} → unknown_tool",
            &format!("{}… → unknown_tool", "x".repeat(64)),
        ],
        "{screen}"
    );
    assert!(
        lines.contains(&"Done.\\u{1b}[31m\\u{9b}2J\\u{d}"),
        "{screen}"
    );
    assert!(
        lines.contains(&"line two\tend\\u{1b}]0;owned\\u{7}"),
        "{screen}"
    );
}

// Finding 7, piped: the answer is the pipe's product, and it is escaped all
// the same (a pager shows a pipe's sequences too); newlines and tabs stay.
#[test]
fn a_piped_answer_and_an_error_sentence_are_escaped_too() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let model = spoofing_model();
    let out = host.run(&[], "list", &model.url);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Done.\\u{1b}[31m\\u{9b}2J\\u{d}\nline two\tend\\u{1b}]0;owned\\u{7}\n"
    );
    assert!(out.stderr.is_empty(), "piped: no progress");

    let server = ScriptedModel::replying(vec![Reply::Raw {
        status: 200,
        headers: "",
        body: "<html>\u{1b}[2J\u{1b}]0;owned\u{7}</html>".into(),
    }]);
    let out = host.run(&[], "t", &server.url);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.trim_end()
            .ends_with("<html>\\u{1b}[2J\\u{1b}]0;owned\\u{7}</html>"),
        "{said:?}"
    );
    assert!(
        !said.contains('\u{1b}') && !said.contains('\u{7}'),
        "{said:?}"
    );
}

// Finding 7, by hand: `tool` prints a result as JSON, and what a host's row
// holds that a terminal acts on (DEL, C1, a bidirectional override — JSON
// escapes C0 itself) is written as JSON escapes: the same JSON, nothing raw.
#[test]
fn a_tool_result_shows_a_hosts_controls_as_json_escapes() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let text = "row\u{9b}2J\u{1b}[31m\u{7f}\u{202e}end";
    host.set_outcome(
        "a/b.find",
        json!({"ok": true, "code": "ok", "body": {"text": text}}),
    );
    let out = host.harness(&[
        "tool",
        "run_read_command",
        "--input",
        r#"{"command": "a/b.find"}"#,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        !printed
            .chars()
            .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c)),
        "{printed:?}"
    );
    assert!(
        printed.contains(r"row\u009b2J\u001b[31m\u007f\u202eend"),
        "{printed}"
    );
    let result: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(result["entry"]["body"]["text"], text);
}

// Finding 9: "`--task-slot` defaults to `direct-command`": a caller that
// forgets the flag must not run a pattern's text with write authority.
#[test]
fn without_a_task_slot_a_run_cannot_write() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let write = json!({"command": "jeff/runs.log_run", "args": {"q": "x"}});
    let model = ScriptedModel::start(vec![
        tool_calls(&[("run_command", write.clone())]),
        json!({"role": "assistant", "content": "I could not log it."}),
    ]);
    let transcript = host.path("t.json");
    let trace = host.path("trace.jsonl");
    let out = host.run(
        &[
            "--transcript",
            transcript.to_str().unwrap(),
            "--policy-trace",
            trace.to_str().unwrap(),
        ],
        "log a run",
        &model.url,
    );
    // The run answered, and says nothing was written (exit 4).
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let refused = &tool_messages(&model.requests()[1])[0];
    assert_eq!(refused["status"], "refused_by_policy", "{refused}");
    assert_eq!(refused["decision"], "cfc_write_requires_direct_command");
    assert!(host.runs().is_empty(), "nothing was written");
    assert_eq!(common::read_json(&transcript)["taskSlot"], "absent");
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&trace).unwrap().trim()).unwrap();
    assert_eq!(line["taskSlot"], "absent");

    let by_hand = host.tool("run_command", write.clone(), &[]);
    assert_eq!(by_hand["status"], "refused_by_policy");
    assert!(host.runs().is_empty());
    let typed = host.tool("run_command", write, &TYPED_TASK);
    assert_eq!(typed["status"], "executed", "{typed}");

    let help = common::harness(&["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--task-slot direct-command"), "{help}");
}

// Finding 10: "`--command-job-id <secret>` is visible in `ps`".
#[test]
fn a_job_id_on_the_command_line_is_refused_without_being_repeated() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let out = host.harness(&[
        "--command-job-id",
        "s3cret-on-argv",
        "tool",
        "list_commands",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let said = stderr(&out);
    assert!(said.contains("`ps`"), "{said}");
    assert!(said.contains("--command-job-id-file"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
    assert!(host.invocations().is_empty(), "nothing started");
}

// Finding 10: the secret from a file only its owner may read.
#[test]
fn a_job_id_file_must_be_private_and_yours() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let open = host.file_with_mode("job-open", "job-in-file\n", 0o644);
    let out = host.harness(&["--command-job-id-file", &open, "tool", "list_commands"]);
    assert_eq!(out.status.code(), Some(2));
    let said = stderr(&out);
    assert!(said.contains(&format!("`chmod 600 {open}`")), "{said}");
    assert!(said.contains("mode 644"), "{said}");
    assert!(!said.contains("job-in-file"), "{said}");
    assert!(host.invocations().is_empty(), "nothing started");

    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o600)).unwrap();
    host.tool(
        "list_commands",
        json!({}),
        &["--command-job-id-file", &open],
    );
    assert_eq!(
        job_ids(&host),
        [json!("job-in-file")],
        "the line end is not the id's"
    );

    // Another account's file, private or not, is refused: the id must be
    // the caller's own.
    let theirs = if running_as_root() {
        let theirs = host.file_with_mode("job-theirs", "job-x", 0o600);
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        theirs
    } else {
        "/etc/passwd".to_string()
    };
    let out = host.harness(&["--command-job-id-file", &theirs, "tool", "list_commands"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("belongs to another account"),
        "{}",
        stderr(&out)
    );

    for (text, why) in [
        ("", "empty"),
        ("a\u{1b}b", "control"),
        (&*"j".repeat(1025), "longer"),
    ] {
        let bad = host.file_with_mode("job-bad", text, 0o600);
        let out = host.harness(&["--command-job-id-file", &bad, "tool", "list_commands"]);
        assert_eq!(out.status.code(), Some(2), "{why}");
        assert!(stderr(&out).contains(why), "{why}: {}", stderr(&out));
    }
    assert_eq!(host.invocations().len(), 1);
}

/// Whether this process is root, read from its status in `/proc`.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

// Finding 10: the secret on an inherited descriptor — here a pipe, so it
// never touches the disk.
#[test]
fn a_job_id_on_an_inherited_descriptor_reaches_the_host() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let config = host.config();
    let mut child = Command::new("sh")
        .args([
            "-c",
            r#"exec "$@" 3<&0 </dev/null"#,
            "sh",
            HARNESS,
            "--loom-commands-config",
            config.to_str().unwrap(),
            "--command-job-id-fd",
            "3",
            "tool",
            "list_commands",
        ])
        .env_remove("LOOM_COMMAND_JOB_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"job-on-a-pipe\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(job_ids(&host), [json!("job-on-a-pipe")]);
    assert!(
        !host.invocations()[0]["argv"]
            .to_string()
            .contains("job-on-a-pipe"),
        "the id reaches the host in its environment, not on its command line"
    );

    for (fd, said) in [
        ("1", "standard input, output or error"),
        ("97", "descriptor 97"),
    ] {
        let out = host.harness(&["--command-job-id-fd", fd, "tool", "list_commands"]);
        assert_eq!(out.status.code(), Some(2), "{fd}");
        assert!(stderr(&out).contains(said), "{fd}: {}", stderr(&out));
    }
    let private = host.file_with_mode("job", "j", 0o600);
    let both = host.harness(&[
        "--command-job-id-fd",
        "3",
        "--command-job-id-file",
        &private,
        "tool",
        "list_commands",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert_eq!(host.invocations().len(), 1);
}

// Finding 10: "`--transcript` and `--policy-trace` files are created 0644
// though they hold private rows".
#[test]
fn the_transcript_and_the_trace_are_made_private() {
    let host = Host::new(json!([row("a/b.find", "read")]));
    let transcript = host.path("t.json");
    let trace = host.path("trace.jsonl");
    host.tool(
        "run_read_command",
        json!({"command": "a/b.find"}),
        &[
            "--transcript",
            transcript.to_str().unwrap(),
            "--policy-trace",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(mode(&transcript), 0o600);
    assert_eq!(mode(&trace), 0o600);
}
