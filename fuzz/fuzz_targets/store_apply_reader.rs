//! Fuzzes the store's apply reader: any JSON gives bundles or a sentence, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(body) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = shed_store::wire::read(&body);
    }
});
