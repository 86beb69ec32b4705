//! The harness (crates/shed-harness) against the real host: `shed serve`
//! with its broker, a job, and `shed-harness tool …` reaching shed only
//! through `shed command list|run`, as its host configuration says.

use crate::broker_support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use broker_support::{SHED, Served, shed};
use serde_json::{Value, json};

/// The harness binary beside this test's target directory, built when missing.
pub fn harness_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("SHED_HARNESS_BIN") {
        return PathBuf::from(bin);
    }
    let shed = PathBuf::from(SHED);
    let bin = shed.with_file_name("shed-harness");
    if !bin.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "shed-harness"])
            .status()
            .unwrap();
        assert!(status.success(), "could not build shed-harness");
    }
    assert!(bin.exists(), "no shed-harness at {}", bin.display());
    bin
}

/// `shed-harness` set up to reach a served shed's broker for one job.
pub struct Harness {
    bin: PathBuf,
    config: PathBuf,
    /// The job's secret, in a file only its owner may read: the harness
    /// takes it from there, never from its command line.
    job_file: PathBuf,
}

impl Harness {
    /// The harness binary with a host configuration naming `served`'s broker
    /// queue, acting for `job`.
    pub fn for_job(served: &Served, job: String) -> Harness {
        let config = served.dir.path().join("host.json");
        let host = json!({
            "cliPath": SHED,
            "jobIdEnvVar": "LOOM_COMMAND_JOB_ID",
            "transport": { "kind": "broker", "queuePath": served.queue },
        });
        std::fs::write(&config, host.to_string()).unwrap();
        let job_file = served.dir.path().join("job-id");
        std::fs::write(&job_file, job).unwrap();
        std::fs::set_permissions(&job_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        Harness {
            bin: harness_binary(),
            config,
            job_file,
        }
    }

    /// `shed-harness --loom-commands-config … --command-job-id-file …`, to add a
    /// subcommand and flags to.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .args(["--loom-commands-config", self.config.to_str().unwrap()])
            .args(["--command-job-id-file", self.job_file.to_str().unwrap()]);
        command
    }

