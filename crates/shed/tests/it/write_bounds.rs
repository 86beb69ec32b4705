//! A value's and a write's size bounds, black-box: a text one byte past
//! `shed_store::wire::MAX_VALUE_BYTES` written through MCP `graph_apply`,
//! through a command's text argument (the run club's `log_run`) and through
//! the page api is refused on each door with the sentence naming the field
//! and the bound; a write past `MAX_WRITE_BYTES` is refused naming the
//! bound; nothing is written.

use reqwest::StatusCode;
use serde_json::{Value, json};
use shed_store::wire::{MAX_VALUE_BYTES, MAX_WRITE_BYTES};

use crate::web_door::Shed;

/// `1234567` as `1,234,567`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The rows of demo/runs, read over MCP as `token`.
async fn runs(shed: &Shed, token: &str) -> Vec<Value> {
    let line = json!({ "app": "demo/runs", "filter": ".jog!" });
    let (error, read) = shed.mcp(token, "graph_query", line).await;
    assert!(!error, "{read}");
    read["rows"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_value_or_a_write_past_its_bound_is_refused_on_every_door_and_nothing_is_written() {
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let long = "x".repeat(MAX_VALUE_BYTES + 1);
    let said = format!(
        "jog.who is {} bytes; a value may be at most {} bytes — shorten it",
        grouped(MAX_VALUE_BYTES + 1),
        grouped(MAX_VALUE_BYTES)
    );

    // MCP graph_apply.
    let bundle = json!({ "entity": { "eid": "$r" }, "jog": { "who": long, "miles": 1 } });
    let (error, answer) = shed
        .mcp(
            &token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": bundle }),
        )
        .await;
    assert!(error, "{answer}");
    assert!(answer.as_str().unwrap().contains(&said), "{answer}");

    // A command's text argument, over MCP: log_run writes it first into
    // its doc's title, `Run by {{who}}`, 7 bytes longer.
    let log_run = json!({ "name": "log_run", "app": "demo/runs",
                          "args": { "who": long, "miles": 5, "at": "2026-09-01" } });
    let (error, answer) = shed.mcp(&token, "command", log_run).await;
    assert!(error, "{answer}");
    let title = format!(
        "doc.title is {} bytes; a value may be at most {} bytes — shorten it",
        grouped(MAX_VALUE_BYTES + 8),
        grouped(MAX_VALUE_BYTES)
    );
    assert!(answer.as_str().unwrap().contains(&title), "{answer}");

    // The page api.
    let cookie = shed.demo_cookie("ada").await;
    let (status, answer) = shed.apply("runs", bundle, Some(&cookie)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"], said.as_str());

    // A write whose values together pass the write's bound.
    let each = MAX_VALUE_BYTES - 10;
    let bundles: Vec<Value> = (0..=MAX_WRITE_BYTES / each)
        .map(|i| json!({ "entity": { "eid": format!("$r{i}") }, "jog": { "who": "y".repeat(each) } }))
        .collect();
    let (error, answer) = shed
        .mcp(
            &token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": bundles }),
        )
        .await;
    assert!(error, "{answer}");
    let answer = answer.as_str().unwrap();
    assert!(
        answer.contains(&format!(
            "bytes; a write may be at most {} bytes — split it into smaller writes",
            grouped(MAX_WRITE_BYTES)
        )),
        "{answer}"
    );

    assert!(runs(&shed, &token).await.is_empty(), "nothing written");
}
