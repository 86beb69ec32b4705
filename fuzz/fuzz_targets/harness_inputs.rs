//! Fuzzes what the harness reads from outside: tool inputs, host
//! configurations, host outcomes and observation ceilings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shed_harness::{calls, config, labels, outcome};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = config::parse(&text, "fuzz.json");
    let _ = labels::Ceiling::parse(&text);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = calls::parse_input(&value);
        let _ = labels::Label::from_json(&value);
        let parsed = outcome::HostOutcome::from_json(&value);
        let _ = parsed.summary(outcome::SummaryForm::Full);
        let _ = parsed.admitted_entry();
    }
});
