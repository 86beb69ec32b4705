//! The built-ins whose declarations keep them from a broker-stamped agent do
//! something real for the callers they name: a person, a pattern, a consent.

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use shed_host::agents::{AgentCall, Origin};
use shed_host::{Caller, Host, HostConfig, HostError};

async fn host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::open(HostConfig {
        data_dir: dir.path().join("d"),
        public_url: "http://localhost:7700".into(),
        database: None,
    })
    .await
    .unwrap();
    host.add_person("ada", Some("Ada")).await.unwrap();
    host.add_person("bob", Some("Bob")).await.unwrap();
    host.add_space("demo", "ada").await.unwrap();
    let files: BTreeMap<String, Vec<u8>> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| {
                (
                    e.file_name().to_string_lossy().to_string(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
    let ada = host.caller_for_handle("ada").await.unwrap();
    host.deploy_folder(&ada, "demo/runs", files, None, None)
        .await
        .unwrap();
    (dir, host)
}

fn call(name: &str, args: Value, loom: Option<&str>, origin: Origin) -> AgentCall {
    AgentCall {
        name: name.into(),
        args,
        loom: loom.map(str::to_string),
        expect: None,
        origin,
        consented: Vec::new(),
    }
}

#[tokio::test]
async fn a_person_invites_where_their_agent_may_not() {
    let (_dir, host) = host().await;
    let job = host
        .create_job("ada", vec!["*".into()], vec![], None)
        .await
        .unwrap()
        .job;
    let invite = call(
        "space.invite",
        json!({"space": "demo", "handle": "bob", "role": "editor"}),
        None,
        Origin::Session,
    );
    let by_agent = host.agent_run(&job.caller(), &invite).await;
    assert!(
        matches!(by_agent.answer, Err(HostError::Refused(ref s)) if s.contains("run by a person")),
        "{:?}",
        by_agent.answer
    );
    let bob = host.caller_for_handle("bob").await.unwrap();
    assert_eq!(
        host.spaces(&bob).await.unwrap().data_json()["spaces"],
        json!([])
    );

    let ada = host.caller_for_handle("ada").await.unwrap();
    let by_person = host.agent_run(&ada, &invite).await;
    assert_eq!(
        by_person.answer.unwrap().text,
        "space.invite: bob is now an editor of demo"
    );
    assert_eq!(
        host.spaces(&bob).await.unwrap().data_json()["spaces"][0]["role"],
        "editor"
    );
    // Bob, now an editor but not an owner, may not invite.
    let again = host.agent_run(&bob, &invite).await;
    assert!(matches!(again.answer, Err(HostError::Refused(_))));
}

#[tokio::test]
async fn a_pattern_comments_and_a_consent_makes_a_token() {
    let (_dir, host) = host().await;
    let ada = host.caller_for_handle("ada").await.unwrap();
    let written = host
        .agent_run(
            &ada,
            &call(
                "graph.apply",
                json!({"bundle": {"entity": {"eid": "$t"}, "doc": {"title": "a run"}}}),
                Some("demo/runs"),
                Origin::Session,
            ),
        )
        .await;
    let target = written.answer.unwrap().data_json()["aliases"]["$t"]
        .as_str()
        .unwrap()
        .to_string();

    let comment = call(
        "doc.comment",
        json!({"target": target, "body": "nice"}),
        Some("demo/runs"),
        Origin::Session,
    );
    assert!(matches!(
        host.agent_run(&ada, &comment).await.answer,
        Err(HostError::Refused(_))
    ));
    let from_pattern = host
        .agent_run(
            &ada,
            &AgentCall {
                origin: Origin::Pattern,
                ..comment
            },
        )
        .await;
    assert_eq!(
        from_pattern.answer.unwrap().data_json()["entities"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(from_pattern.version, Some(2));

    let token = call("token.create", json!({}), None, Origin::Session);
    assert!(
        matches!(host.agent_run(&ada, &token).await.answer, Err(HostError::Refused(ref s)) if s.contains("consent"))
    );
    let consented = AgentCall {
        consented: vec!["token.create".into()],
        ..token
    };
    let made = host.agent_run(&ada, &consented).await.answer.unwrap();
    let signed_in = host
        .caller_for_token(made.data_json()["token"].as_str().unwrap())
        .await
        .unwrap();
    assert!(matches!(signed_in, Caller::Person { ref person, .. } if person.handle == "ada"));
}
