//! Post, redirect, get: every form of the person's pages that did something
//! answers `303` to the page it belongs to, which shows what it did once
//! (a token once) — so a reload, a GET of that page, repeats nothing; a
//! notice shows only to the credential whose form made it; and a visit to
//! an address that only takes a form says what it is for and does nothing.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use shed_host::Access;

use crate::common::{Answer, PLATFORM, URL, World, form, get, world};

/// `ada` signed in (her `Cookie` header), owner of `demo` with the app
/// `demo/runs` deployed twice (v1, v2).
async fn demo(world: &World) -> String {
    let session = world.signed_in("ada").await;
    let host = &world.host;
    host.add_space("demo", "ada").await.expect("demo");
    let ada = host.caller_for_handle("ada").await.expect("ada");
    for page in ["<p>one</p>", "<p>two</p>"] {
        let files = BTreeMap::from([
            ("index.html".to_string(), page.as_bytes().to_vec()),
            (
                "vocab.json".to_string(),
                br#"{ "jog": { "who": "text" } }"#.to_vec(),
            ),
        ]);
        host.deploy_folder(&ada, "demo/runs", files, None, Some(Access::Private))
            .await
            .expect("demo/runs deploys");
    }
    format!("shed_session={session}")
}

/// The form at `path` posted with `cookie`: it went on to `to`, setting a
/// notice; that page shows `said` once and drops the notice, and a reload
/// of it shows no `said`.
async fn lands(world: &World, path: &str, cookie: &str, body: &str, to: &str, said: &str) {
    let posted = world.ask(form(path, Some(cookie), Some(URL), body)).await;
    assert_eq!(
        posted.status,
        StatusCode::SEE_OTHER,
        "{path}: {}",
        posted.body
    );
    assert_eq!(posted.headers["location"], to, "{path}");
    let notice = posted.sets_cookie("shed_notice").expect("a notice");
    let landed = world
        .ask(get(
            PLATFORM,
            to,
            Some(&format!("{cookie}; shed_notice={notice}")),
        ))
        .await;
    assert_eq!(landed.status, StatusCode::OK, "{path}: {}", landed.body);
    assert!(
        landed.body.contains(said),
        "{path}: {said}: {}",
        landed.body
    );
    assert_eq!(
        landed.sets_cookie("shed_notice").as_deref(),
        Some(""),
        "{path}: the notice is dropped once shown"
    );
    let reloaded = world.ask(get(PLATFORM, to, Some(cookie))).await;
    assert_eq!(reloaded.status, StatusCode::OK, "{path}");
    assert!(!reloaded.body.contains(said), "{path}: {}", reloaded.body);
}

#[tokio::test]
async fn every_form_that_did_something_goes_on_to_its_page_and_says_so_once() {
    let world = world().await;
    let ada = demo(&world).await;
    lands(
        &world,
        "/account/tokens",
        &ada,
        "name=laptop",
        "/",
        "Your token laptop",
    )
    .await;
    assert_eq!(world.tokens("ada").await, 1, "a reload makes no token");
    let token = world
        .host
        .own_tokens(&world.host.caller_for_handle("ada").await.expect("ada"))
        .await
        .expect("ada's tokens")[0]
        .id
        .to_string();
    lands(
        &world,
        "/account/tokens/revoke",
        &ada,
        &format!("id={token}"),
        "/account",
        "it is refused from its next request on",
    )
    .await;
    lands(
        &world,
        "/spaces/demo",
        &ada,
        "handle=bob&role=viewer",
        "/spaces/demo",
        "@bob is new here, added as viewer",
    )
    .await;
    lands(
        &world,
        "/spaces/demo/remove",
        &ada,
        "handle=bob",
        "/spaces/demo",
        "@bob (viewer) is no longer a member of demo.",
    )
    .await;
    let app = "/spaces/demo/apps/runs";
    lands(
        &world,
        &format!("{app}/rollback"),
        &ada,
        "version=1",
        app,
        "rolled demo/runs back to v1: now v3",
    )
    .await;
    let trashed = "demo/runs is in the trash: its commands";
    lands(&world, &format!("{app}/trash"), &ada, "", app, trashed).await;
    let restored = "demo/runs is out of the trash";
    lands(&world, &format!("{app}/restore"), &ada, "", app, restored).await;
    world
        .host
        .create_job("ada", Vec::new(), Vec::new(), None)
        .await
        .expect("a job");
    lands(
        &world,
        "/agents/end",
        &ada,
        "job=job-1",
        "/agents",
        "Ended job-1: its agent runs nothing more.",
    )
    .await;
    let page = world.ask(get(PLATFORM, app, Some(&ada))).await.body;
    assert!(
        page.contains("v3") && !page.contains("v4"),
        "one rollback: {page}"
    );
}

#[tokio::test]
async fn a_refused_form_answers_its_page_at_once_and_changes_nothing() {
    let world = world().await;
    let ada = demo(&world).await;
    let refused = world
        .submit("/spaces/demo/apps/runs/rollback", &ada, "version=9")
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("role=\"alert\""), "{}", refused.body);
    assert_eq!(refused.sets_cookie("shed_notice"), None);
}

