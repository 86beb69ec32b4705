//! The person's pages on the platform host, as a browser posts their forms:
//! a form sent from another origin (or saying none) is refused with 403 and
//! changes nothing; the last owner of a space is neither removed nor
//! demoted; a viewer's invite gets the rule book's sentence; an owner's
//! invite of a new handle adds the person and gives a working sign-in link;
//! a person revokes only their own tokens. An app's page shows a viewer its
//! versions and no button, and refuses their post with the rule book's
//! sentence; a purge without the app's typed name is refused and deletes
//! nothing.

use reqwest::StatusCode;
use reqwest::header;

use crate::web_door::Shed;

/// Posts `form` to `path` on the platform host with `cookie`, from the page
/// of `origin` (`None`: a request that says no origin): status and the
/// page it lands on.
async fn post(
    shed: &Shed,
    path: &str,
    form: &str,
    cookie: &str,
    origin: Option<&str>,
) -> (StatusCode, String) {
    let mut request = shed
        .http
        .post(format!("{}{path}", shed.url()))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, cookie)
        .body(form.to_string());
    if let Some(origin) = origin {
        request = request.header(header::ORIGIN, origin);
    }
    let response = request.send().await.unwrap();
    shed.landed(response, cookie).await
}

/// The platform host's session cookie after signing `handle` in.
async fn platform_cookie(shed: &Shed, handle: &str) -> String {
    let jar = shed.sign_in(handle).await;
    jar.header(&format!("{}/", shed.url()))
        .expect("a cookie for the platform's host")
}

#[tokio::test]
async fn a_form_from_another_origin_is_refused_and_changes_nothing() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let own = shed.url();
    let members = shed.shed(&["member", "list", "demo"]);
    let people = shed.shed(&["person", "list"]);
    let tokens = shed.shed(&["token", "list"]);
    let versions = shed.shed(&["app", "versions", "demo/runs", "--as", "ada"]);
    let apps = shed.shed(&["app", "list", "--as", "ada"]);
    let (_, _, account) = shed.get(&format!("{own}/account"), Some(&ada)).await;
    let session = account
        .split_once("data-session=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(id, _)| format!("session={id}"))
        .expect("the account page lists this browser's session");
    let evil = "http://evil.localhost:1";
    for origin in [Some(evil), Some(shed.origin().as_str()), Some("null"), None] {
        for (path, form) in [
            ("/spaces/demo", "handle=zed&role=owner"),
            ("/spaces/demo/remove", "handle=ed"),
            ("/account/tokens", "name=stolen"),
            ("/account/tokens/revoke", "id=1"),
            ("/agents/end", "job=job-1"),
            ("/account/sign-out", ""),
            ("/account/sessions/end", session.as_str()),
            ("/spaces/demo/apps/runs/rollback", "version=1"),
            ("/spaces/demo/apps/runs/trash", ""),
            ("/spaces/demo/apps/pub/restore", ""),
            ("/spaces/demo/apps/pub/purge", "confirm=demo%2Fpub"),
        ] {
            let (status, page) = post(&shed, path, form, &ada, origin).await;
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{path} from {origin:?}: {page}"
            );
            assert!(
                page.contains("take a form only from their own pages")
                    && page.contains("nothing was changed"),
                "{page}"
            );
        }
    }
    assert_eq!(shed.shed(&["member", "list", "demo"]), members);
    assert_eq!(shed.shed(&["person", "list"]), people);
    assert_eq!(shed.shed(&["token", "list"]), tokens);
    assert_eq!(
        shed.shed(&["app", "versions", "demo/runs", "--as", "ada"]),
        versions
    );
    assert_eq!(shed.shed(&["app", "list", "--as", "ada"]), apps);
    // Still signed in: the sign-outs were refused too.
    let (status, _, home) = shed.get(&format!("{own}/"), Some(&ada)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(home.contains("You are signed in as @ada."), "{home}");
}

