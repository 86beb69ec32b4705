//! What an entity's page, an app's data page and `shed entity` show, black
//! box (#34): an entity's history only to its space's members — an
//! outsider of a public or open app reads its row now, no history, and a
//! tombstoned entity is absent to them (finding 4); app data reaches a
//! terminal with no control or reordering character raw (finding 5); and
//! an entity written 10,000 times with large values answers its page,
//! `shed entity` and an undo within a stated size, the server within a
//! stated memory (finding 1: 120 writes of 512 KB once made one GET answer
//! 126 MB and the server's peak 641 MB).

use std::time::Instant;

use reqwest::StatusCode;
use reqwest::header;
use serde_json::{Value, json};

use crate::web_door::Shed;

/// Writes `bundle` to `app` over MCP as `token`: its answer.
async fn apply(shed: &Shed, token: &str, app: &str, bundle: Value) -> Value {
    let (error, wrote) = shed
        .mcp(
            token,
            "graph_apply",
            json!({ "app": app, "bundle": bundle }),
        )
        .await;
    assert!(!error, "{wrote}");
    wrote
}

/// The platform host's session cookie after signing `handle` in.
async fn platform_cookie(shed: &Shed, handle: &str) -> String {
    let jar = shed.sign_in(handle).await;
    jar.header(&format!("{}/", shed.url()))
        .expect("a cookie for the platform's host")
}

/// `GET` of the platform's `path` with `cookie`: status and page.
async fn page(shed: &Shed, path: &str, cookie: &str) -> (StatusCode, String) {
    let (status, _, page) = shed
        .get(&format!("{}{path}", shed.url()), Some(cookie))
        .await;
    (status, page)
}

#[tokio::test]
async fn an_outsider_sees_no_history_and_no_tombstoned_entity() {
    let shed = Shed::start().await;
    let token = shed.token("ada");
    let sam = platform_cookie(&shed, "sam").await;
    let vic = platform_cookie(&shed, "vic").await;
    for slug in ["pub", "open"] {
        let app = format!("demo/{slug}");
        let made = apply(
            &shed,
            &token,
            &app,
            json!({ "entity": { "eid": "$r", "alias": "kept" },
                    "jog": { "who": "Old Secret", "miles": 1 } }),
        )
        .await;
        let eid = made["aliases"]["$r"].as_str().unwrap().to_string();
        let edit = json!({ "entity": { "eid": eid }, "jog": { "who": "Runner Now" } });
        apply(&shed, &token, &app, edit).await;
        let gone = apply(
            &shed,
            &token,
            &app,
            json!({ "entity": { "eid": "$g", "alias": "gone" },
                    "jog": { "who": "Deleted Secret", "miles": 2 } }),
        )
        .await;
        let gone = gone["aliases"]["$g"].as_str().unwrap().to_string();
        apply(
            &shed,
            &token,
            &app,
            json!({ "entity": { "eid": gone }, "tombstone": {} }),
        )
        .await;
        let data = format!("/spaces/demo/apps/{slug}/data");

        // Sam, signed in but of another space: the row now, nothing else.
        let (status, seen) = page(&shed, &format!("{data}/{eid}"), &sam).await;
        assert_eq!(status, StatusCode::OK, "{seen}");
        assert!(seen.contains("Runner Now"), "{seen}");
        for history in ["Old Secret", "@ada", "data-version=", "Made "] {
            assert!(
                !seen.contains(history),
                "{slug}: sam sees {history}: {seen}"
            );
        }
        assert!(
            seen.contains("Its history is shown to the members of demo."),
            "{seen}"
        );
        let (status, one) = page(&shed, &format!("{data}/{eid}?version=1"), &sam).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{one}");
        assert!(!one.contains("Old Secret"), "{one}");
        let (_, listed) = page(&shed, &format!("{data}?kind=jog"), &sam).await;
        assert!(listed.contains("Runner Now"), "{listed}");
        assert!(
            !listed.contains(">created<") && !listed.contains("by Ada"),
            "{listed}"
        );
        let cli = shed.shed(&["entity", &app, &eid, "--as", "sam"]);
        assert!(cli.contains("jog.who \"Runner Now\""), "{cli}");
        assert!(
            !cli.contains("Old Secret") && !cli.contains("@ada"),
            "{cli}"
        );

        // A tombstoned entity is one nobody made, to the page and the terminal.
        let nobody = "0123456789abcdef0123456789abcdef";
        let (status, dead) = page(&shed, &format!("{data}/{gone}"), &sam).await;
        let (made_up_status, made_up) = page(&shed, &format!("{data}/{nobody}"), &sam).await;
        assert_eq!(
            (status, made_up_status),
            (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND)
        );
        assert!(!dead.contains("Deleted Secret"), "{dead}");
        assert_eq!(dead.replace(&gone, nobody), made_up);
        for name in [gone.as_str(), "gone"] {
            assert_eq!(
                shed.refused(&["entity", &app, name, "--as", "sam"]),
                format!("no entity {name} in {app}")
            );
        }

        // Vic, a viewer of demo, reads it all.
        let (status, seen) = page(&shed, &format!("{data}/{eid}"), &vic).await;
        assert_eq!(status, StatusCode::OK, "{seen}");
        assert!(
            seen.contains("Old Secret") && seen.contains("data-version=\"2\""),
            "{seen}"
        );
        let (status, dead) = page(&shed, &format!("{data}/{gone}"), &vic).await;
        assert_eq!(status, StatusCode::OK, "{dead}");
        assert!(
            dead.contains("Deleted Secret") && dead.contains("tombstoned"),
            "{dead}"
        );
        let (_, listed) = page(&shed, &format!("{data}?kind=jog"), &vic).await;
        assert!(
            listed.contains(">created<") && listed.contains("by Ada"),
            "{listed}"
        );
        let cli = shed.shed(&["entity", &app, &gone, "--as", "vic"]);
        assert!(
            cli.contains("Deleted Secret") && cli.contains("@ada"),
            "{cli}"
        );
    }
}