    /// Runs one tool, the task typed by the person (a run writes only so).
    pub fn tool(&self, name: &str, input: Value, ceiling: Option<&str>) -> Value {
        let mut command = self.command();
        command.args(["--task-slot", "direct-command"]).args([
            "tool",
            name,
            "--input",
            &input.to_string(),
        ]);
        if let Some(ceiling) = ceiling {
            command.args(["--observation-ceiling", ceiling]);
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "shed-harness tool {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

#[test]
fn the_harness_lists_runs_and_reads_through_the_broker() {
    let served = Served::start();
    let (job, name) = served.named_job(&[
        "--person",
        "ada",
        "--allow",
        "demo/runs.*",
        "--read-only",
        "demo/runs.leaderboard",
    ]);
    let harness = Harness::for_job(&served, job);

    let listed = harness.tool("list_commands", json!({}), None);
    assert_eq!(listed["status"], "ok", "{listed}");
    let entries = listed["entries"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "demo/runs.log_run",
            "demo/runs.leaderboard",
            "demo/runs.since",
            "demo/runs.add_jog",
            "demo/runs.find_jog"
        ]
    );
    assert_eq!(
        entries[0]["signature"],
        "demo/runs.log_run(who: string, miles: number, at: string) -> {entities, aliases, version}  [write, app]"
    );
    assert_eq!(
        entries[2]["signature"],
        "demo/runs.since(since: string) -> {rows, next}  [read, app]"
    );
    assert_eq!(entries[1]["readOnlyGranted"], true);
    assert!(entries[2].get("readOnlyGranted").is_none());

    // The loom goes to `shed command run` as one word, `--loom=demo/runs`.
    let one = harness.tool(
        "run_command",
        json!({"command": "demo/runs.log_run", "args": {"who": "Ada", "miles": 5, "at": "2026-09-01"}, "loomId": "demo/runs"}),
        None,
    );
    assert_eq!(one["status"], "executed", "{one}");
    assert_eq!(one["outcome"]["code"], "ok");
    assert_eq!(one["outcome"]["mayHaveLanded"], true);
    let eid = one["entry"]["body"]["aliases"]["$run"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(one["outcome"]["completed"], json!([eid]));

    let batch = harness.tool(
        "run_command",
        json!({"calls": [
            {"command": "demo/runs.log_run", "args": {"who": "Bo", "miles": 2, "at": "2026-09-02"}},
            {"command": "demo/runs.since", "args": {"since": "2026-01-01"}},
            {"command": "graph.query", "args": {"filter": ".jog!"}, "loomId": "demo/runs"},
        ]}),
        None,
    );
    assert_eq!(batch["status"], "batch", "{batch}");
    let results = batch["results"].as_array().unwrap();
    assert_eq!(results[0]["outcome"]["code"], "ok", "{batch}");
    assert_eq!(results[1]["outcome"]["code"], "ok", "{batch}");
    assert_eq!(
        results[2]["status"], "unknown_command",
        "the job's scope hides graph.query: {batch}"
    );

    let read = harness.tool(
        "run_read_command",
        json!({"command": "demo/runs.leaderboard", "args": {}}),
        None,
    );
    assert_eq!(read["status"], "executed", "{read}");
    let rows = read["entry"]["body"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r["created"]["via"] == format!("agent:{name}")),
        "{read}"
    );

    let ungranted = harness.tool(
        "run_read_command",
        json!({"command": "demo/runs.since", "args": {"since": "2026-01-01"}}),
        None,
    );
    assert_eq!(ungranted["status"], "not_granted", "{ungranted}");
    assert_eq!(ungranted["landed"], "no");

    // The label: the run club is private to its space.
    let above = harness.tool(
        "run_read_command",
        json!({"command": "demo/runs.leaderboard", "args": {}}),
        Some("public"),
    );
    assert_eq!(above["entry"]["status"], "withheld", "{above}");
    let within = harness.tool(
        "run_read_command",
        json!({"command": "demo/runs.leaderboard", "args": {}}),
        Some("space:demo"),
    );
    assert_eq!(within["entry"]["status"], "admitted", "{within}");
}

/// A job ended while its agent runs: the broker refuses the listing, and the
/// harness reports that the catalog could not be read with the broker's
/// sentence, not a complaint about the shape of what it read — and exits 3
/// with that sentence on stderr (the job is over).
#[test]
fn an_ended_jobs_listing_reports_the_brokers_sentence() {
    let served = Served::start();
    let (job, name) = served.named_job(&["--person", "ada", "--allow", "demo/runs.*"]);
    // Ended by its secret, as `shed job create` printed it.
    shed(&served.data(), &["job", "end", &job]);
    let out = Harness::for_job(&served, job.clone())
        .command()
        .args(["tool", "list_commands"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(
        said.starts_with(&format!("error: job {name} was ended at")),
        "{said}"
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["status"], "failed_to_deliver", "{listed}");
    assert_eq!(listed["reason"], "command_failed", "{listed}");
    let message = listed["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("forbidden: job {name} was ended at"))
            && message.ends_with("its agent runs nothing more; `shed job create` makes a new job"),
        "{listed}"
    );
}

/// Issue 23, finding 2: an answer above the run's observation ceiling says
/// nothing of its content — not its size, its code or its ids — so two
/// reads, one matching runs and one matching none, read the same byte for
/// byte, alone and in a batch (comparing sizes across prefix searches once
/// spelled out a withheld word).
#[test]
fn a_withheld_answer_reads_the_same_whatever_it_holds() {
    let served = Served::start();
    let job = served.job(&[
        "--person",
        "ada",
        "--allow",
        "demo/runs.*",
        "--read-only",
        "demo/runs.since",
    ]);
    let harness = Harness::for_job(&served, job);
    for (who, miles) in [("Ada", 5), ("Bo", 12)] {
        let logged = harness.tool(
            "run_command",
            json!({"command": "demo/runs.log_run", "args": {"who": who, "miles": miles, "at": "2026-09-01"}}),
            None,
        );
        assert_eq!(logged["outcome"]["code"], "ok", "{logged}");
    }
    let since = |date: &str| json!({"command": "demo/runs.since", "args": {"since": date}});
    let (matching, matching_none) = (since("2000-01-01"), since("2999-01-01"));

    // Within the ceiling the two answers differ.
    let all = harness.tool("run_read_command", matching.clone(), Some("space:demo"));
    let none = harness.tool(
        "run_read_command",
        matching_none.clone(),
        Some("space:demo"),
    );
    assert_eq!(all["entry"]["status"], "admitted", "{all}");
    assert_eq!(none["entry"]["status"], "admitted", "{none}");
    assert_ne!(all["entry"]["body"], none["entry"]["body"]);

    // Above it, through either tool, they are one and the same result.
    for tool in ["run_read_command", "run_command"] {
        let all = harness.tool(tool, matching.clone(), Some("public"));
        let none = harness.tool(tool, matching_none.clone(), Some("public"));
        assert_eq!(all["entry"]["status"], "withheld", "{all}");
        assert_eq!(all.to_string(), none.to_string(), "{tool}");
        assert_eq!(
            all["outcome"],
            json!({"delivered": true, "landed": "unknown"}),
            "{all}"
        );
    }

    // In a batch: the two results alike but for their outputId, and a batch
    // of either alone the same.
    let batch = harness.tool(
        "run_read_command",
        json!({"calls": [matching, matching_none]}),
        Some("public"),
    );
    let mut results = batch["results"].as_array().unwrap().clone();
    for result in &mut results {
        result.as_object_mut().unwrap().remove("outputId");
    }
    assert_eq!(results[0]["entry"]["status"], "withheld", "{batch}");
    assert_eq!(results[0], results[1], "{batch}");
    let one = |call: Value| {
        harness
            .tool(
                "run_read_command",
                json!({ "calls": [call] }),
                Some("public"),
            )
            .to_string()
    };
    assert_eq!(one(since("2000-01-01")), one(since("2999-01-01")));
}
