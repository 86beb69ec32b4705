//! The activity and data pages on the platform's host: a write through the
//! page api is on its space's activity with its person and command, a
//! refused one beside it with its sentence; nobody outside the space sees
//! any of it, and asking for it reads as asking for a space (or an app)
//! nobody made; an app's data page lists a kind's rows with refs by name,
//! pages by the store's cursor, and shows a bad filter line's sentence.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use shed_host::agents::RunCall;
use shed_host::{Access, Role};

use crate::common::{Answer, PLATFORM, URL, World, form, get, world};

/// The space `demo`'s host, as a browser sends it in `Host`.
const DEMO: &str = "demo.localhost:7700";

/// `ada` signed in (her session cookie), owner of `demo` and its private
/// app `demo/runs`, which declares the kind `jog` with a ref `pal`; and
/// ada's bearer token for the page api.
async fn demo(world: &World) -> (String, String) {
    let session = world.signed_in("ada").await;
    let host = &world.host;
    host.add_space("demo", "ada").await.expect("demo");
    let ada = host.caller_for_handle("ada").await.expect("ada");
    let files = BTreeMap::from([
        ("index.html".to_string(), b"<p>runs</p>".to_vec()),
        (
            "vocab.json".to_string(),
            br#"{ "jog": { "who": "text", "miles": "number", "pal": "ref" } }"#.to_vec(),
        ),
        (
            "tools.json".to_string(),
            br#"{ "log_run": { "description": "Log a run",
                "input": { "who": "text", "miles": "number" },
                "apply": { "entity": { "eid": "$run" }, "doc": { "title": "Run by {{who}}" },
                           "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#
                .to_vec(),
        ),
    ]);
    host.deploy_folder(
        &ada,
        "demo/runs",
        files,
        Some("Runs".into()),
        Some(Access::Private),
    )
    .await
    .expect("demo/runs deploys");
    let token = host
        .create_token("ada", Default::default())
        .await
        .expect("ada's token");
    (format!("shed_session={session}"), token)
}

/// `bundle` posted to demo/runs's page api with `token`.
async fn apply(world: &World, token: &str, bundle: Value) -> Answer {
    let request = Request::post("/runs/api/apply")
        .header("host", DEMO)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(bundle.to_string()))
        .expect("a request");
    world.ask(request).await
}

/// The page at `path` on the platform's host, as `cookie`'s person sees it.
async fn page(world: &World, path: &str, cookie: &str) -> Answer {
    world.ask(get(PLATFORM, path, Some(cookie))).await
}

/// ada's run of 5 miles written through the page api with `token`.
async fn a_run(world: &World, token: &str) {
    let wrote = apply(
        world,
        token,
        json!({ "entity": { "eid": "$run" }, "jog": { "who": "ada", "miles": 5 } }),
    )
    .await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);
}

/// `answer` came with `status` and its body says each of `words`.
fn says(answer: &Answer, status: StatusCode, words: &[&str]) {
    assert_eq!(answer.status, status, "{}", answer.body);
    for said in words {
        assert!(answer.body.contains(said), "{said}: {}", answer.body);
    }
}

