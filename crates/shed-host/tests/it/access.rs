//! The access table, every cell: private, public and open apps × owner,
//! editor, viewer, a person outside the space, and nobody signed in × read
//! and write — through the graph tools (which name any app) and through
//! commands (which reach only the apps of the caller's own spaces).

use crate::common;

use common::*;
use serde_json::{Value, json};
use shed_host::{Access, Caller, Host, HostError, Role, VIEWER_SENTENCE};

const VOCAB: &str = r#"{ "note": { "text": "text" } }"#;
const TOOLS: &str = r#"{
  "jot": { "description": "Jot a note", "input": { "text": "text" },
           "apply": { "entity": { "eid": "$n" }, "note": { "text": "{{text}}" } } },
  "notes": { "description": "Every note", "input": {}, "query": ".note!" } }"#;

/// jeff's owner, editor and viewer, and somebody of another space.
pub(crate) struct Cast {
    pub(crate) owner: Caller,
    pub(crate) editor: Caller,
    pub(crate) viewer: Caller,
    pub(crate) stranger: Caller,
}

/// jeff/private, jeff/public and jeff/open, notes apps, and [`Cast`].
pub(crate) async fn cast(host: &Host) -> Cast {
    let owner = space(host, "jeff", "jeff").await;
    let editor = member(host, "jeff", "ed", Role::Editor).await;
    let viewer = member(host, "jeff", "vi", Role::Viewer).await;
    let stranger = space(host, "elsewhere", "stranger").await;
    for access in [Access::Private, Access::Public, Access::Open] {
        let app = format!("jeff/{access}");
        deploy(
            host,
            &owner,
            &app,
            files(&[("vocab.json", VOCAB), ("tools.json", TOOLS)]),
            "Notes",
            access,
        )
        .await;
    }
    Cast {
        owner,
        editor,
        viewer,
        stranger,
    }
}

/// "ok", or the kind of refusal and its sentence.
fn outcome<T>(result: Result<shed_host::Answer<T>, HostError>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => {
            let kind = match &e {
                HostError::SignIn(_) => "sign-in",
                HostError::Refused(_) => "refused",
                HostError::NotFound(_) => "not-found",
                HostError::BadInput(_) => "bad-input",
                HostError::Conflict(_) | HostError::ChangedSince(_) => "conflict",
                HostError::Busy(_) => "busy",
                HostError::Waiting(_) => "waiting",
                HostError::Internal(_) => "internal",
            };
            format!("{kind}: {e}")
        }
    }
}

const SIGN_IN: &str = "sign-in: sign in first — send a bearer token from `shed token create <handle>` in the Authorization header, or run `shed mcp --as <handle>` over stdio";

fn bundle() -> Value {
    json!({ "entity": { "eid": "$n" }, "note": { "text": "hi" } })
}

