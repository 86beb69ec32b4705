//! Issue #34's finding 3, black-box: the refusals a space keeps are its
//! members' and their agents'. A member's refused call is kept; a person
//! of another space floods a public app of it with refused writes through
//! MCP, naming a client of their choosing, and none is kept — the member's
//! refusal is still on the space's activity (`shed activity` and its
//! page), and the outsider's client name is nowhere on it. Then a member's
//! own agent floods past its rate, and the member's earlier refusal is
//! still there too.

use serde_json::{Value, json};
use shed_broker::protocol::{Request, RunRequest};

use crate::web_door::Shed;

/// Refused calls in each flood: more than a space keeps
/// (`shed_store::activity::REFUSALS_PER_SPACE`, 1,000).
const FLOOD: usize = 1_100;

/// The client name the outsider chooses.
const OUTSIDER_CLIENT: &str = "Outsider-Flood-Client";

/// The client name the member's own refused call names.
const MEMBER_CLIENT: &str = "Vic-Own-Client";

/// An MCP `tools/call` of `tool` with `arguments`, from a client named
/// `client`.
fn call(tool: &str, arguments: Value, client: &str) -> Value {
    json!({
        "name": tool,
        "arguments": arguments,
        "_meta": { "io.modelcontextprotocol/clientInfo": { "name": client, "version": "1" } }
    })
}

/// A run for the run club's `log_run`.
fn a_run() -> Value {
    json!({ "who": "Flood", "miles": 1, "at": "2026-09-01" })
}

#[tokio::test]
async fn an_outsider_or_a_flooding_agent_pushes_out_no_member_s_refusal() {
    let shed = Shed::start().await;
    // vic views demo: his write to its public app is refused, and kept.
    let vic = shed.token("vic");
    let bundle = json!({ "entity": { "eid": "$r" }, "jog": { "who": "Vic", "miles": 2 } });
    let own = call(
        "graph_apply",
        json!({ "app": "demo/pub", "bundle": bundle }),
        MEMBER_CLIENT,
    );
    let answer = shed
        .mcp_request(&vic, "tools/call", "graph_apply", own)
        .await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");

    // sam belongs to no space of demo's: each of his writes is refused.
    let sam = shed.token("sam");
    for _ in 0..FLOOD {
        let bundle = json!({ "entity": { "eid": "$r" }, "jog": { "who": "Sam", "miles": 1 } });
        let flood = call(
            "graph_apply",
            json!({ "app": "demo/pub", "bundle": bundle }),
            OUTSIDER_CLIENT,
        );
        let answer = shed
            .mcp_request(&sam, "tools/call", "graph_apply", flood)
            .await;
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    }
    let member_s_refusal_is_kept = |after: &str| {
        let seen = shed.shed(&[
            "activity",
            "--as",
            "ada",
            "--space",
            "demo",
            "--command",
            "graph_apply",
        ]);
        assert!(
            seen.contains("@vic") && seen.contains("mcp graph_apply"),
            "vic's refusal is gone after {after}:\n{seen}"
        );
    };
    member_s_refusal_is_kept("an outsider's flood");
    let seen = shed.shed(&["activity", "--as", "ada", "--space", "demo"]);
    assert!(!seen.contains("@sam"), "{seen}");
    let ada = shed.sign_in("ada").await;
    let cookie = ada.header(&format!("{}/", shed.url()));
    let page_url = format!("{}/spaces/demo/activity", shed.url());
    let (status, _, page) = shed.get(&page_url, cookie.as_deref()).await;
    assert!(status.is_success(), "{status}: {page}");
    assert!(page.contains(MEMBER_CLIENT), "{page}");
    assert!(!page.contains(OUTSIDER_CLIENT), "{page}");
    assert!(!page.contains("@sam"), "{page}");

    // vic's own agent floods: its refusals past its rate are not kept.
    let secret = shed
        .shed(&["job", "create", "--person", "vic", "--allow", "demo/pub.*"])
        .trim()
        .to_string();
    let queue = shed.data.path().join("command-queue.sock");
    for _ in 0..FLOOD {
        let run = Request::Run(Box::new(RunRequest {
            job: Some(secret.clone()),
            command: "demo/pub.log_run".into(),
            args: a_run(),
            loom: None,
            expect: None,
            read_only: false,
            actor: None,
        }));
        let answer = shed_broker::client::ask(&queue, &run).unwrap();
        assert_eq!(answer["ok"], json!(false), "{answer}");
    }
    member_s_refusal_is_kept("his agent's flood");
    let agent = shed.shed(&[
        "activity", "--as", "ada", "--space", "demo", "--person", "vic",
    ]);
    assert!(agent.contains("agent:job-1"), "{agent}");
}
