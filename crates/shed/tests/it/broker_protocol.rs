//! The host-command protocol end to end: `shed serve` with its broker's
//! queue, jobs made with `shed job`, and `shed command list|run` run over a
//! cleared environment, as a harness runs them.

use crate::access_matrix;
use crate::broker_support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;

use crate::data_place::DataIn;
use broker_support::{SHED, Served, a_run, answered, names, shed};
use serde_json::{Value, json};

const RUN_CLUB: [&str; 5] = [
    "demo/runs.log_run",
    "demo/runs.leaderboard",
    "demo/runs.since",
    "demo/runs.add_jog",
    "demo/runs.find_jog",
];

#[test]
fn a_job_lists_and_runs_only_what_its_globs_admit() {
    let served = Served::start();
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let rows = served.list(&job);
    assert_eq!(names(&rows), RUN_CLUB);
    let log_run = &rows[0];
    assert_eq!(log_run["effect"], "write");
    assert_eq!(log_run["scope"], "app");
    assert_eq!(
        log_run["inputSchema"]["required"],
        json!(["who", "miles", "at"])
    );
    assert!(
        log_run["outputs"]["entities"].is_object() && log_run["outputs"]["aliases"].is_object()
    );
    assert_eq!(rows[1]["effect"], "read");
    assert!(rows[1]["outputs"]["rows"].is_object());
    assert!(rows.iter().all(|r| r["readOnlyGranted"] == false));

    let wider = served.job(&[
        "--person",
        "ada",
        "--allow",
        "demo/runs.*",
        "--allow",
        "graph.*",
    ]);
    let mut expected: Vec<&str> = RUN_CLUB.to_vec();
    expected.extend(["graph.query", "graph.apply"]);
    assert_eq!(names(&served.list(&wider)), expected);

    let before = served.version(&job);
    for (name, args, extra) in [
        (
            "graph.apply",
            json!({"bundle": {"entity": {"eid": "$x"}, "doc": {"title": "sneaky"}}}),
            vec!["--loom", "demo/runs"],
        ),
        ("apps.list", json!({}), vec![]),
        ("other/app.log_run", a_run(), vec![]),
    ] {
        let outcome = served.run(&job, name, args, &extra);
        assert_eq!(outcome["code"], "forbidden", "{name}: {outcome}");
        assert_eq!(outcome["ok"], false);
        assert_eq!(outcome["mayHaveLanded"], false);
        assert!(
            outcome["message"].as_str().unwrap().contains("outside job"),
            "{outcome}"
        );
    }
    assert_eq!(served.version(&job), before, "nothing was written");
}

#[test]
fn a_write_is_the_jobs_agent_for_its_person_whatever_the_request_names() {
    let served = Served::start();
    let (job, name) = served.named_job(&["--person", "ada", "--allow", "demo/runs.*"]);
    // A raw request naming another actor, in the request and in the args.
    let mut stream = UnixStream::connect(&served.queue).unwrap();
    let request = json!({
        "op": "run", "job": job, "command": "demo/runs.log_run", "actor": "person:bob",
        "args": { "who": "Ada", "miles": 7, "at": "2026-09-02", "actor": "bob", "created": {"by": "bob"} },
    });
    stream.write_all(request.to_string().as_bytes()).unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let outcome: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(outcome["code"], "ok", "{outcome}");
    assert_eq!(outcome["mayHaveLanded"], true);
    let eid = outcome["body"]["aliases"]["$run"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(outcome["completed"], json!([eid]));

    let board = served.run(&job, "demo/runs.leaderboard", json!({}), &[]);
    let row = &board["body"]["rows"][0];
    assert_eq!(row["entity"]["eid"], eid.as_str());
    assert_eq!(row["created"]["by"]["name"], "Ada");
    assert_eq!(row["created"]["via"], format!("agent:{name}"));

    // The entity's history names the agent too.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let history = runtime.block_on(async {
        let store = crate::data_place::store(&served.data()).await;
        store.history("demo/runs", &eid).await.unwrap()
    });
    assert_eq!(history.len(), 1);
    assert_eq!(
        history[0].via.as_deref(),
        Some(format!("agent:{name}").as_str())
    );
}