/// The characters a terminal acts on or reorders by, which no line of
/// `shed` may carry raw.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (c.is_control() && !matches!(c, '\n' | '\t'))
                || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

#[tokio::test]
async fn app_data_reaches_a_terminal_with_no_control_or_reordering_character() {
    let shed = Shed::start().await;
    let token = shed.token("ada");
    let evil = "Ada\u{9b}2J\u{202e}nur\u{1b}[31m\u{7f}";
    let made = apply(
        &shed,
        &token,
        "demo/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": evil, "miles": 3 } }),
    )
    .await;
    let eid = made["aliases"]["$r"].as_str().unwrap().to_string();
    let edit = json!({ "entity": { "eid": eid }, "jog": { "who": format!("{evil}\nagain") } });
    apply(&shed, &token, "demo/runs", edit).await;
    for args in [
        vec!["entity", "demo/runs", &eid, "--as", "ada"],
        vec!["entity", "demo/runs", &eid, "--as", "ada", "--version", "2"],
        vec![
            "entity",
            "demo/runs",
            &eid,
            "--as",
            "ada",
            "--whole",
            "jog.who",
        ],
        vec![
            "entity",
            "demo/runs",
            &eid,
            "--as",
            "ada",
            "--whole",
            "jog.who",
            "--version",
            "2",
        ],
    ] {
        let printed = shed.shed(&args);
        assert_eq!(
            raw_controls(&printed),
            Vec::<char>::new(),
            "{args:?}: {printed:?}"
        );
        assert!(
            printed.contains("\\u{9b}2J\\u{202e}nur"),
            "{args:?}: {printed}"
        );
    }

    // A job's `shed command run`: the message, and the JSON still JSON.
    let secret = shed
        .shed(&["job", "create", "--person", "ada", "--allow", "demo/runs.*"])
        .trim()
        .to_string();
    let queue = shed.data.path().join("command-queue.sock");
    for json in [true, false] {
        let mut args = vec![
            "command",
            "run",
            "demo/runs.leaderboard",
            "--args-json",
            "{}",
        ];
        if json {
            args.push("--json");
        }
        let ran = crate::broker_support::cli(&queue, Some(&secret), &args, "");
        assert!(ran.status.success(), "{ran:?}");
        let printed = String::from_utf8(ran.stdout).unwrap();
        assert_eq!(
            raw_controls(&printed),
            Vec::<char>::new(),
            "{args:?}: {printed:?}"
        );
        if json {
            let outcome: Value = serde_json::from_str(&printed).unwrap();
            // The same JSON to a program: the value as it was written.
            let written = json!(evil).to_string();
            assert!(
                outcome.to_string().contains(written.trim_end_matches('"')),
                "{outcome}"
            );
        } else {
            assert!(printed.contains("\\u{9b}2J\\u{202e}nur"), "{printed}");
        }
    }

    // A title its deployer chose, in `shed app list` and `shed app versions`.
    let club = crate::web_door::run_club();
    shed.shed(&[
        "deploy",
        club.to_str().unwrap(),
        "--to",
        "demo/odd",
        "--as",
        "ada",
        "--title",
        "Run \u{202e}bulc",
    ]);
    for args in [
        vec!["app", "list", "--as", "ada"],
        vec!["app", "list"],
        vec!["app", "versions", "demo/odd", "--as", "ada"],
    ] {
        let printed = shed.shed(&args);
        assert_eq!(
            raw_controls(&printed),
            Vec::<char>::new(),
            "{args:?}: {printed:?}"
        );
    }
    let listed = shed.shed(&["app", "list", "--as", "ada"]);
    assert!(listed.contains("Run \\u{202e}bulc"), "{listed}");
}

