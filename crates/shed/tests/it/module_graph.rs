//! **Invariant:** no two modules of one crate import each other, directly
//! or round a longer loop — at any depth: `agents::builtins` and
//! `agents::rows` are sibling modules as much as `access` and `deploy` are.
//! This reads every crate's `src/` and follows each `crate::…` and
//! `super::…` path (in `use` lines, paths in code and comments alike). A
//! reference from module `a::b::x` to `a::c::y` is an edge between the
//! siblings where the two paths part, `a::b → a::c`; a module naming its
//! own parent or children is no edge (that is how modules are built).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path inside its crate: `["agents", "builtins"]`.
type ModulePath = Vec<String>;

/// The module a source file is: `src/agents/run.rs` → `agents::run`,
/// `src/x/mod.rs` → `x`, `src/lib.rs` → the root.
fn module_of(src: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(src).expect("under src/");
    let mut path: ModulePath = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("src/ is readable").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The module paths `source` (of module `here`) names: every `crate::a::b`
/// and `super::a` path, each item of a `…::{a::X, b}` group.
fn referenced_paths(here: &[String], source: &str) -> Vec<ModulePath> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for prefix in ["crate::", "super::"] {
        for (at, _) in source.match_indices(prefix) {
            if source[..at].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let mut base: ModulePath = if prefix == "crate::" {
                Vec::new()
            } else {
                here[..here.len().saturating_sub(1)].to_vec()
            };
            let mut rest = &source[at + prefix.len()..];
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            for item in path_items(rest) {
                let mut path = base.clone();
                path.extend(item);
                found.push(path);
            }
        }
    }
    found
}

/// The identifier chains at the start of `rest`: `a::b::X` → one chain
/// `[a, b, X]`; `a::{b::X, c}` → `[a, b, X]` and `[a, c]`.
fn path_items(rest: &str) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut chain = Vec::new();
    let mut rest = rest;
    loop {
        let ident: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if !ident.is_empty() {
            rest = &rest[ident.len()..];
            chain.push(ident);
            match rest.strip_prefix("::") {
                Some(more) => rest = more,
                None => return vec![chain],
            }
            continue;
        }
        let Some(group) = rest.strip_prefix('{') else {
            return vec![chain];
        };
        let mut items = Vec::new();
        let mut depth = 0usize;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ if item_start && !c.is_whitespace() => {
                    let mut item = chain.clone();
                    if let Some(first) = path_items(&group[i..]).into_iter().next() {
                        item.extend(first);
                    }
                    items.push(item);
                    item_start = false;
                }
                _ => {}
            }
        }
        return items;
    }
}

/// The sibling edges of a crate: for each parent module, which of its
/// children name which others.
fn module_graph(src: &Path) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<ModulePath> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for file in &files {
        let here = module_of(src, file);
        let source = std::fs::read_to_string(file).expect("a source file is UTF-8");
        for path in referenced_paths(&here, &source) {
            let parted = here.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if parted >= here.len() || parted >= path.len() {
                continue; // a parent, a child or itself
            }
            let from = here[..=parted].to_vec();
            let to = path[..=parted].to_vec();
            if modules.contains(&to) {
                graph.entry(from).or_default().insert(to);
            }
        }
    }
    graph
}

/// One cycle of `graph`, as the modules round it (the first repeated at the
/// end), or `None` when it has none.
fn find_cycle(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Option<Vec<String>> {
    fn visit<'a>(
        module: &'a ModulePath,
        graph: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        path: &mut Vec<&'a ModulePath>,
        finished: &mut BTreeSet<&'a ModulePath>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[start..].iter().map(|m| m.join("::")).collect();
            cycle.push(module.join("::"));
            return Some(cycle);
        }
        if !finished.insert(module) {
            return None;
        }
        path.push(module);
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, finished) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut finished = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(module, graph, &mut Vec::new(), &mut finished))
}

/// Every crate of the workspace.
fn crates() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<_> = std::fs::read_dir(&root)
        .expect("crates/ is readable")
        .map(|entry| entry.expect("crates/ is readable").path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    crates.sort();
    crates
}

fn path(words: &[&str]) -> ModulePath {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let crates = crates();
    assert!(crates.len() >= 9, "the workspace's crates were not found");
    let host = module_graph(
        &crates
            .iter()
            .find(|c| c.ends_with("shed-host"))
            .unwrap()
            .join("src"),
    );
    assert!(
        host.get(&path(&["agents", "run"]))
            .is_some_and(|uses| uses.contains(&path(&["agents", "builtins"]))),
        "the graph misses shed-host's agents::run's use of agents::builtins"
    );
    let cycles: Vec<String> = crates
        .iter()
        .filter_map(|krate| {
            let cycle = find_cycle(&module_graph(&krate.join("src")))?;
            let name = krate.file_name()?.to_string_lossy().to_string();
            Some(format!("{name}: {}", cycle.join(" → ")))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "modules import each other — move the shared piece into a module both use:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn paths_are_read_through_groups_and_super() {
    let here = path(&["agents", "run"]);
    let found = referenced_paths(
        &here,
        "use super::{rows::Row, label};\nuse crate::access::{self, may};\nfn f() { crate::texts::count(); }",
    );
    for expected in [
        path(&["agents", "rows", "Row"]),
        path(&["agents", "label"]),
        path(&["access", "self"]),
        path(&["access", "may"]),
        path(&["texts", "count"]),
    ] {
        assert!(found.contains(&expected), "{expected:?} not in {found:?}");
    }
}

#[test]
fn a_cycle_between_nested_siblings_is_found() {
    let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = [
        (path(&["agents", "rows"]), [path(&["agents", "run"])].into()),
        (path(&["agents", "run"]), [path(&["agents", "rows"])].into()),
        (path(&["access"]), BTreeSet::new()),
    ]
    .into();
    assert_eq!(
        find_cycle(&graph),
        Some(vec![
            "agents::rows".to_string(),
            "agents::run".to_string(),
            "agents::rows".to_string()
        ])
    );
    let acyclic: BTreeMap<_, _> = graph
        .into_iter()
        .filter(|(m, _)| *m != path(&["agents", "run"]))
        .collect();
    assert_eq!(find_cycle(&acyclic), None);
}
