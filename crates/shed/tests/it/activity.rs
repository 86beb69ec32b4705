//! What agents did, black-box: a write through MCP (a client naming
//! itself in `_meta`, and one naming itself nowhere), one through the broker by an agent job, one through
//! the page api — each on `shed activity` with its person, agent or client,
//! door and command; a job's call outside its scope listed as refused with
//! its sentence and no argument value; another space's private app's
//! writes on nobody else's activity.

use serde_json::json;

use crate::broker_support::{self, REFUSED_STATUS};
use crate::web_door::Shed;

#[tokio::test]
async fn each_door_s_write_is_on_the_activity_with_who_and_how_and_a_refusal_beside_them() {
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let call = json!({
        "name": "command",
        "arguments": { "name": "log_run", "app": "demo/runs",
                       "args": { "who": "Ed", "miles": 5, "at": "2026-09-01" } },
        "_meta": { "io.modelcontextprotocol/clientInfo": { "name": "Test client", "version": "1" } }
    });
    let answer = shed
        .mcp_request(&token, "tools/call", "command", call)
        .await;
    assert!(answer["result"]["isError"] != json!(true), "{answer}");

    let secret = shed
        .shed(&[
            "job",
            "create",
            "--person",
            "ada",
            "--allow",
            "demo/runs.log_run",
        ])
        .trim()
        .to_string();
    let queue = shed.data.path().join("command-queue.sock");
    let run = |name: &str, args: serde_json::Value| {
        broker_support::cli(
            &queue,
            Some(&secret),
            &["command", "run", name, "--args-json", "-", "--json"],
            &args.to_string(),
        )
    };
    let ran = run(
        "demo/runs.log_run",
        json!({ "who": "Agent", "miles": 7, "at": "2026-09-02" }),
    );
    assert!(ran.status.success(), "{ran:?}");
    // Outside the job's scope: refused, and kept without its arguments.
    let outside = run(
        "demo/open.log_run",
        json!({ "who": "SECRET-ARGUMENT", "miles": 1 }),
    );
    assert_eq!(outside.status.code(), Some(REFUSED_STATUS), "{outside:?}");

    let cookie = shed.demo_cookie("ada").await;
    let bundle = json!({ "entity": { "eid": "$r" }, "jog": { "who": "Page", "miles": 3 } });
    let (status, applied) = shed.apply("runs", bundle, Some(&cookie)).await;
    assert!(status.is_success(), "{applied}");

    let seen = shed.shed(&["activity", "--as", "ada", "--space", "demo"]);
    let lines: Vec<&str> = seen.lines().collect();
    let header = lines[0].split_whitespace().collect::<Vec<_>>();
    assert_eq!(
        header,
        ["WHEN", "WRITE", "BY", "VIA", "THROUGH", "ENTITIES"],
        "{seen}"
    );
    let row = |write: &str| {
        lines
            .iter()
            .find(|line| line.contains(&format!(" {write} ")))
            .unwrap_or_else(|| panic!("{write} is not on the activity:\n{seen}"))
            .split("  ")
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .skip(1)
            .take(4)
            .collect::<Vec<_>>()
            .join(" | ")
    };
    assert_eq!(
        row("demo/runs@3"),
        "demo/runs@3 | @ada | - | web apply",
        "{seen}"
    );
    assert_eq!(
        row("demo/runs@2"),
        format!(
            "demo/runs@2 | @ada | agent:{} | broker log_run",
            job_name(&shed)
        ),
        "{seen}"
    );
    assert_eq!(
        row("demo/runs@1"),
        "demo/runs@1 | @ed | Test client (claimed) | mcp log_run",
        "{seen}"
    );
    let refused = seen
        .split("refused:")
        .nth(1)
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        refused.contains("demo/open") && refused.contains("broker log_run"),
        "{seen}"
    );
    assert!(refused.contains("is outside job"), "{seen}");
    assert!(
        !seen.contains("SECRET-ARGUMENT"),
        "no argument is kept: {seen}"
    );

    // Narrowed to the job: only its write.
    let job = shed.shed(&["activity", "--as", "ada", "--job", &job_name(&shed)]);
    assert!(
        job.contains("demo/runs@2") && !job.contains("demo/runs@1"),
        "{job}"
    );
    // A client that names itself nowhere is named by nobody (not by the
    // name rmcp gives a sessionless request's peer).
    let unnamed = json!({
        "name": "command",
        "arguments": { "name": "log_run", "app": "demo/runs",
                       "args": { "who": "Ed", "miles": 6, "at": "2026-09-03" } }
    });
    let answer = shed
        .mcp_request(&token, "tools/call", "command", unnamed)
        .await;
    assert!(answer["result"]["isError"] != json!(true), "{answer}");
    let eds = shed.shed(&["activity", "--as", "ed", "--space", "demo"]);
    let unnamed_row = eds
        .lines()
        .find(|line| line.contains(" demo/runs@4 "))
        .unwrap_or_else(|| panic!("{eds}"));
    assert_eq!(
        unnamed_row
            .split_whitespace()
            .skip(3)
            .take(4)
            .collect::<Vec<_>>(),
        ["demo/runs@4", "@ed", "-", "mcp"],
        "{eds}"
    );

    // An entity's history names the client too, and a job's only once.
    let history = |write: &str| {
        let eid = seen
            .lines()
            .find(|line| line.contains(&format!(" {write} ")))
            .and_then(|line| line.split_whitespace().last())
            .unwrap_or_else(|| panic!("{seen}"));
        shed.shed(&["entity", "demo/runs", eid, "--as", "ada"])
    };
    let by_client = history("demo/runs@1");
    assert!(
        by_client.contains(" by @ed through mcp log_run from Test client (claimed): "),
        "{by_client}"
    );
    let by_job = history("demo/runs@2");
    assert!(
        by_job.contains(&format!(
            " by @ada (agent:{}) through broker log_run: ",
            job_name(&shed)
        )),
        "{by_job}"
    );

    // Sam belongs to no space of demo's: none of it is on his activity,
    // and asking for demo's is asking for a space that is not his.
    let sams = shed.shed(&["activity", "--as", "sam"]);
    assert!(!sams.contains("demo/"), "{sams}");
    assert_eq!(
        shed.refused(&["activity", "--as", "sam", "--space", "demo"]),
        shed.refused(&["activity", "--as", "sam", "--space", "nowhere"])
            .replace("nowhere", "demo")
    );
}

