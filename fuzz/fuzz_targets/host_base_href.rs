//! Any page through the `<base href>` rule: never a panic, the page's bytes
//! kept, and at most one tag added.
#![no_main]

use libfuzzer_sys::fuzz_target;

const HREF: &str = "http://jeff.localhost:7700/runs/";

fuzz_target!(|data: &[u8]| {
    if let Ok(page) = std::str::from_utf8(data) {
        let out = shed_host::base_href::with_base_href(page, HREF);
        assert!(out == page || out.len() == page.len() + HREF.len() + 14);
    }
});
