//! Reads that would run long: the bounds of a line are refused before the
//! database is asked, a slow query within them is stopped by its deadline
//! with a sentence, and a query whose caller went away stops.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, fixture};
use serde_json::json;
use shed_store::READ_DEADLINE;

const TOO_LONG: &str = "this query took longer than 2 s and was stopped — narrow it: compare a column (= < >) rather than search with ~, or search a shorter piece of text";

/// Rows of `jog.who` holding 60,000 `a`s each (under a value's bound,
/// `wire::MAX_VALUE_BYTES`), four a write (under a write's).
const LONG_ROWS: usize = 300;
const LONG_CHARS: usize = 60_000;
const ROWS_A_WRITE: usize = 4;

/// How far past its deadline a stopped read may answer: generous, the
/// defect being a read that runs on for as long as its scan takes.
const GRACE: Duration = Duration::from_secs(3);

async fn long_texts() -> Fixture {
    let f = fixture().await;
    let who = "a".repeat(LONG_CHARS);
    for _ in 0..LONG_ROWS / ROWS_A_WRITE {
        let bundles: Vec<_> = (0..ROWS_A_WRITE)
            .map(|i| json!({ "entity": { "eid": format!("$r{i}") }, "jog": { "who": who, "miles": 1 } }))
            .collect();
        f.apply("jeff/runs", json!(bundles)).await;
    }
    f
}

/// `~` a hundred characters that each row almost holds: every row costs
/// 100 × 60,000 character tests, and no row matches.
fn pathological() -> String {
    format!(".jog.who~{}b", "a".repeat(99))
}

#[tokio::test]
async fn what_sqlite_would_refuse_is_a_sentence() {
    let f = fixture().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": "Ada" } }),
    )
    .await;
    assert_eq!(
        f.query_error("jeff/runs", &format!(".jog.who~{}", "a".repeat(49_999)))
            .await,
        "the ~ (contains) clauses of this line search for 49999 characters — at most 100 in one line; search for a shorter piece of the text, or for its words with q="
    );
    assert_eq!(
        f.query_error("jeff/runs", &vec![".jog.miles>1"; 1000].join("&"))
            .await,
        "this line has more than 32 clauses — say what you want in at most 32"
    );
    assert_eq!(
        f.query_error("jeff/runs", &format!(".jog.who={}", "a".repeat(60_000)))
            .await,
        "the value of .jog.who= is 60000 characters — a clause's value is at most 1000; shorten it"
    );
    // At the bounds the database answers.
    let widest = format!(
        "{}&.jog.who~{}",
        vec![".jog.miles>1"; 31].join("&"),
        "a".repeat(100)
    );
    assert!(f.rows("jeff/runs", &widest).await.is_empty());
    let longest = |clause: &str| format!("{clause}{}", "a".repeat(1000));
    for line in [
        longest(".jog.who="),
        longest(".edges.follows="),
        longest("eid="),
        format!("q={}", "a ".repeat(500)),
        format!(".jog!&{}", vec![longest(".edges.follows="); 31].join("&")),
        format!(
            ".jog!&order=.created.at&{}",
            vec![".created.by=@nobody"; 30].join("&")
        ),
    ] {
        assert!(f.rows("jeff/runs", &line).await.is_empty(), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_query_is_stopped_by_its_deadline() {
    // PostgreSQL answers this line well within the deadline (its ILIKE is
    // no backtracking matcher): there is nothing slow to stop there.
    if !common::on_sqlite("a_slow_query_is_stopped_by_its_deadline") {
        return;
    }
    let f = long_texts().await;
    let started = Instant::now();
    let answer = f.query_error("jeff/runs", &pathological()).await;
    let took = started.elapsed();
    assert_eq!(answer, TOO_LONG);
    assert!(
        took < READ_DEADLINE + GRACE,
        "stopped after {took:?}, deadline {READ_DEADLINE:?}"
    );
    // The store reads on.
    assert_eq!(f.rows("jeff/runs", ".jog!&limit=5").await.len(), 5);
    assert_eq!(f.rows("jeff/runs", ".jog.who~ab").await.len(), 0);
}

#[test]
fn a_query_whose_caller_went_away_stops() {
    // One blocking thread: a scan not stopped would hold it to its deadline.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    runtime.block_on(async {
        let f = long_texts().await;
        let gone = tokio::time::timeout(
            Duration::from_millis(200),
            f.store.query("jeff/runs", &pathological()),
        )
        .await;
        assert!(gone.is_err(), "the slow query answered within 200 ms");
        let started = Instant::now();
        assert!(f.rows("jeff/runs", ".jog.who~b").await.is_empty());
        let took = started.elapsed();
        assert!(
            took < READ_DEADLINE / 2,
            "the next scan waited {took:?}: the abandoned one ran on"
        );
    });
}

#[tokio::test]
async fn a_refused_read_stops_no_later_read() {
    // A read refused after it had its connection (an unknown component)
    // once left a cancel on its way to that connection, which the pool
    // then lent to the next read: the next read was stopped by it.
    let f = fixture().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": "Ada" } }),
    )
    .await;
    for _ in 0..100 {
        assert_eq!(
            f.query_error("jeff/runs", ".nothing!").await,
            "no component nothing in jeff/runs"
        );
        assert_eq!(f.rows("jeff/runs", ".jog!").await.len(), 1);
    }
}
