//! `shed undo` and `shed entity`, black-box: a write made over MCP while
//! `shed serve` answers, undone from the terminal as the rule book lets —
//! a viewer refused with its sentence, an outsider as for an app nobody
//! made — the undo in the entity's history, field before → after, itself
//! undoable; a write changed since refused, nothing written.

use serde_json::{Value, json};

use crate::web_door::Shed;

/// The miles of the run `eid` of demo/runs, read over MCP as `token`.
async fn miles(shed: &Shed, token: &str, eid: &str) -> Value {
    let line = json!({ "app": "demo/runs", "filter": format!("eid={eid}&.jog!") });
    let (error, read) = shed.mcp(token, "graph_query", line).await;
    assert!(!error, "{read}");
    read["rows"][0]["jog"]["miles"].clone()
}

#[tokio::test]
async fn shed_undo_takes_a_write_back_and_the_history_says_so() {
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let log_run = json!({ "name": "log_run", "app": "demo/runs",
                          "args": { "who": "Ed", "miles": 5, "at": "2026-09-01" } });
    let (error, logged) = shed.mcp(&token, "command", log_run).await;
    assert!(!error, "{logged}");
    let eid = logged["entities"][0].as_str().unwrap().to_string();
    let edit = json!({ "app": "demo/runs",
                       "bundle": { "entity": { "eid": eid }, "jog": { "miles": 50 } } });
    let (error, edited) = shed.mcp(&token, "graph_apply", edit).await;
    assert!(!error, "{edited}");
    assert_eq!(edited["version"], 2, "the edit is demo/runs@2");

    // The rule book: a viewer is refused, an outsider told what a made-up
    // app's name gets; nothing is undone.
    assert_eq!(
        shed.refused(&["undo", "demo/runs@2", "--as", "vic"]),
        "you can read this app but not change it — its owner can make you an editor"
    );
    assert_eq!(
        shed.refused(&["undo", "demo/runs@2", "--as", "sam"]),
        shed.refused(&["undo", "demo/nothing@2", "--as", "sam"])
            .replace("nothing", "runs")
    );
    assert_eq!(
        shed.refused(&["undo", "demo/runs", "--as", "ada"]),
        "demo/runs is not a write — name one as <space>/<app>@<version>, as its activity and \
         its entities' history do (e.g. jeff/runs@12)"
    );

    let said = shed.shed(&["undo", "demo/runs@2", "--as", "ada"]);
    assert_eq!(
        said.trim(),
        "undid demo/runs@2: 1 entity back as they were (demo/runs@3)"
    );
    assert_eq!(miles(&shed, &token, &eid).await, 5, "the old value is back");

    let history = shed.shed(&["entity", "demo/runs", &eid, "--as", "vic"]);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(
        lines[0],
        format!("demo/runs: {eid} at version 3 — 3 versions, 0 edges out, 0 in")
    );
    assert!(
        lines[1].starts_with("version 3 — demo/runs@3 at ")
            && lines[1].ends_with(
                " by @ada (undo of demo/runs@2) through terminal undo: jog.miles 50 → 5"
            ),
        "{history}"
    );
    assert!(
        lines[2].ends_with(" by @ed through mcp graph_apply: jog.miles 5 → 50"),
        "{history}"
    );
    assert!(
        lines[3].contains(" by @ed through mcp log_run: "),
        "{history}"
    );

    // The undo undone, by an editor: the edit's value again.
    let again = shed.shed(&["undo", "demo/runs@3", "--as", "ed"]);
    assert_eq!(
        again.trim(),
        "undid demo/runs@3: 1 entity back as they were (demo/runs@4)"
    );
    assert_eq!(miles(&shed, &token, &eid).await, 50);

    // The first write, its entity not as it left it: refused, naming the
    // entity by its title and the latest write of it, its time relative
    // to now; nothing written.
    let refused = shed.refused(&["undo", "demo/runs@1", "--as", "ada"]);
    assert_eq!(
        refused,
        "cannot undo demo/runs@1: \"Run by Ed\" changed since — @ed (undo of demo/runs@3) wrote \
         it just now (demo/runs@4); undo that first"
    );
    assert_eq!(miles(&shed, &token, &eid).await, 50, "nothing written");
}

/// Issue 34, finding 6: of 60 undos of one write posted at once on the
/// activity page, exactly one undoes it; every other reads that it is
/// undone already, by the winner's undo — never a false "no entity".
#[tokio::test]
async fn of_sixty_concurrent_undos_one_wins_and_every_other_reads_the_conflict() {
    const UNDOS: usize = 60;
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let log_run = json!({ "name": "log_run", "app": "demo/runs",
                          "args": { "who": "Ed", "miles": 5, "at": "2026-09-01" } });
    let (error, logged) = shed.mcp(&token, "command", log_run).await;
    assert!(!error, "{logged}");
    let jar = shed.sign_in("ada").await;
    let page = format!("{}/spaces/demo/apps/runs/activity", shed.url());
    let cookie = jar
        .header(&page)
        .expect("a cookie for the platform's pages");

    let mut posts = tokio::task::JoinSet::new();
    for _ in 0..UNDOS {
        let request = shed
            .http
            .post(&page)
            .header(reqwest::header::ORIGIN, shed.url())
            .header(reqwest::header::COOKIE, &cookie)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body("write=demo%2Fruns%401");
        posts.spawn(async move { request.send().await.unwrap() });
    }
    let mut answers = Vec::new();
    for answer in posts.join_all().await {
        answers.push(shed.landed(answer, &cookie).await);
    }
    // The one that did it went on to the page (a 303, followed here).
    let won: Vec<_> = answers
        .iter()
        .filter(|(status, _)| *status == reqwest::StatusCode::OK)
        .collect();
    assert_eq!(won.len(), 1, "exactly one undoes it: {answers:?}");
    assert!(
        won[0]
            .1
            .contains("undid demo/runs@1: 1 entity back as they were (demo/runs@2)"),
        "{}",
        won[0].1
    );
    for (status, page) in answers
        .iter()
        .filter(|(status, _)| *status != reqwest::StatusCode::OK)
    {
        assert_eq!(*status, reqwest::StatusCode::CONFLICT, "{page}");
        assert!(
            page.contains(
                "cannot undo demo/runs@1: already undone by demo/runs@2 — undo demo/runs@2 to \
                 bring it back"
            ),
            "{page}"
        );
    }
}
