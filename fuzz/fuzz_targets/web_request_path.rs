//! The web door's readers of what a browser sends: a request path split into
//! an app and a file path (nothing may step out of the app), and a page's
//! inline scripts hashed for its Content-Security-Policy.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shed_web::{AppPath, inline_script_hashes, split_app_path};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let AppPath::File { path, .. } = split_app_path(text) {
            assert!(path.split('/').all(|segment| segment != ".." && segment != "." && !segment.contains('\\')));
        }
        for hash in inline_script_hashes(text) {
            assert!(hash.starts_with("sha256-") && hash.len() == 51);
        }
    }
});
