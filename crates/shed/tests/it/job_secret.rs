//! A job's secret stays secret: `shed job create` prints it once, the
//! database keeps only its hash, and every row, answer and log line names the
//! job by its public name (`agent:job-1`).

use crate::broker_support;

use std::path::Path;
use std::process::Output;

use broker_support::{Served, a_run, answered, shed_with};
use serde_json::{Value, json};

/// `shed <args>` on the data folder, logging at debug level; its output.
fn shed_logged(data: &Path, args: &[&str]) -> Output {
    shed_with(data, args, &[("RUST_LOG", "debug"), ("NO_COLOR", "1")])
}

/// Everything a process said, stdout then stderr.
fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The secret and pieces of it long enough to tell it (a 12-digit piece of
/// random hex turns up by chance once in 16^12).
fn pieces(secret: &str) -> [&str; 3] {
    [secret, &secret[..12], &secret[secret.len() - 12..]]
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

fn assert_no_secret(what: &str, bytes: &[u8], secret: &str) {
    for piece in pieces(secret) {
        assert!(
            !holds(bytes, piece),
            "{what} holds the job's secret ({piece})"
        );
    }
}

#[test]
fn a_jobs_secret_is_kept_only_as_its_hash_and_its_name_is_said_everywhere() {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let mut served = Served::start_logging(Some(&log));
    let data = served.data();
    let mut answers: Vec<String> = Vec::new();

    // `shed job create` prints the secret alone on stdout; stderr names the job.
    let created = shed_logged(
        &data,
        &["job", "create", "--person", "ada", "--allow", "demo/runs.*"],
    );
    let stdout = String::from_utf8(created.stdout.clone()).unwrap();
    let secret = stdout.trim_end().to_string();
    assert_eq!(stdout, format!("{secret}\n"), "the secret alone");
    assert!(secret.len() == 32 && secret.chars().all(|c| c.is_ascii_hexdigit()));
    let told = String::from_utf8_lossy(&created.stderr).to_string();
    assert!(told.contains("made job-1 for ada"), "{told}");
    assert!(
        told.contains("job=job-1"),
        "the log line names the job: {told}"
    );
    assert_no_secret("`shed job create`'s stderr", told.as_bytes(), &secret);

    let list = shed_logged(&data, &["job", "list", "--json"]);
    let listed: Value = serde_json::from_slice(&list.stdout).unwrap();
    let name = listed[0]["name"].as_str().unwrap().to_string();
    assert_eq!(name, "job-1");
    answers.push(said(&list));
    answers.push(said(&shed_logged(&data, &["job", "list"])));

    // A write through `shed command run`, read back.
    let write = served.run_output(&secret, "demo/runs.log_run", a_run(), &[]);
    answers.push(said(&write));
    let outcome = answered(&write);
    assert_eq!(outcome["code"], "ok", "{outcome}");
    assert_eq!(outcome["actor"], format!("agent:{name}"));
    let eid = outcome["completed"][0].as_str().unwrap().to_string();
    let board = served.run_output(&secret, "demo/runs.leaderboard", json!({}), &[]);
    answers.push(said(&board));
    let row = &answered(&board)["body"]["rows"][0];
    assert_eq!(row["entity"]["eid"], eid.as_str());
    assert_eq!(row["created"]["via"], format!("agent:{name}"));
    // The listing, a command outside the scope and a refused read-only run.
    let listing = served.cli(Some(&secret), &["command", "list", "--json"], "");
    assert_eq!(
        answered(&listing)["commands"][0]["name"],
        "demo/runs.log_run"
    );
    answers.push(said(&listing));
    for (command, args, extra) in [
        ("graph.query", json!({"filter": ".jog!"}), &[][..]),
        ("demo/runs.log_run", a_run(), &["--read-only"][..]),
    ] {
        let out = served.run_output(&secret, command, args, extra);
        let answer = answered(&out);
        assert_eq!(answer["code"], "forbidden", "{answer}");
        answers.push(said(&out));
    }
    let refused = answers.last().unwrap();
    assert!(
        refused.contains("demo/runs.log_run changes data, and a read-only run runs only reads"),
        "{refused}"
    );

    // While the server runs, with the WAL live: every file of the data
    // folder holds the hash and the name, never the secret.
    let hash = shed_store::secret_hash(&secret);
    let on_disk = crate::data_place::kept(&data);
    for (path, bytes) in &on_disk {
        assert_no_secret(path, bytes, &secret);
    }
    assert!(
        on_disk.iter().any(|(_, bytes)| holds(bytes, &hash)),
        "the secret's hash is kept"
    );
    assert!(
        on_disk
            .iter()
            .any(|(_, bytes)| holds(bytes, &format!("agent:{name}"))),
        "the rows name the agent by the job's name"
    );

    // Ended by its secret, as `create` printed it; then refused by name.
    let ended = shed_logged(&data, &["job", "end", &secret]);
    assert!(
        said(&ended).starts_with(&format!("{name}  ada  ended ")),
        "{}",
        said(&ended)
    );
    answers.push(said(&ended));
    let after = served.run_output(&secret, "demo/runs.leaderboard", json!({}), &[]);
    let after_outcome = answered(&after);
    assert!(
        after_outcome["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("job {name} was ended at")),
        "{after_outcome}"
    );
    answers.push(said(&after));

    for answer in &answers {
        assert_no_secret(&format!("the answer {answer}"), answer.as_bytes(), &secret);
    }

    served.stop();
    let logged = std::fs::read(&log).unwrap();
    assert_no_secret("the server's log", &logged, &secret);
    assert!(
        holds(&logged, &format!("actor=agent:{name}")),
        "the server's log names the agent: {}",
        String::from_utf8_lossy(&logged)
    );
    for (path, bytes) in crate::data_place::kept(&data) {
        assert_no_secret(&path, &bytes, &secret);
    }
    let history = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = crate::data_place::store(&data).await;
        store.history("demo/runs", &eid).await.unwrap()
    });
    assert_eq!(
        history[0].via.as_deref(),
        Some(format!("agent:{name}").as_str())
    );
}