#[tokio::test]
async fn the_last_owner_stays_and_only_an_owner_invites() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let own = shed.url();
    let from = Some(own.as_str());
    let last = "the last owner of demo is @ada, and a space keeps at least one";
    let (status, page) = post(&shed, "/spaces/demo/remove", "handle=ada", &ada, from).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains(last), "{page}");
    for role in ["editor", "viewer"] {
        let form = format!("handle=ada&role={role}");
        let (status, page) = post(&shed, "/spaces/demo", &form, &ada, from).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
        assert!(page.contains(last), "{page}");
    }
    assert!(shed.shed(&["member", "list", "demo"]).contains("ada"));
    let (_, _, space) = shed.get(&format!("{own}/spaces/demo"), Some(&ada)).await;
    assert!(
        space.contains("data-member=\"ada\"") && space.contains(">owner<"),
        "{space}"
    );

    // The CLI says the same of a demotion.
    let said = shed.refused(&["member", "add", "demo", "ada", "--role", "viewer"]);
    assert!(said.contains(last), "{said}");

    // Bad input: a sentence, nothing changed.
    let (status, page) = post(&shed, "/spaces/demo", "handle=zed&role=boss", &ada, from).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    let (status, page) = post(&shed, "/spaces/demo", "role=editor", &ada, from).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(
        page.contains("the form is missing the person&#39;s handle"),
        "{page}"
    );
    let (status, page) = post(
        &shed,
        "/spaces/demo",
        "handle=Not+A+Handle&role=editor",
        &ada,
        from,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");

    // With a second owner, the first may step down.
    let (status, page) = post(&shed, "/spaces/demo", "handle=ed&role=owner", &ada, from).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let (status, page) = post(&shed, "/spaces/demo", "handle=ada&role=editor", &ada, from).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("@ada is now editor of demo"), "{page}");

    // A viewer gets the rule book's sentence, and nobody is added.
    let vic = platform_cookie(&shed, "vic").await;
    let (status, page) = post(&shed, "/spaces/demo", "handle=zed&role=editor", &vic, from).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(
        page.contains("only an owner of demo invites people to it"),
        "{page}"
    );
    let (status, page) = post(&shed, "/spaces/demo/remove", "handle=ed", &vic, from).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(
        page.contains("only an owner of demo takes people out of it"),
        "{page}"
    );
    assert!(!shed.shed(&["person", "list"]).contains("zed"));

    assert!(!shed.shed(&["person", "list"]).contains("zed"));
}

/// The row of member `handle` on a space's page.
fn member_row<'p>(page: &'p str, handle: &str) -> &'p str {
    page.split_once(&format!("data-member=\"{handle}\""))
        .and_then(|(_, rest)| rest.split("</li>").next())
        .unwrap_or_else(|| panic!("no row of {handle} in {page}"))
}

#[tokio::test]
async fn a_space_page_offers_only_what_the_rule_book_allows() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let own = shed.url();
    let from = Some(own.as_str());
    let space = format!("{own}/spaces/demo");
    let (status, _, page) = shed.get(&space, Some(&ada)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    // The sole owner's own row offers neither Remove nor Change role, and
    // says why; every other member's offers both.
    let mine = member_row(&page, "ada");
    assert!(
        !mine.contains("Remove") && !mine.contains("Change role"),
        "{mine}"
    );
    assert!(mine.contains("the last owner"), "{mine}");
    for other in ["ed", "vic"] {
        let row = member_row(&page, other);
        assert!(
            row.contains("Remove") && row.contains("Change role"),
            "{row}"
        );
    }
    // The handle field takes as much as a handle may be.
    assert!(
        page.contains("<input name=\"handle\" required maxlength=\"40\""),
        "{page}"
    );
    // With a second owner, both are offered to each.
    let (status, page) = post(&shed, "/spaces/demo", "handle=ed&role=owner", &ada, from).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for owner in ["ada", "ed"] {
        let row = member_row(&page, owner);
        assert!(
            row.contains("Remove") && row.contains("Change role"),
            "{row}"
        );
    }
}

#[tokio::test]
async fn an_owner_invites_a_new_handle_and_gets_a_link_that_signs_them_in() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let own = shed.url();
    let (status, page) = post(
        &shed,
        "/spaces/demo",
        "handle=zed&role=viewer",
        &ada,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let link = page
        .split("<code id=\"invite-link\">")
        .nth(1)
        .and_then(|rest| rest.split("</code>").next())
        .expect("a sign-in link on the page")
        .replace("&amp;", "&");
    let (status, _, asked) = shed.get(&link, None).await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert!(asked.contains("Sign in to shed as zed (@zed)"), "{asked}");
    assert!(shed.shed(&["member", "list", "demo"]).contains("zed"));

    // A person who was here before gets no link: it would sign in as them.
    let (status, page) = post(
        &shed,
        "/spaces/demo",
        "handle=sam&role=viewer",
        &ada,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        !page.contains("invite-link") && page.contains("@sam is now viewer of demo"),
        "{page}"
    );
}

