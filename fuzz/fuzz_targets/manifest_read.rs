//! Fuzzes the manifest reader: arbitrary bytes as `vocab.json` and
//! `tools.json` (or `tools.yml`); whatever reads is then filled with no
//! arguments. A refusal is fine; a panic is the bug.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (yaml, rest) = match data.split_first() {
        Some((first, rest)) => (first % 2 == 1, rest),
        None => (false, data),
    };
    // The first 0xFF byte, if any, ends vocab.json; the rest is the tools file.
    let (vocab, tools) = match rest.iter().position(|b| *b == 0xFF) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (
            &b"{ \"jog\": { \"who\": \"text\", \"miles\": \"number\" } }"[..],
            rest,
        ),
    };
    let mut files = BTreeMap::new();
    files.insert("vocab.json".to_owned(), vocab.to_vec());
    files.insert(
        if yaml { "tools.yml" } else { "tools.json" }.to_owned(),
        tools.to_vec(),
    );
    files.insert("board.html".to_owned(), Vec::new());
    if let Ok(manifest) = shed_manifest::read_app(&files, "club/runs") {
        for command in &manifest.commands {
            let _ = command.input_schema();
            let _ = command.fill(&serde_json::Value::Null, shed_manifest::Timestamp::now());
        }
    }
});