#[tokio::test]
async fn a_write_through_the_page_api_is_on_its_space_activity_and_a_refused_one_beside_it() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    a_run(&world, &token).await;
    // A viewer's write is refused, and kept with its sentence.
    let bob = world.signed_in("bob").await;
    world
        .host
        .add_member("demo", "bob", Role::Viewer)
        .await
        .expect("bob views demo");
    let bobs = world
        .host
        .create_token("bob", Default::default())
        .await
        .expect("bob's token");
    let refused = apply(
        &world,
        &bobs,
        json!({ "entity": { "eid": "$run" }, "jog": { "who": "a secret", "miles": 9 } }),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);

    for (path, cookie) in [
        ("/spaces/demo/activity", ada.as_str()),
        ("/activity", ada.as_str()),
        ("/spaces/demo/apps/runs/activity", ada.as_str()),
        ("/spaces/demo/activity", &format!("shed_session={bob}")),
    ] {
        let activity = page(&world, path, cookie).await;
        says(
            &activity,
            StatusCode::OK,
            &[
                "@ada ran apply in demo/runs — 1 entity",
                "</time> · door web",
                "data-write=\"demo/runs@1\"",
                "@bob was refused apply in demo/runs",
                "It was told: “you can read this app but not change it — its owner can make \
                 you an editor”",
            ],
        );
        assert!(
            !activity.body.contains("a secret"),
            "an argument of a refused call was kept: {}",
            activity.body
        );
    }
    // The entity it wrote is linked to its page.
    let data = page(&world, "/spaces/demo/apps/runs/data", &ada).await;
    let eid = data
        .body
        .split("data-eid=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a row of the data page");
    let activity = page(&world, "/spaces/demo/activity", &ada).await;
    assert!(
        activity
            .body
            .contains(&format!("href=\"/spaces/demo/apps/runs/data/{eid}\"")),
        "{}",
        activity.body
    );
    // Narrowed: by command, by person, by a job that wrote nothing.
    let narrowed = |query: &'static str| {
        let ada = ada.clone();
        let world = &world;
        async move {
            page(world, &format!("/spaces/demo/activity?{query}"), &ada)
                .await
                .body
        }
    };
    assert!(narrowed("command=apply").await.contains("@ada ran apply"));
    assert!(narrowed("person=ada").await.contains("@ada ran apply"));
    let none = narrowed("job=job-9").await;
    assert!(!none.contains("@ada ran apply"), "{none}");
    assert!(none.contains("No writes here yet that match"), "{none}");
    let bad = page(&world, "/spaces/demo/activity?before=yesterday", &ada).await;
    says(
        &bad,
        StatusCode::BAD_REQUEST,
        &["before takes the number an Older link carries, not yesterday"],
    );
}

#[tokio::test]
async fn nobody_outside_the_space_sees_its_activity_and_asking_reads_as_for_one_nobody_made() {
    let world = world().await;
    let (_, token) = demo(&world).await;
    a_run(&world, &token).await;
    let eve = format!("shed_session={}", world.signed_in("eve").await);
    world.host.add_space("eves", "eve").await.expect("eves");

    let everything = page(&world, "/activity", &eve).await;
    assert_eq!(everything.status, StatusCode::OK);
    assert!(
        !everything.body.contains("demo/runs"),
        "{}",
        everything.body
    );
    let asked = page(&world, "/spaces/demo/activity", &eve).await;
    let ghost = page(&world, "/spaces/ghost/activity", &eve).await;
    assert_eq!(asked.status, StatusCode::NOT_FOUND);
    assert_eq!(
        asked.body.replace("demo", "ghost"),
        ghost.body,
        "a space's activity tells an outsider more than one nobody made"
    );
    assert!(!asked.body.contains("@ada"), "{}", asked.body);
    let app = page(&world, "/spaces/demo/apps/runs/activity", &eve).await;
    let made_up = page(&world, "/spaces/demo/apps/ghost/activity", &eve).await;
    assert_eq!(app.status, StatusCode::NOT_FOUND);
    assert_eq!(app.body.replace("runs", "ghost"), made_up.body);
    let data = page(&world, "/spaces/demo/apps/runs/data", &eve).await;
    let made_up = page(&world, "/spaces/demo/apps/ghost/data", &eve).await;
    assert_eq!(data.status, StatusCode::NOT_FOUND);
    assert_eq!(data.body.replace("runs", "ghost"), made_up.body);
}