/// Issue 24, point 1: `shed command run` says what the MCP door says — the
/// sentence, then the answer as compact JSON (the outcome's `body`) — as
/// its `message` and, without `--json`, on stdout; a write's too.
#[test]
fn a_run_says_its_sentence_then_its_answer_as_json() {
    let served = Served::start();
    let (job, _) = served.named_job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let wrote = served.run(&job, "demo/runs.log_run", a_run(), &[]);
    let message = wrote["message"].as_str().unwrap();
    let (sentence, answer) = message.split_once('\n').unwrap();
    let eid = wrote["body"]["aliases"]["$run"].as_str().unwrap();
    assert_eq!(
        sentence,
        format!("log_run: wrote 1 entity in demo/runs: $run={eid}")
    );
    assert_eq!(
        serde_json::from_str::<Value>(answer).unwrap(),
        wrote["body"]
    );

    let board = served.run(&job, "demo/runs.leaderboard", json!({}), &[]);
    let message = board["message"].as_str().unwrap();
    let (sentence, answer) = message.split_once('\n').unwrap();
    assert_eq!(sentence, "leaderboard: 1 row in demo/runs");
    assert_eq!(
        serde_json::from_str::<Value>(answer).unwrap(),
        board["body"]
    );

    let printed = served.cli(Some(&job), &["command", "run", "demo/runs.leaderboard"], "");
    assert!(printed.status.success());
    let printed = String::from_utf8(printed.stdout).unwrap();
    let (sentence, answer) = printed.trim_end().split_once('\n').unwrap();
    assert_eq!(sentence, "leaderboard: 1 row in demo/runs");
    assert_eq!(
        serde_json::from_str::<Value>(answer).unwrap(),
        board["body"]
    );
}

#[test]
fn read_only_runs_only_granted_reads() {
    let served = Served::start();
    let job = served.job(&[
        "--person",
        "ada",
        "--allow",
        "demo/runs.*",
        "--read-only",
        "demo/runs.leaderboard",
    ]);
    let rows = served.list(&job);
    let granted: Vec<&str> = rows
        .iter()
        .filter(|r| r["readOnlyGranted"] == true)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(granted, ["demo/runs.leaderboard"]);

    let before = served.version(&job);
    let write = served.run(&job, "demo/runs.log_run", a_run(), &["--read-only"]);
    assert_eq!(write["code"], "forbidden", "{write}");
    assert!(
        write["message"].as_str().unwrap().contains("changes data"),
        "{write}"
    );
    assert_eq!(served.version(&job), before, "the write did not run");

    let granted = served.run(&job, "demo/runs.leaderboard", json!({}), &["--read-only"]);
    assert_eq!(granted["code"], "ok", "{granted}");
    let ungranted = served.run(
        &job,
        "demo/runs.since",
        json!({"since": "2026-01-01"}),
        &["--read-only"],
    );
    assert_eq!(ungranted["code"], "forbidden", "{ungranted}");
    assert!(
        ungranted["message"]
            .as_str()
            .unwrap()
            .contains("grants no read-only run"),
        "{ungranted}"
    );

    // A read-only glob alone admits the read, and only the read.
    let reader = served.job(&["--person", "ada", "--read-only", "demo/runs.*"]);
    let reads = names(&served.list(&reader));
    assert_eq!(
        reads,
        [
            "demo/runs.leaderboard",
            "demo/runs.since",
            "demo/runs.find_jog"
        ]
    );
}

#[test]
fn expect_refuses_a_stale_version_and_writes_at_the_current_one() {
    let served = Served::start();
    let job = served.job(&[
        "--person",
        "ada",
        "--allow",
        "demo/runs.*",
        "--allow",
        "graph.*",
    ]);
    served.run(&job, "demo/runs.log_run", a_run(), &[]);
    let current = served.version(&job);
    assert_eq!(current, 1);

    let stale = served.run(&job, "demo/runs.log_run", a_run(), &["--expect", "0"]);
    assert_eq!(stale["code"], "conflict", "{stale}");
    assert_eq!(stale["mayHaveLanded"], false);
    assert_eq!(stale["version"], 1);
    assert_eq!(served.version(&job), 1, "nothing was written");
    let stale_apply = served.run(
        &job,
        "graph.apply",
        json!({"bundle": {"entity": {"eid": "$n"}, "doc": {"title": "x"}}}),
        &["--loom", "demo/runs", "--expect", "7"],
    );
    assert_eq!(stale_apply["code"], "conflict", "{stale_apply}");

    let fresh = served.run(&job, "demo/runs.log_run", a_run(), &["--expect", "1"]);
    assert_eq!(fresh["code"], "ok", "{fresh}");
    assert_eq!(fresh["version"], 2);
    let read = served.run(&job, "demo/runs.leaderboard", json!({}), &["--expect", "2"]);
    assert_eq!(read["code"], "ok", "{read}");
    let stale_read = served.run(&job, "demo/runs.leaderboard", json!({}), &["--expect", "1"]);
    assert_eq!(stale_read["code"], "conflict", "{stale_read}");
}

