//! Starting an agent as a newcomer does (issue #24, point 12): `shed command`
//! outside a job says what a job is, a refusal exits non-zero with its
//! outcome still on stdout, a job whose scope admits nothing is refused at
//! `job create`, `job create --host-config` writes the harness's host
//! configuration, and the README's "Run an agent with shed-harness" runs as
//! written against a stub OpenAI-compatible server.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::broker_harness::harness_binary;
use crate::broker_support::{REFUSED_STATUS, SHED, Served, answered, shed};
use crate::data_place::DataIn;
use crate::harness_attacks::model_server::{ScriptedModel, tool_calls, tool_messages};
use crate::operating_support::{self, Shed};

#[test]
fn outside_a_job_the_cli_says_what_a_job_is_and_how_to_make_one() {
    let out = Command::new(SHED)
        .args(["command", "list", "--json"])
        .env_clear()
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("runs inside a job"), "{said}");
    assert!(said.contains("shed job create --person"), "{said}");
    assert!(said.contains("LOOM_COMMAND_JOB_ID"), "{said}");
    let help = Command::new(SHED)
        .args(["command", "list", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--data"),
        "clap lists the global flags: {help}"
    );
    assert!(
        help.contains("(--data, --database, --public-url,\n--log-format) are taken and ignored"),
        "the help says the flags it lists are not read: {help}"
    );
}

#[test]
fn a_refusal_exits_non_zero_with_its_outcome_on_stdout() {
    let served = Served::start();
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let refused = served.run_output(&job, "demo/runs.nope", json!({}), &[]);
    assert_eq!(refused.status.code(), Some(REFUSED_STATUS));
    let outcome: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(outcome["ok"], false, "{outcome}");
    assert!(
        outcome["message"].as_str().unwrap().contains("nope"),
        "{outcome}"
    );
    let ran = served.run_output(&job, "demo/runs.leaderboard", json!({}), &[]);
    assert_eq!(ran.status.code(), Some(0));
    assert_eq!(answered(&ran)["ok"], true);
}

#[test]
fn a_scope_that_admits_nothing_is_refused_at_create_with_the_apps_there_are() {
    let served = Served::start();
    for scope in [
        ["--allow", "runs"],
        ["--allow", "demo/nope.*"],
        ["--read-only", "demo/runs.log_run"],
    ] {
        let mut args = vec!["job", "create", "--person", "ada"];
        args.extend(scope);
        let (made, secret, said) = operating_support::shed(&served.data(), &args);
        assert!(!made, "{scope:?} made a job: {secret}");
        assert!(secret.is_empty(), "{secret}");
        assert!(
            said.contains(&format!("'{}' admits no", scope[1])),
            "{said}"
        );
        assert!(
            said.contains("the apps @ada reaches are") && said.contains("'demo/runs.*'"),
            "names the apps ada reaches, the handle as a handle (\"you reaches\" read badly): {said}"
        );
    }
    // Bob reaches no app: a glob over apps admits nothing of his.
    let (made, _, said) = operating_support::shed(
        &served.data(),
        &["job", "create", "--person", "bob", "--allow", "demo/*"],
    );
    assert!(!made);
    assert!(said.contains("@bob reaches no app yet"), "{said}");
    let listed: Value =
        serde_json::from_str(&shed(&served.data(), &["job", "list", "--json"])).unwrap();
    assert_eq!(listed, json!([]), "nothing was made");
}