#[tokio::test]
async fn the_data_page_lists_a_kinds_rows_with_refs_by_name_and_pages_by_the_cursor() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    let mut bundles = vec![json!({
        "entity": { "eid": "$first" },
        "doc": { "title": "Tuesday run" },
        "jog": { "who": "ada", "miles": 3 }
    })];
    for n in 0..55 {
        bundles.push(json!({
            "entity": { "eid": format!("$run{n}") },
            "jog": { "who": format!("runner {n}"), "miles": n, "pal": "$first" }
        }));
    }
    let wrote = apply(&world, &token, Value::Array(bundles)).await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);

    let first = page(&world, "/spaces/demo/apps/runs/data", &ada).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert!(
        first
            .body
            .contains("aria-current=\"page\"><code>jog</code>"),
        "{}",
        first.body
    );
    for column in [
        "<th scope=\"col\" title=\"text\">who</th>",
        ">miles<",
        ">pal<",
        ">created<",
    ] {
        assert!(first.body.contains(column), "{column}: {}", first.body);
    }
    assert_eq!(first.body.matches("<tr data-eid=").count(), 50);
    // Newest first: the last written is on top, its ref shown by the title.
    assert!(first.body.contains("runner 54"), "{}", first.body);
    assert!(first.body.contains(">Tuesday run</a>"), "{}", first.body);
    assert!(first.body.contains("by ada"), "{}", first.body);
    let next = first
        .body
        .split("<a rel=\"next\" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a link to the next page")
        .replace("&amp;", "&");
    assert!(next.contains("&after="), "{next}");
    let second = page(&world, &next, &ada).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(second.body.matches("<tr data-eid=").count(), 6);
    assert!(second.body.contains("Tuesday run"), "{}", second.body);
    assert!(second.body.contains("runner 0<"), "{}", second.body);
    assert!(!second.body.contains("runner 54"), "{}", second.body);
    assert!(!second.body.contains("rel=\"next\""), "{}", second.body);

    // The filter line narrows, and keeps narrowing through its page's link.
    let narrowed = page(
        &world,
        "/spaces/demo/apps/runs/data?kind=jog&filter=.jog.miles%3E%3D50",
        &ada,
    )
    .await;
    assert_eq!(narrowed.body.matches("<tr data-eid=").count(), 5);
    assert!(
        narrowed.body.contains("value=\".jog.miles&gt;=50\""),
        "{}",
        narrowed.body
    );
}

#[tokio::test]
async fn a_bad_filter_line_or_kind_shows_its_sentence() {
    let world = world().await;
    let (ada, _) = demo(&world).await;
    let bad = page(
        &world,
        "/spaces/demo/apps/runs/data?kind=jog&filter=.jog.mile%3D3",
        &ada,
    )
    .await;
    // The kinds and the search box stay, the line in it to mend.
    says(
        &bad,
        StatusCode::BAD_REQUEST,
        &[
            "class=\"refused\" role=\"alert\">jog has no column mile — it has who, miles, pal",
            "value=\".jog.mile=3\"",
            "aria-current=\"page\"><code>jog</code>",
        ],
    );
    let kind = page(&world, "/spaces/demo/apps/runs/data?kind=jogg", &ada).await;
    says(
        &kind,
        StatusCode::BAD_REQUEST,
        &["no kind jogg in demo/runs — its kinds are jog"],
    );
}