#[tokio::test]
async fn every_cell_of_the_access_table_through_the_graph_tools_exactly() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let viewer = format!("refused: {VIEWER_SENTENCE}");
    let public_stranger = "refused: jeff/public is public: anyone reads it, and only the owners and editors of jeff change it — an owner of jeff can add you";
    let hidden = "not-found: no app jeff/private";
    // (access, who, read, write)
    let table: Vec<(&str, &Caller, &str, &str)> = vec![
        ("private", &c.owner, "ok", "ok"),
        ("private", &c.editor, "ok", "ok"),
        ("private", &c.viewer, "ok", &viewer),
        ("private", &c.stranger, hidden, hidden),
        ("private", &Caller::Nobody, SIGN_IN, SIGN_IN),
        ("public", &c.owner, "ok", "ok"),
        ("public", &c.editor, "ok", "ok"),
        ("public", &c.viewer, "ok", &viewer),
        ("public", &c.stranger, "ok", public_stranger),
        ("public", &Caller::Nobody, "ok", SIGN_IN),
        ("open", &c.owner, "ok", "ok"),
        ("open", &c.editor, "ok", "ok"),
        ("open", &c.viewer, "ok", "ok"),
        ("open", &c.stranger, "ok", "ok"),
        ("open", &Caller::Nobody, "ok", SIGN_IN),
    ];
    for (access, who, read, write) in table {
        let app = format!("jeff/{access}");
        let got_read = outcome(host.graph_query(who, None, &app, ".note!").await);
        let got_write = outcome(host.graph_apply(who, &app, bundle()).await);
        let cell = format!("{access} × {who:?}");
        assert!(got_read.starts_with(read), "{cell} read: {got_read}");
        assert!(got_write.starts_with(write), "{cell} write: {got_write}");
    }
    // Every write that was let through was kept, by its writer.
    let rows = host
        .graph_query(&c.owner, None, "jeff/open", ".note!&.created!")
        .await
        .unwrap();
    let rows_json = rows.data_json();
    let writers: Vec<&str> = rows_json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["created"]["by"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(writers.len(), 4);
    for who in ["jeff", "ed", "vi", "stranger"] {
        assert!(writers.contains(&who), "{who} in {writers:?}");
    }
    let private = host
        .graph_query(&c.viewer, None, "jeff/private", ".note!")
        .await
        .unwrap();
    assert_eq!(private.text, "jeff/private: 2 rows");
}

#[tokio::test]
async fn nobody_learns_a_private_app_exists_from_outside_its_space() {
    let w = world().await;
    let c = cast(&w.host).await;
    for (who, sentence) in [
        (&Caller::Nobody, SIGN_IN),
        (&c.stranger, "not-found: no app jeff/"),
    ] {
        let private = outcome(
            w.host
                .graph_query(who, None, "jeff/private", ".note!")
                .await,
        );
        let missing = outcome(
            w.host
                .graph_query(who, None, "jeff/nothing", ".note!")
                .await,
        );
        assert!(private.starts_with(sentence), "{private}");
        assert_eq!(private.replace("private", "nothing"), missing);
    }
}

#[tokio::test]
async fn every_cell_of_the_access_table_through_commands() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let viewer = format!("refused: {VIEWER_SENTENCE}");
    let not_here =
        "not-found: no app {app} in your spaces — they have no apps yet; app_deploy makes one";
    let table: Vec<(&str, &Caller, &str, &str)> = vec![
        ("private", &c.owner, "ok", "ok"),
        ("private", &c.editor, "ok", "ok"),
        ("private", &c.viewer, "ok", &viewer),
        ("private", &c.stranger, not_here, not_here),
        ("private", &Caller::Nobody, SIGN_IN, SIGN_IN),
        ("public", &c.owner, "ok", "ok"),
        ("public", &c.editor, "ok", "ok"),
        ("public", &c.viewer, "ok", &viewer),
        ("public", &c.stranger, not_here, not_here),
        ("public", &Caller::Nobody, SIGN_IN, SIGN_IN),
        ("open", &c.owner, "ok", "ok"),
        ("open", &c.editor, "ok", "ok"),
        ("open", &c.viewer, "ok", "ok"),
        ("open", &c.stranger, not_here, not_here),
        ("open", &Caller::Nobody, SIGN_IN, SIGN_IN),
    ];
    for (access, who, read, write) in table {
        let app = format!("jeff/{access}");
        let got_read = outcome(host.command(who, "notes", json!({}), Some(&app)).await);
        let got_write = outcome(
            host.command(who, "jot", json!({ "text": "hi" }), Some(&app))
                .await,
        );
        let cell = format!("{access} × {who:?}");
        assert_eq!(got_read, read.replace("{app}", &app), "{cell} read");
        assert_eq!(got_write, write.replace("{app}", &app), "{cell} write");
    }
}

