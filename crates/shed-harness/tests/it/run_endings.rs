//! How `shed-harness run` ends when nothing could run, black-box against the
//! fake host and a scripted model server: a job the host says is ended,
//! expired or unknown stops the run at that first answer, with the host's
//! sentence on stderr and exit 3; a run whose write was refused — by the
//! policy (no `--task-slot`) or by the host — and that wrote nothing says
//! so on its last line and exits 4; the codes are listed in `--help`.

use crate::common;

use common::model_server::{ScriptedModel, tool_calls};
use common::{Host, TYPED_TASK, row, stderr};
use serde_json::{Value, json};

const ENDED: &str = "job job-1 was ended at 2026-09-01T10:00:00Z — its agent runs nothing more; `shed job create` makes a new job";
const EXPIRED: &str = "job job-1 expired at 2026-09-01T10:00:00Z — `shed job create --ttl <duration>` makes a new job that runs longer";
const UNKNOWN: &str = "no job — the request's LOOM_COMMAND_JOB_ID is not the secret of a job this host made (a job's name is not its secret); `shed job create --person <handle>` makes one and prints its secret";

fn answer(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

fn refused(message: &str) -> Value {
    json!({"ok": false, "id": "op-1", "code": "forbidden", "mayHaveLanded": false,
           "completed": [], "body": null, "message": message})
}

/// A model that logs a run, then says it is done.
fn logs_a_run() -> ScriptedModel {
    ScriptedModel::start(vec![
        tool_calls(&[(
            "run_command",
            json!({"command": "jeff/runs.log_run", "args": {"q": "5"}}),
        )]),
        answer("done"),
    ])
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_job_the_listing_says_is_over_stops_the_run_before_the_model_is_asked() {
    for said in [ENDED, EXPIRED, UNKNOWN] {
        let host = Host::new(json!([]));
        host.set_raw_listing(&refused(said).to_string());
        let model = logs_a_run();
        let out = host.run(&TYPED_TASK, "log my run", &model.url);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{}{}",
            stdout(&out),
            stderr(&out)
        );
        assert_eq!(stderr(&out), format!("error: {said}\n"));
        assert_eq!(stdout(&out), "", "nothing that looks like an answer");
        assert!(model.requests().is_empty(), "no turn is asked for");
    }
}

#[test]
fn a_job_a_run_says_is_over_stops_the_run_at_that_answer() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    host.set_outcome("jeff/runs.log_run", refused(EXPIRED));
    let model = logs_a_run();
    let out = host.run(&TYPED_TASK, "log my run", &model.url);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stderr(&out), format!("error: {EXPIRED}\n"));
    assert_eq!(stdout(&out), "");
    assert_eq!(model.requests().len(), 1, "no turn after the answer");
    assert_eq!(host.runs().len(), 1);

    let tool = host.harness(&[
        "--task-slot",
        "direct-command",
        "tool",
        "run_command",
        "--input",
        r#"{"command": "jeff/runs.log_run", "args": {"q": "5"}}"#,
    ]);
    assert_eq!(tool.status.code(), Some(3), "{}", stderr(&tool));
    assert_eq!(stderr(&tool), format!("error: {EXPIRED}\n"));
}

#[test]
fn a_run_whose_write_the_policy_refused_says_nothing_was_written() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let model = logs_a_run();
    // No --task-slot: under the default policy the run reads but never writes.
    let out = host.run(&[], "log my run", &model.url);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let printed = stdout(&out);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.first(), Some(&"done"));
    let last = lines.last().copied().unwrap_or_default();
    assert!(
        last.starts_with("nothing was written: a write was refused — run_command was not run: ")
            && last.contains("direct-command"),
        "{printed}"
    );
    assert!(host.runs().is_empty());
}

#[test]
fn a_run_whose_write_the_host_refused_says_nothing_was_written_and_one_that_wrote_does_not() {
    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let refusal = "you can read this app but not change it — its owner can make you an editor";
    host.set_outcome(
        "jeff/runs.log_run",
        json!({"ok": false, "id": "op-1", "code": "refused", "mayHaveLanded": false,
               "completed": [], "body": null, "message": refusal}),
    );
    let out = host.run(&TYPED_TASK, "log my run", &logs_a_run().url);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        stdout(&out),
        format!("done\nnothing was written: a write was refused — {refusal}\n")
    );

    let host = Host::new(json!([row("jeff/runs.log_run", "write")]));
    let out = host.run(&TYPED_TASK, "log my run", &logs_a_run().url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
}

#[test]
fn help_lists_the_exit_codes() {
    let help = stdout(&common::harness(&["--help"]));
    for code in [
        "0  the model answered",
        "1  the run failed",
        "2  the arguments",
        "3  the host said the job is ended, expired or unknown",
        "4  `run`: the model answered, but a write was refused",
    ] {
        assert!(help.contains(code), "--help says no {code:?}:\n{help}");
    }
}