#[tokio::test]
async fn the_data_page_s_search_box_takes_words_and_clauses_mixed_freely() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    let runs = [
        ("Tuesday run with Ada", "ada", 3),
        ("Long run alone", "bo", 12),
        ("Ada's long run", "ada", 20),
    ];
    let bundles: Vec<Value> = runs
        .iter()
        .enumerate()
        .map(|(n, (title, who, miles))| {
            json!({
                "entity": { "eid": format!("$run{n}") },
                "doc": { "title": title },
                "jog": { "who": who, "miles": miles }
            })
        })
        .collect();
    let wrote = apply(&world, &token, Value::Array(bundles)).await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);

    // A word with no `.` and no `=` is a full-text search of the titles.
    let words = page(
        &world,
        "/spaces/demo/apps/runs/data?kind=jog&filter=Ada",
        &ada,
    )
    .await;
    assert_eq!(words.status, StatusCode::OK, "{}", words.body);
    assert_eq!(
        words.body.matches("<tr data-eid=").count(),
        2,
        "{}",
        words.body
    );
    assert!(!words.body.contains("Long run alone"), "{}", words.body);
    assert!(words.body.contains("value=\"Ada\""), "{}", words.body);

    // Mixed with a clause, either way round; two words are one search.
    for mixed in [
        "Ada%26.jog.miles%3E%3D10",
        ".jog.miles%3E%3D10%20%26%20Ada",
        "long%20run%26.jog.who%3Dada",
    ] {
        let path = format!("/spaces/demo/apps/runs/data?kind=jog&filter={mixed}");
        let narrowed = page(&world, &path, &ada).await;
        assert_eq!(
            narrowed.status,
            StatusCode::OK,
            "{mixed}: {}",
            narrowed.body
        );
        assert_eq!(
            narrowed.body.matches("<tr data-eid=").count(),
            1,
            "{mixed}: {}",
            narrowed.body
        );
        assert!(
            narrowed.body.contains("Ada&#39;s long run")
                || narrowed.body.contains("Ada's long run"),
            "{mixed}: {}",
            narrowed.body
        );
    }

    // The box's hint shows an example of each.
    says(
        &words,
        StatusCode::OK,
        &[
            "aria-describedby=\"filter-hint\"",
            "id=\"filter-hint\"",
            "A word searches the titles and bodies (<code>Ada</code>)",
            "a clause filters (<code>.jog.who~a</code>)",
            "mix them with <code>&amp;</code>",
        ],
    );
}

#[tokio::test]
async fn the_agents_page_links_each_job_to_its_activity_and_the_header_to_activity() {
    let world = world().await;
    let (ada, _) = demo(&world).await;
    let job = world
        .host
        .create_job("ada", Vec::new(), Vec::new(), None)
        .await
        .expect("a job");
    let agents = page(&world, "/agents", &ada).await;
    assert_eq!(agents.status, StatusCode::OK);
    let name = &job.job.name;
    assert!(
        agents.body.contains(&format!(
            "<a href=\"/activity?job={name}\">What {name} did</a>"
        )),
        "{}",
        agents.body
    );
    assert!(
        agents.body.contains("<a href=\"/activity\">Activity</a>"),
        "{}",
        agents.body
    );
    let app = page(&world, "/spaces/demo/apps/runs", &ada).await;
    assert!(
        app.body
            .contains("<a href=\"/spaces/demo/apps/runs/data\">Data</a>"),
        "{}",
        app.body
    );
}

#[tokio::test]
async fn an_agent_jobs_write_and_its_call_outside_its_scope_are_on_its_persons_activity() {
    let world = world().await;
    let (ada, _) = demo(&world).await;
    let made = world
        .host
        .create_job("ada", vec!["demo/runs.log_run".into()], Vec::new(), None)
        .await
        .expect("a job");
    let run = |name: &str, args: Value| RunCall {
        name: name.to_string(),
        args,
        loom: None,
        expect: None,
        read_only: false,
    };
    let logged = world
        .host
        .job_run(
            Some(&made.secret),
            run("demo/runs.log_run", json!({ "who": "ada", "miles": 4 })),
        )
        .await;
    assert!(logged.answer.is_ok(), "{:?}", logged.answer);
    let outside = world
        .host
        .job_run(
            Some(&made.secret),
            run("demo/runs.add_jog", json!({ "title": "a secret title" })),
        )
        .await;
    assert!(outside.answer.is_err(), "{:?}", outside.answer);

    let job = &made.job.name;
    let activity = page(&world, &format!("/activity?job={job}"), &ada).await;
    says(
        &activity,
        StatusCode::OK,
        &[
            &format!("{job} ran log_run in demo/runs — 1 entity"),
            "for @ada · door broker",
            &format!("{job} was refused add_jog in demo/runs"),
        ],
    );
    assert!(
        !activity.body.contains("a secret title"),
        "{}",
        activity.body
    );
    // Narrowed to the command it was refused, the write is not there.
    let narrowed = page(
        &world,
        &format!("/activity?job={job}&command=add_jog"),
        &ada,
    )
    .await;
    assert!(!narrowed.body.contains("ran log_run"), "{}", narrowed.body);
    assert!(
        narrowed.body.contains("was refused add_jog"),
        "{}",
        narrowed.body
    );
}