/// How many versions the long entity is written to, and each value's size:
/// within the write bounds (a value at most 64 KiB), large enough that
/// whole values would make a page of many megabytes.
const VERSIONS: usize = 10_000;
const VALUE_BYTES: usize = 8 * 1024;

/// The most bytes the entity's page, `shed entity` and the undo may answer,
/// whatever the entity's length: the page bound (256 KiB) with room for
/// its header and the links past it; the text bound (64 KiB) with room for
/// a line; a sentence.
const PAGE_ANSWER_BYTES: usize = 512 * 1024;
const CLI_ANSWER_BYTES: usize = 128 * 1024;
const UNDO_SENTENCE_BYTES: usize = 1024;

/// How much the server's peak memory may grow over three GETs of the page
/// at once and an undo.
const MEMORY_GROWTH_BYTES: u64 = 100 * 1024 * 1024;

/// The pid of the `shed serve` listening on `port`, from /proc.
fn server_pid(port: u16) -> u32 {
    let listen = format!("127.0.0.1:{port}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let words: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                words.contains(&&b"serve"[..]) && words.contains(&listen.as_bytes())
            })
        })
        .expect("the server's process")
}

/// A line of /proc/<pid>/status, in bytes: `VmHWM` (the peak) or `VmRSS`.
fn memory(pid: u32, line: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix(line)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("a {line} line"));
    kib.trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .unwrap()
        * 1024
}

