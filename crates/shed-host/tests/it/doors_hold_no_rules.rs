//! **Invariant:** no door compares an access or a role. The doors (shed-mcp,
//! shed-web, shed-broker) translate a protocol into calls of shed-host and
//! hold no rule of their own; every "may they?" is the rule book's
//! (`shed-host/src/access.rs`). This reads the doors' code (`src/`; their
//! benches and tests may set up apps of each access) and fails on any line
//! that names an `Access::` value or a `Role` variant. Beside it, the
//! invariants of the doors' answers (typed, never read back as JSON) and of
//! acting on an app's data (one function).

use std::path::{Path, PathBuf};

const DOORS: [&str; 3] = ["shed-mcp", "shed-web", "shed-broker"];
const RULE_WORDS: [&str; 4] = ["Access::", "Role::Owner", "Role::Editor", "Role::Viewer"];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// **Invariant:** inside shed-host too, only the rule book (`access.rs`)
/// and the types' own definitions (`caller.rs`) name an access value or a
/// role variant; everything else asks `access::may`.
#[test]
fn only_the_rule_book_decides_inside_shed_host() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let named: Vec<String> = lines_under(&src, |line| {
        RULE_WORDS.iter().any(|word| line.contains(word))
    })
    .into_iter()
    .filter(|line| !line.contains("src/access.rs:") && !line.contains("src/caller.rs:"))
    .collect();
    assert!(
        named.is_empty(),
        "shed-host decides outside its rule book — ask access::may instead:\n{}",
        named.join("\n")
    );
}

#[test]
fn no_door_names_an_access_or_a_role() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for door in DOORS {
        rust_files(&crates.join(door).join("src"), &mut files);
    }
    assert!(files.len() > 15, "the doors' sources were not found");
    let mut named = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            if RULE_WORDS.iter().any(|word| line.contains(word)) {
                named.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        named.is_empty(),
        "a door decides what the rule book should — ask shed-host instead:\n{}",
        named.join("\n")
    );
}

/// The lines of the files under `src` (up to each file's test module) that
/// match `wanted`.
fn lines_under(src: &Path, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    assert!(!files.is_empty(), "no sources under {}", src.display());
    files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            text.lines()
                .enumerate()
                .take_while(|(_, line)| !line.contains("#[cfg(test)]"))
                .filter(|(_, line)| wanted(line))
                .map(|(number, line)| format!("{}:{}: {}", file.display(), number + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// **Invariant:** a door receives typed answers and turns their data into
/// its wire's JSON itself (`Data::into_json`), passing the JSON on whole;
/// no door reads a field back out of it. (`Data` has no fields to index,
/// so the only way in is the JSON this looks for.)
#[test]
fn no_door_reads_the_hosts_json() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read_back = [
        "into_json()[",
        "into_json().get",
        "into_json().as_",
        "into_json().pointer",
    ];
    let mut named = Vec::new();
    for door in DOORS {
        named.extend(lines_under(&crates.join(door).join("src"), |line| {
            read_back.iter().any(|word| line.contains(word))
        }));
    }
    assert!(
        named.is_empty(),
        "a door reads a field out of the host's JSON — take it from the typed answer:\n{}",
        named.join("\n")
    );
}

/// **Invariant:** an app's data is read and written in one place,
/// `act.rs` (`Host::act_on_app`, and an entity's page and an undo beside
/// it), where the rule book decides first; no other module of shed-host
/// calls the store's `query`, `apply`, `entity` or `undo`.
#[test]
fn only_the_act_reads_and_writes_app_data() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let named: Vec<String> = lines_under(&src, |line| {
        [".query(", ".apply(", ".entity(", ".undo("]
            .iter()
            .any(|call| line.contains(call))
    })
    .into_iter()
    .filter(|line| !line.contains("src/act.rs:"))
    .collect();
    assert!(
        named.is_empty(),
        "shed-host reads or writes an app's data outside act.rs — call Host::act_on_app:\n{}",
        named.join("\n")
    );
}
