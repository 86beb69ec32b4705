//! **Invariant:** no door compares an access or a role. The doors (shed-mcp,
//! shed-web, shed-broker) translate a protocol into calls of shed-host and
//! hold no rule of their own; every "may they?" is the rule book's
//! (`shed-host/src/access.rs`). This reads the doors' code (`src/`; their
//! benches and tests may set up apps of each access) and fails on any line
//! that names an `Access::` value or a `Role` variant.

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

/// The lines of `file` that name an access value or a role variant, up to
/// its test module (`#[cfg(test)]`, last in a file by this crate's habit).
fn rule_lines(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .enumerate()
        .take_while(|(_, line)| !line.contains("#[cfg(test)]"))
        .filter(|(_, line)| RULE_WORDS.iter().any(|word| line.contains(word)))
        .map(|(number, line)| format!("{}:{}: {}", file.display(), number + 1, line.trim()))
        .collect()
}

/// **Invariant:** inside shed-host too, only the rule book (`access.rs`)
/// and the types' own definitions (`caller.rs`) name an access value or a
/// role variant; everything else asks `access::may`.
#[test]
fn only_the_rule_book_decides_inside_shed_host() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "shed-host's sources were not found");
    let named: Vec<String> = files
        .iter()
        .filter(|file| !file.ends_with("access.rs") && !file.ends_with("caller.rs"))
        .flat_map(|file| rule_lines(file))
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