#[tokio::test]
async fn a_person_revokes_their_own_tokens_only() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let own = shed.url();
    shed.token("ed");
    let eds = shed.shed(&["token", "list", "ed"]);
    let ed_id = crate::cli_lists::rows(&eds)[0][0].to_string();
    let (status, page) = post(
        &shed,
        "/account/tokens/revoke",
        &format!("id={ed_id}"),
        &ada,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{page}");
    assert!(page.contains(&format!("no live token {ed_id}")), "{page}");
    assert_eq!(shed.shed(&["token", "list", "ed"]), eds);

    let (status, page) = post(&shed, "/account/tokens", "name=laptop", &ada, Some(&own)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let token = page
        .split("<code id=\"token\">")
        .nth(1)
        .and_then(|rest| rest.split("</code>").next())
        .unwrap()
        .to_string();
    assert!(token.starts_with("shed_"), "{token}");
    let (_, _, account) = shed.get(&format!("{own}/account"), Some(&ada)).await;
    assert!(
        account.contains("laptop") && !account.contains(&token),
        "{account}"
    );
    let id = account
        .split("name=\"id\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    let (status, page) = post(
        &shed,
        "/account/tokens/revoke",
        &format!("id={id}"),
        &ada,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains(&format!("Revoked {id}")), "{page}");
    let mcp = shed
        .http
        .post(format!("{own}/mcp"))
        .bearer_auth(&token)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
}

/// `sentence` as a page writes it.
fn html(sentence: &str) -> String {
    sentence
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[tokio::test]
async fn an_app_page_shows_and_takes_what_the_rule_book_allows() {
    let shed = Shed::start().await;
    let own = shed.url();
    let from = Some(own.as_str());
    let page_of = format!("{own}/spaces/demo/apps/runs");

    // A viewer sees the versions, and no button; a post gets the CLI's sentence.
    let vic = platform_cookie(&shed, "vic").await;
    let (status, _, page) = shed.get(&page_of, Some(&vic)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("data-version=\"1\""), "{page}");
    for button in ["Roll back to", ">Trash<", ">Restore<", ">Purge<"] {
        assert!(!page.contains(button), "a viewer sees {button}: {page}");
    }
    let versions = shed.shed(&["app", "versions", "demo/runs", "--as", "ada"]);
    for (path, form, cli) in [
        (
            "trash",
            "",
            vec!["app", "trash", "demo/runs", "--as", "vic"],
        ),
        (
            "rollback",
            "version=1",
            vec!["app", "rollback", "demo/runs", "1", "--as", "vic"],
        ),
    ] {
        let (status, page) = post(
            &shed,
            &format!("/spaces/demo/apps/runs/{path}"),
            form,
            &vic,
            from,
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {page}");
        let sentence = shed.refused(&cli);
        assert!(
            page.contains(&html(sentence.trim())),
            "{path}: {sentence} in {page}"
        );
    }
    // An app of a space they are not in: the host's not-found, no page of it.
    let (status, _, page) = shed
        .get(&format!("{own}/spaces/club/apps/runs"), Some(&vic))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{page}");
    assert_eq!(
        shed.shed(&["app", "versions", "demo/runs", "--as", "ada"]),
        versions
    );

    // The owner: bad input gets a sentence and changes nothing.
    let ada = platform_cookie(&shed, "ada").await;
    for (form, said) in [
        ("", "the form is missing the version"),
        ("version=two", "two is not a version"),
        ("version=9", "demo/runs has no version 9"),
        ("version=1", "demo/runs v1 is the version answering now"),
    ] {
        let (status, page) = post(&shed, "/spaces/demo/apps/runs/rollback", form, &ada, from).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{form}: {page}");
        assert!(page.contains(said), "{form}: {page}");
    }

    // Trashed: the page says so, with Restore and Purge; purge without the
    // typed name is refused and deletes nothing.
    let (status, page) = post(&shed, "/spaces/demo/apps/runs/trash", "", &ada, from).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("demo/runs is in the trash"), "{page}");
    assert!(
        page.contains(">Restore<") && page.contains(">Purge<"),
        "{page}"
    );
    for typed in ["", "confirm=", "confirm=runs", "confirm=demo%2Fruns2"] {
        let (status, page) = post(&shed, "/spaces/demo/apps/runs/purge", typed, &ada, from).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{typed}: {page}");
        assert!(
            page.contains("to purge demo/runs, type its name exactly: demo/runs")
                && page.contains("nothing was deleted"),
            "{typed}: {page}"
        );
    }
    let (_, _, home) = shed.get(&format!("{own}/"), Some(&ada)).await;
    assert!(
        home.contains("data-app=\"demo/runs\"") && home.contains("in the trash"),
        "a trashed app stays on home: {home}"
    );
    let (status, page) = post(&shed, "/spaces/demo/apps/runs/restore", "", &ada, from).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("demo/runs is out of the trash"), "{page}");
    assert_eq!(
        shed.shed(&["app", "versions", "demo/runs", "--as", "ada"]),
        versions
    );
}