/// The newest job's public name.
fn job_name(shed: &Shed) -> String {
    let list: serde_json::Value =
        serde_json::from_str(&shed.shed(&["job", "list", "--json"])).unwrap();
    list.as_array().unwrap().last().unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn an_activity_row_names_its_person_once_whatever_their_handle() {
    let shed = Shed::start().await;
    shed.shed(&["person", "add", "you", "--name", "You"]);
    shed.shed(&["member", "add", "demo", "you", "--role", "editor"]);
    shed.shed(&["person", "add", "jo", "--name", "Jo March"]);
    shed.shed(&["member", "add", "demo", "jo", "--role", "editor"]);
    for handle in ["you", "jo"] {
        let log_run = json!({ "name": "log_run", "app": "demo/runs",
                              "args": { "who": "Ed", "miles": 5, "at": "2026-09-01" } });
        let (error, logged) = shed.mcp(&shed.token(handle), "command", log_run).await;
        assert!(!error, "{logged}");
    }
    let jar = shed.sign_in("ada").await;
    let cookie = jar
        .header(&format!("{}/", shed.url()))
        .expect("a cookie for the platform's host");
    let (_, _, page) = shed
        .get(&format!("{}/activity", shed.url()), Some(&cookie))
        .await;
    let row = |write: &str| {
        let start = page
            .find(&format!("data-write=\"{write}\""))
            .unwrap_or_else(|| panic!("no row {write}: {page}"));
        let row = &page[start..];
        row[..row.find("</li>").unwrap()].to_string()
    };
    // A handle that is its name (but for case) said once, not "@you … by
    // You"; a name of its own beside the handle, once.
    let yours = row("demo/runs@1");
    assert!(
        yours.contains(">@you ran log_run in demo/runs — 1 entity<"),
        "{yours}"
    );
    assert!(!yours.contains("by You"), "{yours}");
    let jos = row("demo/runs@2");
    assert!(
        jos.contains(">Jo March (@jo) ran log_run in demo/runs — 1 entity<"),
        "{jos}"
    );
    assert!(!jos.contains("by Jo"), "{jos}");
}
