//! The broker's readers of untrusted input: a request off the queue, a
//! `--ttl`, and a job's globs. None may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shed_broker::protocol::read_request(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = shed_broker::jobs::parse_ttl(text);
        let globs: Vec<String> = text.split('\n').map(str::to_string).collect();
        if let Ok(scope) = shed_broker::Scope::new(&globs, &globs) {
            let _ = scope.admits(text, shed_host::agents::Effect::Read);
        }
    }
});
