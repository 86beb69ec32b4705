//! The watcher's wake (`Store::wake`): a change made through another store
//! on the same database wakes it soon — on SQLite at the next poll, on
//! PostgreSQL at the notification, long before the safety tick — and on
//! PostgreSQL the listening connection, cut by the server, connects again
//! and wakes its watchers once it is back.

use std::time::{Duration, Instant};

use shed_store::{Person, SAFETY_TICK, Store, Wake};

/// How long a wake may take after a change: well under the safety tick, so
/// on PostgreSQL only the notification can have woken it.
const SOON: Duration = Duration::from_secs(3);

/// Waits for `wake` at most `bound`: how long it took.
async fn woken_within(wake: &mut Wake, bound: Duration, what: &str) -> Duration {
    let started = Instant::now();
    tokio::time::timeout(bound, wake.changed())
        .await
        .unwrap_or_else(|_| panic!("no wake within {bound:?} of {what}"));
    started.elapsed()
}

async fn deploy(store: &Store, by: &Person, slug: &str) {
    store
        .record_deploy(crate::common::deploy(
            &by.eid,
            slug,
            &[("tools.json", b"{}")],
        ))
        .await
        .unwrap();
}

/// Two stores on one database (one file, or one database on the server),
/// as two processes hold them; Ada owns jeff.
async fn two_stores(dir: &std::path::Path) -> (Store, Store, Person) {
    let writer = crate::common::open_store(dir).await;
    let watched = crate::common::open_store(dir).await;
    let ada = writer.add_person("ada", "Ada").await.unwrap();
    writer.add_space("jeff", &ada.eid).await.unwrap();
    (writer, watched, ada)
}

/// A wake that has answered its first call and, on PostgreSQL, its
/// listener's first connection: from now on only a change (or a tick)
/// wakes it.
async fn settled(store: &Store) -> Wake {
    let mut wake = store.wake();
    woken_within(&mut wake, Duration::from_secs(1), "its start").await;
    woken_within(&mut wake, SOON, "listening").await;
    wake
}

#[tokio::test]
async fn a_deploy_a_trash_and_a_membership_made_by_another_store_wake_a_watcher_soon() {
    assert!(SOON < SAFETY_TICK / 2);
    let dir = tempfile::tempdir().unwrap();
    let (writer, watched, ada) = two_stores(dir.path()).await;
    let mut wake = settled(&watched).await;

    deploy(&writer, &ada, "runs").await;
    let after_deploy = woken_within(&mut wake, SOON, "a deploy").await;

    assert!(writer.trash_app("jeff", "runs", &ada.eid).await.unwrap());
    woken_within(&mut wake, SOON, "an app trashed").await;
    assert!(writer.restore_app("jeff", "runs", &ada.eid).await.unwrap());
    woken_within(&mut wake, SOON, "an app restored").await;

    let ed = writer.add_person("ed", "Ed").await.unwrap();
    writer.set_member("jeff", &ed.eid, "editor").await.unwrap();
    let after_joining = woken_within(&mut wake, SOON, "a new member").await;

    writer.remove_member("jeff", &ed.eid).await.unwrap();
    let after_leaving = woken_within(&mut wake, SOON, "a member taken out").await;
    eprintln!(
        "woken {after_deploy:?} after a deploy, {after_joining:?} after a member joined, {after_leaving:?} after one left"
    );
}

#[tokio::test]
async fn on_postgres_the_listener_cut_by_the_server_connects_again_and_wakes_once_back() {
    let Some(_) = shed_test_database::server() else {
        eprintln!("the listener's reconnection: a test of PostgreSQL's LISTEN, skipped on SQLite");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (writer, watched, ada) = two_stores(dir.path()).await;
    let mut wake = settled(&watched).await;
    let url = shed_test_database::for_folder(dir.path()).unwrap();
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let listeners = "FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN shed_changes'";

    let cut = admin
        .query(
            &format!("SELECT pg_terminate_backend(pid) {listeners}"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(cut.len(), 1, "one listening connection");
    let back = woken_within(&mut wake, SOON, "the listener's reconnection").await;

    let count = format!("SELECT COUNT(*) {listeners}");
    let listening: i64 = admin.query_one(&count, &[]).await.unwrap().get(0);
    assert_eq!(listening, 1, "listening again");
    deploy(&writer, &ada, "runs").await;
    let after_deploy = woken_within(&mut wake, SOON, "a deploy after reconnecting").await;
    eprintln!("woken {back:?} after the cut, {after_deploy:?} after a deploy");
}