/// ada's run written with 3 miles, then changed to 5: its eid.
async fn a_changed_run(world: &World, token: &str) -> String {
    let made = apply(
        world,
        token,
        json!({ "entity": { "eid": "$run" }, "doc": { "title": "Tuesday run" },
                "jog": { "who": "ada", "miles": 3 } }),
    )
    .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let made: Value = serde_json::from_str(&made.body).expect("JSON");
    let eid = made["entities"][0].as_str().expect("an eid").to_string();
    let changed = apply(
        world,
        token,
        json!({ "entity": { "eid": eid }, "jog": { "miles": 5 } }),
    )
    .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    eid
}

/// The Undo form of `write`, posted to entity `eid`'s page with `cookie`
/// from `origin`.
fn undo_form(eid: &str, write: &str, cookie: &str, origin: &str) -> Request<Body> {
    form(
        &format!("/spaces/demo/apps/runs/data/{eid}/undo"),
        Some(cookie),
        Some(origin),
        &format!("write={}", write.replace('/', "%2F").replace('@', "%40")),
    )
}

#[tokio::test]
async fn the_entity_page_shows_each_change_before_and_after_and_undoes_a_write() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    let eid = a_changed_run(&world, &token).await;
    let path = format!("/spaces/demo/apps/runs/data/{eid}");
    let entity = page(&world, &path, &ada).await;
    assert_eq!(entity.status, StatusCode::OK, "{}", entity.body);
    assert!(
        entity.body.contains("<h1>Tuesday run</h1>"),
        "{}",
        entity.body
    );
    assert!(
        entity.body.contains("<code>jog.miles</code>: 3 → 5"),
        "{}",
        entity.body
    );
    assert!(
        entity.body.contains("door web · command apply"),
        "{}",
        entity.body
    );
    assert!(
        entity
            .body
            .contains("aria-label=\"Undo demo/runs@2\">Undo</button>"),
        "{}",
        entity.body
    );
    let undone = world
        .submit(
            &format!("/spaces/demo/apps/runs/data/{eid}/undo"),
            &ada,
            "write=demo%2Fruns%402",
        )
        .await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
    assert!(
        undone
            .body
            .contains("undid demo/runs@2: 1 entity back as they were (demo/runs@3)"),
        "{}",
        undone.body
    );
    assert!(
        undone.body.contains("<code>jog.miles</code>: 5 → 3"),
        "{}",
        undone.body
    );
    assert!(
        undone.body.contains("undo of demo/runs@2"),
        "{}",
        undone.body
    );
    let activity = page(&world, "/spaces/demo/activity", &ada).await;
    assert!(
        activity
            .body
            .contains("@ada ran undo in demo/runs — 1 entity"),
        "{}",
        activity.body
    );
}

#[tokio::test]
async fn an_undo_from_another_origin_or_by_a_viewer_is_refused_and_changes_nothing() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    let eid = a_changed_run(&world, &token).await;
    let path = format!("/spaces/demo/apps/runs/data/{eid}");
    for origin in ["http://evil.example", "http://demo.localhost:7700"] {
        let refused = world
            .ask(undo_form(&eid, "demo/runs@2", &ada, origin))
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{origin}");
        assert!(
            refused.body.contains(&format!(
                "shed&#39;s pages take a form only from their own pages at {URL}, and this came \
                 from a page of {origin} — nothing was changed"
            )),
            "{origin}: {}",
            refused.body
        );
    }
    let bob = format!("shed_session={}", world.signed_in("bob").await);
    world
        .host
        .add_member("demo", "bob", Role::Viewer)
        .await
        .expect("bob views demo");
    let seen = page(&world, &path, &bob).await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.body);
    assert!(seen.body.contains("<code>jog.miles</code>: 3 → 5"));
    assert!(!seen.body.contains(">Undo</button>"), "{}", seen.body);
    let refused = world.ask(undo_form(&eid, "demo/runs@2", &bob, URL)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("you can read this app but not change it — its owner can make you an editor"),
        "{}",
        refused.body
    );
    // Nothing was undone: the run still has 5 miles, at version 2.
    let entity = page(&world, &path, &ada).await;
    assert!(entity.body.contains("version 2"), "{}", entity.body);
    assert!(!entity.body.contains("undo of"), "{}", entity.body);
    // An outsider reads what a made-up app answers.
    let eve = format!("shed_session={}", world.signed_in("eve").await);
    let hidden = page(&world, &path, &eve).await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    assert!(hidden.body.contains("no app demo/runs"), "{}", hidden.body);
    assert!(!hidden.body.contains("Tuesday"), "{}", hidden.body);
}

