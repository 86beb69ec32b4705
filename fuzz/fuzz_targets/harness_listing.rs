//! Fuzzes the harness's listing path: any bytes read as a host listing, made
//! into a catalog, rendered as `list_commands` under a small bound; every
//! signature stays within 400 characters.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shed_harness::catalog::Catalog;
use shed_harness::listing;
use shed_harness::signature::SIGNATURE_MAX_CHARS;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(catalog) = Catalog::from_listing(&value) else {
        return;
    };
    for row in catalog.rows() {
        assert!(row.signature.chars().count() <= SIGNATURE_MAX_CHARS);
    }
    let detail: Vec<String> = catalog.rows().iter().take(2).map(|r| r.name.clone()).collect();
    let _ = listing::render(&catalog, &detail, 4096, "out-1");
});
