//! Fuzzes filling: arbitrary bytes as a call's `args` (JSON when they parse,
//! else a string) for every command of the run club and its generated kind
//! commands. Argument errors are fine; a panic is the bug.
#![no_main]

use std::collections::BTreeMap;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use shed_manifest::Manifest;

static CLUB: LazyLock<Option<Manifest>> = LazyLock::new(|| {
    let mut files = BTreeMap::new();
    files.insert(
        "vocab.json".to_owned(),
        br#"{ "jog": { "who": "text", "miles": "number", "at": "time", "ok": "bool", "link": "url" } }"#.to_vec(),
    );
    files.insert(
        "tools.json".to_owned(),
        br#"{ "log_run": {
              "description": "Log a run for the club leaderboard",
              "input": { "who": "text", "miles": "number", "at": "time" },
              "apply": { "entity": { "eid": "$run" }, "doc": { "title": "Run by {{who}}" },
                         "jog": { "who": "{{who}}", "miles": "{{miles}}", "at": "{{at}}" } } },
            "since": {
              "description": "Runs logged since a date",
              "input": { "since": "time", "who": "text" },
              "query": ".jog!&.created!&.created.at>={{since}}&.jog.who={{who}}" } }"#
            .to_vec(),
    );
    shed_manifest::read_app(&files, "club/runs").ok()
});

fuzz_target!(|data: &[u8]| {
    let Some(club) = CLUB.as_ref() else { return };
    let args = serde_json::from_slice(data)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(data).into_owned()));
    for command in &club.commands {
        let _ = command.fill(&args, shed_manifest::Timestamp::now());
    }
});