#[test]
fn job_create_writes_the_host_configuration_the_harness_reads() {
    let served = Served::start();
    let config = served.dir.path().join("host.json");
    let mut args = vec!["job", "create", "--person", "ada", "--allow", "demo/runs.*"];
    args.extend(["--host-config", config.to_str().unwrap()]);
    args.extend(["--queue", served.queue.to_str().unwrap()]);
    let secret = shed(&served.data(), &args).trim().to_string();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(written["jobIdEnvVar"], "LOOM_COMMAND_JOB_ID");
    assert_eq!(
        written["transport"],
        json!({"kind": "broker", "queuePath": served.queue})
    );
    let job_file = private_file(served.dir.path(), "job-id", &secret);
    let out = Command::new(harness_binary())
        .args(["--loom-commands-config", config.to_str().unwrap()])
        .args(["--command-job-id-file", job_file.to_str().unwrap()])
        .args(["tool", "list_commands", "--input", "{}"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(listing.contains("demo/runs.log_run"), "{listing}");
}

/// `text` in a new file of `dir` only its owner may read.
fn private_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

/// The shell lines of the README's "Run an agent with shed-harness": its
/// first indented block.
fn readme_agent_lines() -> String {
    let readme = include_str!("../../../../README.md");
    let section = readme
        .split_once("## Run an agent with shed-harness\n")
        .expect("the README has the section")
        .1;
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .skip_while(|line| !line.starts_with("    "))
        .take_while(|line| line.starts_with("    "))
        .map(|line| &line[4..])
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readmes_agent_section_runs_as_written() {
    let lines = readme_agent_lines();
    let readme_server = "http://127.0.0.1:8080/v1";
    assert!(lines.contains(readme_server), "{lines}");
    let logged = json!({"who": "Ada", "miles": 5, "at": "2026-09-01"});
    let model = ScriptedModel::start(vec![
        tool_calls(&[(
            "run_command",
            json!({"command": "demo/runs.log_run", "args": logged}),
        )]),
        json!({"role": "assistant", "content": "done: Ada's 5 miles are logged"}),
    ]);
    let folder = tempfile::tempdir().unwrap();
    let data = folder.path().join("shed-data");
    let _shed = Shed::up(&data, &folder.path().join("shed.log"), &[]);
    let path = format!(
        "{}:{}:{}",
        Path::new(SHED).parent().unwrap().display(),
        harness_binary().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = lines.replace(readme_server, &model.url);
    let out = Command::new("sh")
        .args(["-ec", &script])
        .current_dir(folder.path())
        .data_in(&data)
        .env_remove("SHED_DATA") // the README relies on the folder's shed-data
        .env("PATH", path)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains("done: Ada's 5 miles are logged"),
        "{answer}\n{said}"
    );
    let requests = model.requests();
    let results = tool_messages(&requests[1]);
    assert_eq!(results[0]["status"], "executed", "{results:?}");
    assert_eq!(results[0]["outcome"]["ok"], true, "{results:?}");
    // On the leaderboard, as the README's "by hand" line reads it: Ada's
    // run, written by you through the job.
    let by_hand = Command::new("sh")
        .args(["-ec", "LOOM_PAGE_RPC_QUEUE=shed-data/command-queue.sock LOOM_COMMAND_JOB_ID=$(cat job-id) shed command run demo/runs.leaderboard --json"])
        .current_dir(folder.path())
        .env(
            "PATH",
            format!("{}:{}", Path::new(SHED).parent().unwrap().display(), std::env::var("PATH").unwrap_or_default()),
        )
        .output()
        .unwrap();
    let board = answered(&by_hand).to_string();
    assert!(board.contains("\"who\":\"Ada\""), "{board}");
    assert!(board.contains("agent:job-1"), "{board}");
}

/// Issue 39: with standard output sent to a file or a pipe (as here), the
/// secret is not "the line above" on the screen: the sentence says where it
/// went.
#[test]
fn job_create_says_where_its_secret_went_when_stdout_is_not_a_terminal() {
    let served = Served::start();
    let (made, secret, said) = operating_support::shed(
        &served.data(),
        &["job", "create", "--person", "ada", "--allow", "demo/runs.*"],
    );
    assert!(made, "{said}");
    assert!(!secret.trim().is_empty());
    assert!(
        said.contains("made job-1 for ada — its secret went to standard output")
            && !said.contains("the line above"),
        "{said}"
    );
}
