//! Approvals: an agent's write that needs its person's approval waits
//! (a command that says `confirm`, or every write by agents once the
//! app's owner says so); the person's own writes never do; only the person
//! decides, once; approved, it runs as asked, attributed to the agent.

use serde_json::json;
use shed_host::{Caller, Door, HostError, Role};

use crate::common::{deploy, files, member, refusal, space, world};

const CONFIRMED: &str = r#"{ "log_run": {
    "description": "Log a run for the club leaderboard",
    "input": { "who": "text", "miles": "number" },
    "confirm": true,
    "apply": { "entity": { "eid": "$run" }, "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#;

const PLAIN: &str = r#"{ "log_run": {
    "description": "Log a run for the club leaderboard",
    "input": { "who": "text", "miles": "number" },
    "apply": { "entity": { "eid": "$run" }, "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#;

const VOCAB: &str = r#"{ "jog": { "who": "text", "miles": "number" } }"#;

fn agent_of(caller: &Caller) -> Caller {
    Caller::signed_in(caller.person().unwrap().clone(), Some(1), Door::Mcp)
}

/// The person at the terminal (`space` answers them as `shed mcp --as`
/// signs them in: an MCP client).
fn at_terminal(caller: &Caller) -> Caller {
    let flags = String::new();
    Caller::signed_in(
        caller.person().unwrap().clone(),
        None,
        Door::Terminal { flags },
    )
}

fn waiting(result: Result<impl std::fmt::Debug, HostError>) -> (i64, String) {
    match result {
        Err(HostError::Waiting(answer)) => (answer.data.approval, answer.text),
        other => panic!("expected a wait, got {other:?}"),
    }
}

#[tokio::test]
async fn an_agent_s_confirm_command_waits_and_runs_once_when_its_person_approves() {
    let w = world().await;
    let ada = at_terminal(&space(&w.host, "jeff", "ada").await);
    let files = files(&[("vocab.json", VOCAB), ("tools.json", CONFIRMED)]);
    deploy(
        &w.host,
        &ada,
        "jeff/runs",
        files,
        "Runs",
        shed_host::Access::Private,
    )
    .await;
    let agent = agent_of(&ada);
    let args = json!({"who": "Ada", "miles": 3});
    let listed = w.host.commands(&agent, Some("jeff/runs")).await.unwrap();
    assert!(
        listed
            .text
            .contains("— waits for your approval when an agent calls it"),
        "{}",
        listed.text
    );
    assert_eq!(listed.data_json()["commands"][0]["confirm"], true);

    let (id, text) = waiting(w.host.command(&agent, "log_run", args.clone(), None).await);
    assert_eq!(
        text,
        format!(
            "waiting for your approval: log_run with who=\"Ada\", miles=3 in jeff/runs — open \
             http://localhost:7700/approvals/{id} to approve; then ask me to check"
        )
    );
    let rows = w
        .host
        .graph_query(&ada, None, "jeff/runs", ".jog!")
        .await
        .unwrap();
    assert!(
        rows.text.contains(": 0 rows"),
        "nothing written yet: {}",
        rows.text
    );
    assert_eq!(w.host.approvals_waiting(&ada).await.unwrap(), 1);
    let asked = w.host.approval_outcome(&agent, id).await.unwrap();
    assert_eq!(asked.data.state, "waiting");

    // The person at the terminal writes without waiting.
    w.host
        .command(&ada, "log_run", args.clone(), None)
        .await
        .unwrap();

    // Another person: as if it did not exist; the agent cannot decide it.
    let bob = at_terminal(&member(&w.host, "jeff", "bob", Role::Owner).await);
    let (kind, said) = refusal(w.host.decide_approval(&bob, id, true).await);
    assert_eq!(
        (kind, said.as_str()),
        (
            "not-found",
            format!("no approval {id} of yours — your approvals are listed at /approvals").as_str()
        )
    );
    assert_eq!(
        refusal(w.host.decide_approval(&agent, id, true).await).0,
        "refused"
    );

    let approved = w.host.decide_approval(&ada, id, true).await.unwrap();
    assert!(
        approved.starts_with("approved — log_run: wrote 1 entity in jeff/runs"),
        "{approved}"
    );
    let (kind, _) = refusal(w.host.decide_approval(&ada, id, true).await);
    assert_eq!(kind, "conflict", "a second approval runs nothing");
    let rows = w
        .host
        .graph_query(&ada, None, "jeff/runs", ".jog!")
        .await
        .unwrap();
    assert!(
        rows.text.contains(": 2 rows"),
        "the person's own and the approved one, once: {}",
        rows.text
    );
    let ran = w.host.approval_outcome(&agent, id).await.unwrap();
    assert_eq!(ran.data.state, "ran");
    assert!(
        ran.text
            .starts_with(&format!("approval {id} ran: log_run: wrote 1 entity")),
        "{}",
        ran.text
    );

    // Denied: nothing runs, and the agent hears so.
    let (id, _) = waiting(w.host.command(&agent, "log_run", args, None).await);
    assert_eq!(
        w.host.decide_approval(&ada, id, false).await.unwrap(),
        "denied log_run in jeff/runs: nothing was written"
    );
    let denied = w.host.approval_outcome(&agent, id).await.unwrap();
    assert_eq!(
        denied.text,
        format!("approval {id} was denied by @ada: nothing was written")
    );
}

#[tokio::test]
async fn an_owner_says_writes_by_agents_need_approval_and_an_editor_cannot() {
    let w = world().await;
    let ada = at_terminal(&space(&w.host, "jeff", "ada").await);
    let files = files(&[("vocab.json", VOCAB), ("tools.json", PLAIN)]);
    deploy(
        &w.host,
        &ada,
        "jeff/runs",
        files,
        "Runs",
        shed_host::Access::Private,
    )
    .await;
    let agent = agent_of(&ada);
    let args = json!({"who": "Ada", "miles": 3});
    w.host
        .command(&agent, "log_run", args.clone(), None)
        .await
        .unwrap();

    let eve = at_terminal(&member(&w.host, "jeff", "eve", Role::Editor).await);
    let (kind, said) = refusal(
        w.host
            .set_agent_writes_need_approval(&eve, "jeff/runs", true)
            .await,
    );
    assert_eq!(
        (kind, said.as_str()),
        (
            "refused",
            "only an owner of jeff says whether writes by agents to jeff/runs need approval — ask an owner of jeff"
        )
    );
    // Another server, which has served the app already, reads the setting
    // again at its next call.
    let other = crate::common::open(w.dir.path()).await;
    other
        .command(&agent, "log_run", args.clone(), None)
        .await
        .unwrap();
    w.host
        .set_agent_writes_need_approval(&ada, "jeff/runs", true)
        .await
        .unwrap();
    waiting(w.host.command(&agent, "log_run", args.clone(), None).await);
    waiting(other.command(&agent, "log_run", args.clone(), None).await);
    waiting(
        w.host
            .graph_apply(
                &agent,
                "jeff/runs",
                json!({"entity": {"eid": "$r"}, "jog": {"who": "x", "miles": 1}}),
            )
            .await,
    );
    w.host
        .command(&ada, "log_run", args.clone(), None)
        .await
        .unwrap();
    w.host
        .set_agent_writes_need_approval(&ada, "jeff/runs", false)
        .await
        .unwrap();
    other
        .command(&agent, "log_run", args.clone(), None)
        .await
        .unwrap();
    w.host.command(&agent, "log_run", args, None).await.unwrap();
}