#[test]
fn no_job_an_unknown_an_ended_and_an_expired_job_are_each_refused_in_their_own_words() {
    let served = Served::start();
    let (ended, ended_name) = served.named_job(&["--person", "ada", "--allow", "demo/runs.*"]);
    // Ended by the name `shed job list` shows.
    let ended_line = shed(&served.data(), &["job", "end", &ended_name]);
    assert!(
        ended_line.starts_with(&format!("{ended_name}  ada  ended ")),
        "{ended_line}"
    );
    let (expired, expired_name) =
        served.named_job(&["--person", "ada", "--allow", "demo/runs.*", "--ttl", "1s"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));

    let unknown = "0123456789abcdef0123456789abcdef";
    let mut sentences = Vec::new();
    for job in [
        None,
        Some(unknown),
        Some(ended.as_str()),
        Some(expired.as_str()),
        // A job's name is not its secret.
        Some(ended_name.as_str()),
    ] {
        let out = served.cli(
            job,
            &[
                "command",
                "run",
                "demo/runs.log_run",
                "--args-json",
                "-",
                "--json",
            ],
            &a_run().to_string(),
        );
        let outcome = answered(&out);
        assert_eq!(outcome["code"], "forbidden", "{job:?}: {outcome}");
        assert_eq!(outcome["mayHaveLanded"], false);
        let listing = answered(&served.cli(job, &["command", "list", "--json"], ""));
        assert_eq!(listing["code"], "forbidden", "{job:?}: {listing}");
        assert!(listing.get("commands").is_none());
        sentences.push(outcome["message"].as_str().unwrap().to_string());
    }
    assert!(
        sentences[0].starts_with("no job — the request carries no LOOM_COMMAND_JOB_ID"),
        "{}",
        sentences[0]
    );
    assert!(
        sentences[1].starts_with(
            "no job — the request's LOOM_COMMAND_JOB_ID is not the secret of a job this host made"
        ),
        "{}",
        sentences[1]
    );
    assert!(
        sentences[2].starts_with(&format!("job {ended_name} was ended at")),
        "{}",
        sentences[2]
    );
    assert!(
        sentences[3].starts_with(&format!("job {expired_name} expired at")),
        "{}",
        sentences[3]
    );
    assert_eq!(
        sentences[4], sentences[1],
        "a name is refused as any unknown secret"
    );
    for sentence in &sentences {
        for secret in [&ended, &expired, &unknown.to_string()] {
            assert!(
                !sentence.contains(&secret[..8]),
                "{sentence} repeats a secret"
            );
        }
    }

    let list = shed(&served.data(), &["job", "list"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with(&format!("{ended_name}  ")) && l.contains(" ended ")),
        "{list}"
    );
    assert!(
        list.lines()
            .any(|l| l.starts_with(&format!("{expired_name}  ")) && l.contains(" expired ")),
        "{list}"
    );
    assert!(
        !list.contains(&ended) && !list.contains(&expired),
        "the list shows names, never secrets: {list}"
    );
    let alive = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    assert_eq!(
        served.run(&alive, "demo/runs.leaderboard", json!({}), &[])["code"],
        "ok"
    );
}

#[test]
fn the_socket_is_private_and_a_second_server_refuses_to_start() {
    let served = Served::start();
    let mode = std::fs::metadata(&served.queue)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let second = Command::new(SHED)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--queue",
            served.dir.path().join("q2.sock").to_str().unwrap(),
        ])
        .data_in(&served.data())
        .output()
        .unwrap();
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    // Refused before it binds or prints anything, naming the one that serves.
    assert!(
        said.starts_with(&format!(
            "shed already serves {} at ",
            served.data().display()
        )),
        "{said}"
    );
    assert!(
        said.contains("(process ") && said.ends_with("— use that one, or stop it first\n"),
        "{said}"
    );
    assert!(!served.dir.path().join("q2.sock").exists());
    // The first still answers.
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    assert_eq!(served.list(&job).len(), 5);
}

/// `shed command` keeps SIGPIPE ignored (a broker that hangs up is exit 1
/// with a sentence), so a reader gone before the answer is printed ends
/// its printing quietly: no panic, no 101, the answer's own status.
#[test]
fn a_command_whose_reader_has_gone_ends_quietly() {
    let served = Served::start();
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    for args in [&["command", "list"][..], &["command", "list", "--json"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(SHED)
            .args(args)
            .env_clear()
            .env("LOOM_PAGE_RPC_QUEUE", &served.queue)
            .env("LOOM_COMMAND_JOB_ID", &job)
            .stdout(std::process::Stdio::from(writer))
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("panicked"), "shed {args:?}: {said}");
        assert_eq!(out.status.code(), Some(0), "shed {args:?}: {said}");
    }
}

