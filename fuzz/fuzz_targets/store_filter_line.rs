//! Fuzzes the store's filter-line parser: any bytes give clauses or a sentence, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        let _ = shed_store::filter::parse(line);
    }
});