#[tokio::test]
async fn a_long_history_of_large_values_answers_within_its_bounds() {
    let shed = Shed::start().await;
    let token = shed.token("ada");
    let made = apply(
        &shed,
        &token,
        "demo/pub",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": "start", "miles": 0 } }),
    )
    .await;
    let eid = made["aliases"]["$r"].as_str().unwrap().to_string();

    // 10,000 writes of 8 KiB values, eight at a time, over loopback.
    let started = Instant::now();
    let writers = 8;
    let mut tasks = Vec::new();
    for writer in 0..writers {
        let (url, token, eid) = (shed.url(), token.clone(), eid.clone());
        let http = shed.http.clone();
        tasks.push(tokio::spawn(async move {
            for n in (writer..VERSIONS).step_by(writers) {
                let value = format!("{n:05}").repeat(VALUE_BYTES / 5);
                let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": { "name": "graph_apply", "arguments": { "app": "demo/pub",
                        "bundle": { "entity": { "eid": eid }, "jog": { "who": value } } },
                        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                   "io.modelcontextprotocol/clientCapabilities": {} } } });
                let answer: Value = http
                    .post(format!("{url}/mcp"))
                    .bearer_auth(&token)
                    .header(header::ACCEPT, "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "graph_apply")
                    .json(&call)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                assert!(answer["result"]["isError"] != json!(true), "{answer}");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    eprintln!("{VERSIONS} writes in {:?}", started.elapsed());
    let newest = VERSIONS + 1;

    let pid = server_pid(shed.port);
    let ada = platform_cookie(&shed, "ada").await;
    let path = format!("/spaces/demo/apps/pub/data/{eid}");
    let peak_before = memory(pid, "VmHWM");

    // Three GETs of its page at once: each bounded, whatever the history.
    let gets = tokio::join!(
        page(&shed, &path, &ada),
        page(&shed, &path, &ada),
        page(&shed, &path, &ada)
    );
    for (status, seen) in [gets.0, gets.1, gets.2] {
        let sentence = seen.split("role=\"alert\">").nth(1).unwrap_or_default();
        assert_eq!(
            status,
            StatusCode::OK,
            "{}",
            &sentence[..300.min(sentence.len())]
        );
        assert!(
            seen.len() < PAGE_ANSWER_BYTES,
            "the page is {} bytes",
            seen.len()
        );
        assert!(
            seen.contains(&format!("data-version=\"{}\"", newest)),
            "the newest version is shown"
        );
        assert!(
            seen.contains("whole (8190 characters)"),
            "a value is cut, linked whole"
        );
    }
    // One value whole, on its own page.
    let (status, whole) = page(
        &shed,
        &format!("{path}?whole=jog.who&version={newest}"),
        &ada,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(whole.len() < PAGE_ANSWER_BYTES, "{}", whole.len());
    let after = whole
        .split("<pre class=\"whole\">")
        .nth(2)
        .and_then(|block| block.split("</pre>").next())
        .unwrap_or_else(|| panic!("before and after, whole: {whole}"));
    assert_eq!(after.len(), VALUE_BYTES / 5 * 5, "the value whole");

    // The undo of its newest write, through the page's button.
    let undone = shed
        .http
        .post(format!("{}{path}/undo", shed.url()))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, &ada)
        .header(header::ORIGIN, shed.url())
        .body(format!("write=demo%2Fpub%40{newest}"))
        .send()
        .await
        .unwrap();
    let (status, undone) = shed.landed(undone, &ada).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        undone.len() < PAGE_ANSWER_BYTES,
        "the undo's page is {} bytes",
        undone.len()
    );
    assert!(
        undone.contains(&format!("undid demo/pub@{newest}")),
        "{}",
        &undone[..2000.min(undone.len())]
    );
    let grown = memory(pid, "VmHWM").saturating_sub(peak_before);
    eprintln!("the server's peak grew {} MB", grown / 1_000_000);
    assert!(
        grown < MEMORY_GROWTH_BYTES,
        "the server's peak grew {} MB over three GETs and an undo (now {} MB resident)",
        grown / 1_000_000,
        memory(pid, "VmRSS") / 1_000_000
    );

    // The terminal: `shed entity` and `shed undo` answer within theirs.
    let printed = shed.shed(&["entity", "demo/pub", &eid, "--as", "ada"]);
    assert!(
        printed.len() < CLI_ANSWER_BYTES,
        "shed entity printed {} bytes",
        printed.len()
    );
    let said = shed.shed(&["undo", &format!("demo/pub@{}", newest - 1), "--as", "ada"]);
    assert!(said.len() < UNDO_SENTENCE_BYTES, "{said}");
}

#[tokio::test]
async fn shed_entity_takes_the_short_id_the_pages_show() {
    let shed = Shed::start().await;
    let token = shed.token("ada");
    let made = apply(
        &shed,
        &token,
        "demo/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": "Short", "miles": 2 } }),
    )
    .await;
    let eid = made["aliases"]["$r"].as_str().unwrap().to_string();
    // The pages name an entity with no title by its first eight digits.
    let short = &eid[..8];
    let ada = platform_cookie(&shed, "ada").await;
    let (_, shown) = page(&shed, &format!("/spaces/demo/apps/runs/data/{eid}"), &ada).await;
    assert!(shown.contains(&format!("Entity {short}")), "{shown}");

    let read = shed.shed(&["entity", "demo/runs", short, "--as", "ada"]);
    assert!(
        read.starts_with(&format!("demo/runs: {eid} at version 1")),
        "{read}"
    );

    // A short id of no entity: what to give instead.
    let unknown = if short.starts_with('0') {
        "10000000"
    } else {
        "00000000"
    };
    let said = shed.refused(&["entity", "demo/runs", unknown, "--as", "ada"]);
    assert!(
        said.contains(&format!("no entity {unknown} in demo/runs — ")) && said.contains("first 8"),
        "{said}"
    );
}
