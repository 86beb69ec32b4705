//! **Invariant:** no two modules of one crate import each other, directly
//! or round a longer loop. This reads every crate's `src/` and follows each
//! `crate::` reference (in `use` lines, paths in code and comments alike; a
//! file under `src/x/` belongs to module `x`; `lib.rs` and `main.rs`, the
//! roots, are not modules of the graph).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module (a top-level `src/x.rs`, or every file under `src/x/`) and
/// the other modules its source names through `crate::`. The crate roots
/// `lib.rs` and `main.rs` are not modules of the graph.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("src/ is readable").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under src/");
            let first = relative.components().next().expect("a file name");
            let first = first.as_os_str().to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("a source file is UTF-8");
            let references = graph.entry(module.clone()).or_default();
            references.extend(
                referenced_modules(&source)
                    .into_iter()
                    .filter(|m| *m != module),
            );
        }
    }
    graph
}

/// The first segment after every `crate::` in `source` — in `use` lines,
/// in paths inside code, in comments alike — and each first segment of a
/// `crate::{a::X, b}` group.
fn referenced_modules(source: &str) -> BTreeSet<String> {
    const PREFIX: &str = "crate::";
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let leading_ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| is_ident(*c))
            .collect()
    };
    let mut modules = BTreeSet::new();
    for (at, _) in source.match_indices(PREFIX) {
        if source[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let rest = &source[at + PREFIX.len()..];
        let Some(group) = rest.strip_prefix('{') else {
            modules.insert(leading_ident(rest));
            continue;
        };
        let mut depth = 0usize;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ if item_start && !c.is_whitespace() => {
                    modules.insert(leading_ident(&group[i..]));
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    modules.remove("");
    modules
}

/// One cycle of `graph`, as the modules round it (the first repeated at
/// the end), or `None` when it has none.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        module: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        finished: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[start..].iter().map(|m| m.to_string()).collect();
            cycle.push(module.to_string());
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

/// The crates whose modules are checked: every crate of the workspace.
fn crates() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<_> = std::fs::read_dir(&root)
        .expect("crates/ is readable")
        .map(|entry| entry.expect("crates/ is readable").path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    crates.sort();
    crates
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let crates = crates();
    assert!(crates.len() >= 9, "the workspace's crates were not found");
    let harness = module_graph(
        &crates
            .iter()
            .find(|c| c.ends_with("shed-harness"))
            .unwrap()
            .join("src"),
    );
    assert!(
        harness
            .get("cli")
            .is_some_and(|uses| uses.contains("harness")),
        "the graph misses shed-harness's cli's use of harness"
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
fn a_cycle_through_a_grouped_use_and_a_path_in_code_is_found() {
    let sources = [
        (
            "a",
            "use crate::{b::{X, Y}, c};\nfn f() { shed_crate::d::g(); }",
        ),
        ("b", "fn g() -> X { crate::a::h() }"),
        ("c", "use crate::c::Z;"),
    ];
    let graph: BTreeMap<String, BTreeSet<String>> = sources
        .iter()
        .map(|(module, source)| {
            let mut references = referenced_modules(source);
            references.remove(*module);
            (module.to_string(), references)
        })
        .collect();
    assert_eq!(
        graph["a"],
        BTreeSet::from(["b".to_string(), "c".to_string()])
    );
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    let acyclic: BTreeMap<_, _> = graph.into_iter().filter(|(m, _)| m != "b").collect();
    assert_eq!(find_cycle(&acyclic), None);
}