#[tokio::test]
async fn a_notice_shows_only_to_the_credential_its_form_came_on() {
    let world = world().await;
    let ada = demo(&world).await;
    let bob = format!("shed_session={}", world.signed_in("bob").await);
    let posted = world
        .ask(form(
            "/account/tokens",
            Some(&ada),
            Some(URL),
            "name=laptop",
        ))
        .await;
    let notice = posted.sets_cookie("shed_notice").expect("a notice");
    let theirs = world
        .ask(get(
            PLATFORM,
            "/",
            Some(&format!("{bob}; shed_notice={notice}")),
        ))
        .await;
    assert!(!theirs.body.contains("Your token"), "{}", theirs.body);
    // One planted by a page elsewhere, with a tag of its own making.
    let planted = format!(
        "{ada}; shed_notice={}~evil-token~Your%20token%20evil",
        "0".repeat(64)
    );
    let shown = world.ask(get(PLATFORM, "/", Some(&planted))).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert!(!shown.body.contains("evil"), "{}", shown.body);
}

#[tokio::test]
async fn a_visit_to_an_address_that_takes_only_a_form_says_what_it_is_for() {
    let world = world().await;
    let ada = demo(&world).await;
    for (path, said, back) in [
        ("/account/tokens", "makes a token", "href=\"/\""),
        (
            "/account/tokens/revoke",
            "revokes a token",
            "href=\"/account\"",
        ),
        ("/account/sign-out", "signs you out", "href=\"/\""),
        ("/account/sessions/end", "signs one", "href=\"/account\""),
        (
            "/account/passkeys/remove",
            "removes a passkey",
            "href=\"/account\"",
        ),
        (
            "/spaces/demo/remove",
            "takes a member out",
            "href=\"/spaces/demo\"",
        ),
        ("/agents/end", "ends a job", "href=\"/agents\""),
        (
            "/spaces/demo/apps/runs/data/abc/undo",
            "undoes a write",
            "href=\"/spaces/demo/apps/runs/data/abc\"",
        ),
        (
            "/spaces/demo/apps/runs/rollback",
            "rolls an app back",
            "href=\"/spaces/demo/apps/runs\"",
        ),
        (
            "/spaces/demo/apps/runs/trash",
            "in the trash",
            "href=\"/spaces/demo/apps/runs\"",
        ),
        (
            "/spaces/demo/apps/runs/restore",
            "restores an app",
            "href=\"/spaces/demo/apps/runs\"",
        ),
        (
            "/spaces/demo/apps/runs/purge",
            "deletes an app for good",
            "href=\"/spaces/demo/apps/runs\"",
        ),
    ] {
        for cookie in [Some(ada.as_str()), None] {
            let visit: Answer = world.ask(get(PLATFORM, path, cookie)).await;
            assert_eq!(visit.status, StatusCode::METHOD_NOT_ALLOWED, "{path}");
            assert_eq!(visit.headers["allow"], "POST", "{path}");
            assert!(
                visit.body.contains(said) && visit.body.contains(back),
                "{path}: {}",
                visit.body
            );
        }
    }
    let page = world
        .ask(get(PLATFORM, "/spaces/demo/apps/runs", Some(&ada)))
        .await;
    assert!(!page.body.contains("in the trash"), "{}", page.body);
}

#[tokio::test]
async fn a_refused_invite_keeps_what_was_typed() {
    let world = world().await;
    let ada = demo(&world).await;
    let refused = world
        .submit("/spaces/demo", &ada, "handle=Pat+Smith&role=viewer")
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("role=\"alert\""), "{}", refused.body);
    assert!(
        refused.body.contains("value=\"Pat Smith\"")
            && refused.body.contains("<option selected>viewer</option>"),
        "{}",
        refused.body
    );
    let again = world.ask(get(PLATFORM, "/spaces/demo", Some(&ada))).await;
    assert!(
        !again.body.contains("Pat Smith"),
        "kept only on the refusal"
    );
}

#[tokio::test]
async fn a_trashed_app_s_page_names_its_own_buttons_and_no_version_answers() {
    let world = world().await;
    let ada = demo(&world).await;
    let app = "/spaces/demo/apps/runs";
    let trashed = world.submit(&format!("{app}/trash"), &ada, "").await;
    assert_eq!(trashed.status, StatusCode::OK, "{}", trashed.body);
    assert!(
        trashed
            .body
            .contains("restore it to bring it all back (with Restore on this page)")
            && trashed.body.contains("(with Purge on this page)"),
        "{}",
        trashed.body
    );
    assert!(
        !trashed.body.contains(&format!("{URL}{app}")),
        "{}",
        trashed.body
    );
    assert!(!trashed.body.contains(">answering<"), "{}", trashed.body);
    let restored = world.submit(&format!("{app}/restore"), &ada, "").await;
    assert!(restored.body.contains(">answering<"), "{}", restored.body);
}