#[test]
fn the_cli_fails_only_when_the_host_did_not_answer() {
    let served = Served::start();
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let nowhere = served.dir.path().join("nobody.sock");
    let out = broker_support::cli(&nowhere, Some(&job), &["command", "list", "--json"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be reached"));
    let no_queue = Command::new(SHED)
        .args(["command", "list", "--json"])
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(no_queue.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_queue.stderr).contains("LOOM_PAGE_RPC_QUEUE is not set"));
    let bad_args = served.cli(
        Some(&job),
        &[
            "command",
            "run",
            "demo/runs.log_run",
            "--args-json",
            "-",
            "--json",
        ],
        "{not json",
    );
    assert_eq!(bad_args.status.code(), Some(2));
    // A command layer refusal is an answer: exit 0.
    let missing = served.run(&job, "demo/runs.log_run", json!({"who": "Ada"}), &[]);
    assert_eq!(missing["code"], "bad-args", "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("miles is required"),
        "{missing}"
    );
}

#[test]
fn built_ins_fill_from_the_job_and_keep_their_declarations() {
    let served = Served::start();
    let job = served.job(&["--person", "ada"]);
    let rows = served.list(&job);
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    assert_eq!(row("apps.list")["scope"], "global");
    assert_eq!(
        row("apps.list")["inputSchema"]["properties"]["person"]["x-source"],
        "job.person"
    );
    assert_eq!(row("graph.query")["scope"], "loom");
    assert_eq!(row("app.deploy")["developer"], true);
    assert_eq!(row("space.invite")["actors"], json!(["person"]));
    assert_eq!(row("app.files")["origins_refused"], json!(["session"]));
    assert_eq!(row("token.create")["grant"]["kind"], "consent");
    assert_eq!(row("doc.comment")["origin"], "pattern");

    // x-source: the job's person, whoever the request names.
    let apps = served.run(&job, "apps.list", json!({"person": "bob"}), &[]);
    assert_eq!(apps["code"], "ok", "{apps}");
    assert_eq!(apps["body"]["apps"][0]["at"], "demo/runs");
    assert_eq!(apps["ifc"]["readers"], json!(["person:ada"]));

    // The command layer keeps each declaration: refused, nothing done.
    for (name, args, extra) in [
        (
            "space.invite",
            json!({"space": "demo", "handle": "bob", "role": "editor"}),
            vec![],
        ),
        ("token.create", json!({}), vec![]),
        ("app.files", json!({}), vec!["--loom", "demo/runs"]),
        (
            "doc.comment",
            json!({"target": "x", "body": "hi"}),
            vec!["--loom", "demo/runs"],
        ),
    ] {
        let outcome = served.run(&job, name, args, &extra);
        assert_eq!(outcome["code"], "refused", "{name}: {outcome}");
    }
    let bob = served.job(&["--person", "bob"]);
    assert_eq!(
        served.run(&bob, "apps.list", json!({}), &[])["body"]["apps"],
        json!([]),
        "bob was not invited"
    );

    // A developer's built-in runs when the job's scope admits it.
    let deploy = served.run(&job, "app.deploy", json!({}), &["--loom", "demo/runs"]);
    assert_eq!(deploy["code"], "ok", "{deploy}");
    // No drafts since: the same files, so no new version (#39).
    assert_eq!(deploy["body"]["version"], 1, "{deploy}");
    let no_loom = served.run(&job, "graph.query", json!({"filter": ".jog!"}), &[]);
    assert_eq!(no_loom["code"], "bad-args", "{no_loom}");
}

#[test]
fn labels_follow_the_apps_access() {
    let served = Served::start();
    let run_club = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    shed(
        &served.data(),
        &[
            "deploy",
            run_club.to_str().unwrap(),
            "--to",
            "demo/open",
            "--as",
            "ada",
            "--access",
            "open",
        ],
    );
    shed(
        &served.data(),
        &[
            "deploy",
            run_club.to_str().unwrap(),
            "--to",
            "demo/shown",
            "--as",
            "ada",
            "--access",
            "public",
        ],
    );
    let job = served.job(&["--person", "ada"]);
    for (app, readers, integrity) in [
        ("demo/runs", json!(["space:demo"]), "trusted"),
        ("demo/shown", json!(["public"]), "trusted"),
        ("demo/open", json!(["public"]), "untrusted"),
    ] {
        let outcome = served.run(&job, &format!("{app}.leaderboard"), json!({}), &[]);
        assert_eq!(outcome["code"], "ok", "{outcome}");
        assert_eq!(
            outcome["ifc"],
            json!({"readers": readers, "integrity": integrity}),
            "{app}"
        );
    }
}

#[test]
fn a_hundred_concurrent_runs_all_answer_and_every_write_counts() {
    let served = Served::start();
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let before = served.version(&job);
    let children: Vec<(bool, std::process::Child)> = (0..100)
        .map(|i| {
            let write = i % 2 == 0;
            let (name, args) = if write {
                ("demo/runs.log_run", a_run())
            } else {
                ("demo/runs.leaderboard", json!({}))
            };
            let mut child = Command::new(SHED)
                .args(["command", "run", name, "--args-json", "-", "--json"])
                .env_clear()
                .env("LOOM_PAGE_RPC_QUEUE", &served.queue)
                .env("LOOM_COMMAND_JOB_ID", &job)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(args.to_string().as_bytes())
                .unwrap();
            (write, child)
        })
        .collect();
    let mut writes = 0;
    for (write, child) in children {
        let outcome = answered(&child.wait_with_output().unwrap());
        assert_eq!(outcome["code"], "ok", "{outcome}");
        writes += usize::from(write);
    }
    assert_eq!(writes, 50);
    assert_eq!(served.version(&job), before + 50);
}

#[test]
fn an_editors_agent_cannot_change_who_may_read_an_app() {
    let served = Served::start();
    shed(
        &served.data(),
        &["member", "add", "demo", "bob", "--role", "editor"],
    );
    let job = served.job(&["--person", "bob"]);
    let outcome = served.run(
        &job,
        "app.deploy",
        json!({"access": "public"}),
        &["--loom", "demo/runs"],
    );
    assert_eq!(outcome["code"], "refused", "{outcome}");
    assert_eq!(
        outcome["message"],
        "only an owner of demo changes who may read demo/runs (it is private) — deploy without \
         an access to keep it private, or ask an owner of demo"
    );
    // Without an access the deploy keeps the app private, as it was.
    let kept = served.run(&job, "app.deploy", json!({}), &["--loom", "demo/runs"]);
    assert_eq!(kept["code"], "ok", "{kept}");
    assert_eq!(kept["body"]["access"], "private", "{kept}");
}

/// The rule book's matrix through `shed command run`: every app access ×
/// every standing a job can have (a job always acts for a person, so never
/// signed out) × read (`graph.query`) and write (`graph.apply`); each outcome
/// is the rule book's verdict for the cell (`shed_host::access::may`), its
/// sentence word for word, coded as the broker codes a host refusal.
#[test]
fn the_access_matrix_through_shed_command_run() {
    use shed_host::access::Act;

    let served = Served::start();
    let data = served.data();
    let run_club = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    for (handle, role) in [("vic", "viewer"), ("ed", "editor")] {
        shed(&data, &["person", "add", handle]);
        shed(&data, &["member", "add", "demo", handle, "--role", role]);
    }
    shed(&data, &["person", "add", "sam"]);
    for (app, access) in [("demo/pub", "public"), ("demo/open", "open")] {
        let folder = run_club.to_str().unwrap();
        shed(
            &data,
            &[
                "deploy", folder, "--to", app, "--as", "ada", "--access", access,
            ],
        );
    }
    let mut cells = 0;
    // A job always acts for a person: every standing but signed out.
    for (handle, standing) in access_matrix::STANDINGS {
        let Some(handle) = handle else { continue };
        let job = served.job(&["--person", handle]);
        for (app, access) in access_matrix::APPS {
            for act in access_matrix::ACTS {
                let (name, args) = match act {
                    Act::Read => ("graph.query", json!({"filter": ".jog!"})),
                    _ => (
                        "graph.apply",
                        json!({"bundle": {"entity": {"eid": "$r"}, "jog": a_run()}}),
                    ),
                };
                let loom = format!("demo/{app}");
                let outcome = served.run(&job, name, args, &["--loom", &loom]);
                let cell = format!("{name} on {loom} as {handle}");
                match access_matrix::verdict(app, access, standing, act) {
                    None => assert_eq!(outcome["code"], "ok", "{cell}: {outcome}"),
                    Some((kind, sentence)) => {
                        let code = if kind == "not-found" {
                            "not-found"
                        } else {
                            "refused"
                        };
                        assert_eq!(outcome["code"], code, "{cell}: {outcome}");
                        assert_eq!(outcome["message"], sentence, "{cell}");
                    }
                }
                cells += 1;
            }
        }
    }
    assert_eq!(cells, 4 * 3 * 2);
}