#[tokio::test]
async fn a_write_is_undone_from_its_activity_row_by_an_editor_only() {
    let world = world().await;
    let (ada, token) = demo(&world).await;
    a_changed_run(&world, &token).await;
    let bob = format!("shed_session={}", world.signed_in("bob").await);
    world
        .host
        .add_member("demo", "bob", Role::Viewer)
        .await
        .expect("bob views demo");
    let button = "aria-label=\"Undo demo/runs@2\">Undo</button>";
    let viewed = page(&world, "/spaces/demo/activity", &bob).await;
    says(&viewed, StatusCode::OK, &["@ada ran apply in demo/runs"]);
    assert!(!viewed.body.contains(button), "{}", viewed.body);
    let narrowed = "/spaces/demo/activity?command=apply";
    says(
        &page(&world, narrowed, &ada).await,
        StatusCode::OK,
        &[
            &format!("<form method=\"post\" action=\"{narrowed}\">"),
            button,
        ],
    );
    let undo = |cookie: &str, origin: &str| {
        form(
            narrowed,
            Some(cookie),
            Some(origin),
            "write=demo%2Fruns%402",
        )
    };
    let elsewhere = world.ask(undo(&ada, "http://evil.example")).await;
    says(&elsewhere, StatusCode::FORBIDDEN, &["nothing was changed"]);
    let viewer = world.ask(undo(&bob, URL)).await;
    says(
        &viewer,
        StatusCode::FORBIDDEN,
        &["you can read this app but not change it — its owner can make you an editor"],
    );
    // The run's first write is refused: @2 changed it since, said how long
    // ago, the exact time on hover.
    let changed = world
        .ask(form(
            narrowed,
            Some(&ada),
            Some(URL),
            "write=demo%2Fruns%401",
        ))
        .await;
    says(
        &changed,
        StatusCode::CONFLICT,
        &[
            "cannot undo demo/runs@1: ",
            " wrote it <time datetime=\"",
            " UTC\">just now</time> (demo/runs@2); undo that first",
        ],
    );
    let undone = world.submit(narrowed, &ada, "write=demo%2Fruns%402").await;
    // On to the page again, still narrowed: the undo said on top, not a row of it.
    says(
        &undone,
        StatusCode::OK,
        &["undid demo/runs@2: 1 entity back as they were (demo/runs@3)"],
    );
    assert!(!undone.body.contains("ran undo"), "{}", undone.body);
    let activity = page(&world, "/spaces/demo/activity", &ada).await;
    says(
        &activity,
        StatusCode::OK,
        &[
            "@ada ran undo in demo/runs — 1 entity",
            "undo of demo/runs@2",
            // The write undone is marked so, and offers no Undo; the undo does.
            "<span class=\"tag undone\">undone by demo/runs@3</span>",
            "aria-label=\"Undo demo/runs@3\"",
            // A write's name opens it: its entity's page at that write.
            "?version=2\">demo/runs@2</a>",
        ],
    );
    assert!(
        !activity.body.contains("aria-label=\"Undo demo/runs@2\""),
        "{}",
        activity.body
    );
    // Undone again all the same: refused, naming the undo that stands.
    let again = world.ask(undo(&ada, URL)).await;
    says(
        &again,
        StatusCode::CONFLICT,
        &[
            "cannot undo demo/runs@2: already undone by demo/runs@3 — undo demo/runs@3 to bring it back",
        ],
    );
}