#[tokio::test]
async fn a_public_app_in_another_space_is_not_among_a_strangers_commands() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let listed = host.commands(&c.stranger, None).await.unwrap();
    assert_eq!(listed.data_json()["commands"], json!([]));
    let (kind, sentence) = refusal(
        host.command(&c.stranger, "jot", json!({ "text": "hi" }), None)
            .await,
    );
    assert_eq!(kind, "not-found");
    assert_eq!(
        sentence,
        "no command jot — the apps in your spaces offer no commands yet; app_deploy puts an app in a space you edit"
    );
    assert!(host.views(&c.stranger).await.unwrap().is_empty());
    // The members see all three apps, and jot is in each: say which.
    let (kind, sentence) = refusal(
        host.command(&c.viewer, "jot", json!({ "text": "hi" }), None)
            .await,
    );
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "bad-input",
            "jot is a command of jeff/open, jeff/private and jeff/public — say which app"
        )
    );
}

#[tokio::test]
async fn only_owners_and_editors_deploy_and_write_files() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let app_files = || files(&[("index.html", "<p>hi</p>")]);
    for who in [&c.owner, &c.editor] {
        host.deploy_folder(who, "jeff/page", app_files(), None, None)
            .await
            .unwrap();
    }
    let (kind, sentence) = refusal(
        host.deploy_folder(&c.viewer, "jeff/page", app_files(), None, None)
            .await,
    );
    assert_eq!((kind, sentence.as_str()), ("refused", VIEWER_SENTENCE));
    // Somebody outside jeff reads what they would for a space nobody made.
    let mut answers = Vec::new();
    for space in ["jeff", "nosuch"] {
        let (kind, sentence) = refusal(
            host.deploy_folder(
                &c.stranger,
                &format!("{space}/page"),
                app_files(),
                None,
                None,
            )
            .await,
        );
        answers.push((kind, sentence.replace(space, "<space>")));
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(
        answers[0],
        (
            "not-found",
            "<space> is not a space you own or edit — `spaces` lists the spaces you belong to, and \
             an owner of a space can add you as an editor"
                .to_string()
        )
    );
    let write = [("index.html".to_string(), Some("<p>new</p>".to_string()))]
        .into_iter()
        .collect();
    let (kind, sentence) = refusal(host.app_files(&c.viewer, "jeff/page", write, vec![]).await);
    assert_eq!((kind, sentence.as_str()), ("refused", VIEWER_SENTENCE));
    // A viewer reads the files; a stranger does not learn the app is there.
    let listed = host
        .app_files(
            &c.viewer,
            "jeff/page",
            Default::default(),
            vec!["index.html".into()],
        )
        .await
        .unwrap();
    assert_eq!(listed.text, "--- index.html ---\n<p>hi</p>");
    let (kind, _) = refusal(
        host.app_files(&c.stranger, "jeff/page", Default::default(), vec![])
            .await,
    );
    assert_eq!(kind, "not-found");
}

#[tokio::test]
async fn only_an_owner_changes_who_may_read_an_app() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let app_files = || files(&[("index.html", "<p>hi</p>")]);
    let (kind, sentence) = refusal(
        host.deploy_folder(
            &c.editor,
            "jeff/private",
            app_files(),
            None,
            Some(Access::Public),
        )
        .await,
    );
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "refused",
            "only an owner of jeff changes who may read jeff/private (it is private) — deploy \
             without an access to keep it private, or ask an owner of jeff"
        )
    );
    let spaces = host.spaces(&c.owner).await.unwrap().text;
    assert!(
        spaces.contains("jeff/private — Notes, private, v1"),
        "{spaces}"
    );
    // Asking for the access it has, or none, keeps it; an owner changes it;
    // an editor's new app is theirs to open.
    for access in [Some(Access::Private), None] {
        host.deploy_folder(&c.editor, "jeff/private", app_files(), None, access)
            .await
            .unwrap();
    }
    host.deploy_folder(
        &c.editor,
        "jeff/fresh",
        app_files(),
        None,
        Some(Access::Open),
    )
    .await
    .unwrap();
    let answer = host
        .deploy_folder(
            &c.owner,
            "jeff/private",
            app_files(),
            None,
            Some(Access::Public),
        )
        .await
        .unwrap();
    assert_eq!(answer.data_json()["access"], "public");
}
