//! A fake host CLI for the harness's black-box tests.
//!
//! It answers `command list --json` and `command run <name> --args-json -
//! --json …` from the fixture directory named by `LOOM_PAGE_RPC_QUEUE`, and
//! records every invocation there:
//!
//! - `listing.json` is printed for `command list --json`; `list-exit` (a
//!   number) makes the listing fail with that status instead.
//! - `outcomes/<name>.json` (the command name with every character that is
//!   not a letter or digit written `_`) is the outcome of `command run`;
//!   `"$exit": n` exits with n and prints nothing, `"$stdout": "…"` prints
//!   that text, `"$delayMs": n` waits first. Without a file the outcome is
//!   `ok` with a body echoing the command, args and flags.
//! - `delay-ms` (a number) makes every run wait that long while in flight.
//! - `invocations.jsonl` gets one line per invocation: argv, the whole
//!   environment, stdin.
//! - `inflight` and `max-inflight` count runs in flight, under an exclusive
//!   lock on `lock`, so concurrency is counted, not timed.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

fn main() {
    let Some(dir) = std::env::var_os("LOOM_PAGE_RPC_QUEUE").map(PathBuf::from) else {
        eprintln!("fake host: no LOOM_PAGE_RPC_QUEUE");
        std::process::exit(9);
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut stdin = String::new();
    if argv.get(1).map(String::as_str) == Some("run") {
        let _ = std::io::stdin().read_to_string(&mut stdin);
    }
    let env: BTreeMap<String, String> = std::env::vars().collect();
    with_lock(&dir, || {
        let line = json!({"argv": argv, "env": env, "stdin": stdin}).to_string();
        append(&dir.join("invocations.jsonl"), &line);
    });
    match argv
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["command", "list", "--json"] => list(&dir),
        [
            "command",
            "run",
            name,
            "--args-json",
            "-",
            "--json",
            flags @ ..,
        ] => run(&dir, name, flags, &stdin),
        _ => {
            eprintln!("fake host: unknown invocation {argv:?}");
            std::process::exit(64);
        }
    }
}

fn list(dir: &Path) {
    if let Ok(code) = std::fs::read_to_string(dir.join("list-exit")) {
        eprintln!("fake host: listing fails as the fixture asks");
        std::process::exit(code.trim().parse().unwrap_or(1));
    }
    match std::fs::read_to_string(dir.join("listing.json")) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("fake host: no listing.json ({e})");
            std::process::exit(4);
        }
    }
}

fn run(dir: &Path, name: &str, flags: &[&str], stdin: &str) {
    with_lock(dir, || {
        let now = read_number(&dir.join("inflight")) + 1;
        write(&dir.join("inflight"), &now.to_string());
        if now > read_number(&dir.join("max-inflight")) {
            write(&dir.join("max-inflight"), &now.to_string());
        }
    });
    let file_name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let fixture: Option<Value> =
        std::fs::read_to_string(dir.join("outcomes").join(format!("{file_name}.json")))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
    let delay = fixture
        .as_ref()
        .and_then(|f| f.get("$delayMs"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| read_number(&dir.join("delay-ms")));
    std::thread::sleep(Duration::from_millis(delay));
    with_lock(dir, || {
        let now = read_number(&dir.join("inflight")).saturating_sub(1);
        write(&dir.join("inflight"), &now.to_string());
    });
    let args: Value = serde_json::from_str(stdin).unwrap_or(Value::Null);
    match fixture {
        Some(f) if f.get("$exit").is_some() => {
            eprintln!("fake host: the answer is lost as the fixture asks");
            std::process::exit(f.get("$exit").and_then(Value::as_i64).unwrap_or(1) as i32);
        }
        Some(f) if f.get("$stdout").is_some() => {
            print!("{}", f.get("$stdout").and_then(Value::as_str).unwrap_or(""));
        }
        Some(mut f) => {
            if let Some(o) = f.as_object_mut() {
                o.remove("$delayMs");
            }
            print!("{f}");
        }
        None => print!(
            "{}",
            json!({
                "ok": true, "id": format!("op-{}", std::process::id()), "code": "ok",
                "mayHaveLanded": true, "completed": [],
                "body": {"command": name, "args": args, "flags": flags},
                "version": 1, "message": ""
            })
        ),
    }
}

fn with_lock(dir: &Path, f: impl FnOnce()) {
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("lock"));
    match lock {
        Ok(lock) => {
            let _ = lock.lock();
            f();
            let _ = lock.unlock();
        }
        Err(e) => {
            eprintln!("fake host: cannot open the lock file ({e})");
            std::process::exit(8);
        }
    }
}

fn read_number(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

fn write(path: &Path, text: &str) {
    let _ = std::fs::write(path, text);
}

fn append(path: &Path, line: &str) {
    if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{line}");
    }
}
