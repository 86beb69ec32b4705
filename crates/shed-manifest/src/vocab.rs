//! Reads `vocab.json`: the components an app declares (its kinds), each an
//! object of typed columns, and the optional `"tools": false` that turns the
//! generated commands off. Every problem is a clause of the deploy's sentence.

use indexmap::IndexMap;
use serde_json::Value;

use crate::names::{NAME_RULE, is_name, shown};
use crate::{ColumnType, STORE_COLUMNS, STORE_COMPONENTS, Vocab, WIRE_WORDS};

/// What reading `vocab.json` found.
#[derive(Debug, Default)]
pub(crate) struct VocabRead {
    pub vocab: Vocab,
    /// Whether each kind gets its `add_` and `find_` commands.
    pub generate: bool,
    /// Every component the file names, well-formed or not, so a command
    /// writing one is not refused for a problem already named here.
    pub declared: Vec<String>,
    pub problems: Vec<String>,
}

/// Reads a parsed `vocab.json` against the components the platform says.
pub(crate) fn read(doc: &Value, platform: &[&str]) -> VocabRead {
    let mut read = VocabRead {
        generate: true,
        ..VocabRead::default()
    };
    let Some(entries) = doc.as_object() else {
        read.problems.push(
            "the file is an object of components, like { \"jog\": { \"who\": \"text\" } }"
                .to_owned(),
        );
        return read;
    };
    for (name, value) in entries {
        if name == "tools" {
            match value {
                Value::Bool(on) => read.generate = *on,
                _ => read.problems.push(
                    "tools is false or true — false turns off the add_ and find_ commands of the kinds"
                        .to_owned(),
                ),
            }
            continue;
        }
        read.declared.push(name.clone());
        if let Some(problem) = name_problem(name, platform) {
            read.problems.push(problem);
            continue;
        }
        if let Some(columns) = read_columns(name, value, &mut read.problems) {
            read.vocab.components.insert(name.clone(), columns);
        }
    }
    read
}

/// Why `name` cannot be a component of the app's own, if it cannot.
fn name_problem(name: &str, platform: &[&str]) -> Option<String> {
    if platform.contains(&name) {
        Some(format!(
            "{name} is a component the platform already says — use it as it is, or name yours something else"
        ))
    } else if STORE_COMPONENTS.contains(&name) {
        Some(format!(
            "{name} is kept by the store on every entity — name your component something else"
        ))
    } else if WIRE_WORDS.contains(&name) {
        Some(format!(
            "{name} is a word of the wire, not a component — name your component something else"
        ))
    } else if !is_name(name) {
        Some(format!(
            "{} is not a component name — {NAME_RULE}",
            shown(name)
        ))
    } else {
        None
    }
}

/// A component's columns, or `None` (with the problems said) when any column
/// is wrong.
fn read_columns(
    component: &str,
    value: &Value,
    problems: &mut Vec<String>,
) -> Option<IndexMap<String, ColumnType>> {
    let Some(columns) = value.as_object() else {
        problems.push(format!(
            "{component} is an object of columns, like {{ \"who\": \"text\" }}"
        ));
        return None;
    };
    let before = problems.len();
    let mut read = IndexMap::with_capacity(columns.len());
    for (column, ty) in columns {
        if !is_name(column) {
            problems.push(format!(
                "{component}: {} is not a column name — {NAME_RULE}",
                shown(column)
            ));
            continue;
        }
        if STORE_COLUMNS.contains(&column.as_str()) {
            problems.push(format!(
                "{component}.{column} is kept by the store on every row — name your column something else"
            ));
            continue;
        }
        match ty.as_str().and_then(ColumnType::from_word) {
            Some(ty) => {
                read.insert(column.clone(), ty);
            }
            None => problems.push(format!(
                "{component}.{column} is {} — a column is text, number, bool, time, url or ref",
                said(ty)
            )),
        }
    }
    (problems.len() == before).then_some(read)
}

/// A JSON value as a refusal repeats it: a string as itself, anything else
/// as the JSON it was, both cut short.
pub(crate) fn said(value: &Value) -> String {
    match value {
        Value::String(s) => shown(s),
        other => shown(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PLATFORM_COMPONENTS;
    use serde_json::json;

    fn problems(doc: Value) -> Vec<String> {
        read(&doc, PLATFORM_COMPONENTS).problems
    }

    #[test]
    fn the_run_club_vocab_reads() {
        let got = read(
            &json!({ "jog": { "who": "text", "miles": "number", "at": "time" } }),
            PLATFORM_COMPONENTS,
        );
        assert!(got.problems.is_empty());
        assert!(got.generate);
        let jog = &got.vocab.components["jog"];
        let columns: Vec<_> = jog.iter().map(|(c, t)| (c.as_str(), *t)).collect();
        assert_eq!(
            columns,
            [
                ("who", ColumnType::Text),
                ("miles", ColumnType::Number),
                ("at", ColumnType::Time)
            ]
        );
    }

    #[test]
    fn tools_false_turns_generation_off() {
        let got = read(
            &json!({ "tools": false, "recipe": {} }),
            PLATFORM_COMPONENTS,
        );
        assert!(!got.generate);
        assert!(got.vocab.components.contains_key("recipe"));
    }

    #[test]
    fn every_wrong_thing_is_named() {
        assert_eq!(
            problems(json!({
                "doc": { "x": "text" },
                "created": {},
                "edges": {},
                "Jog": {},
                "run": { "miles": "numbr", "Who": "text" },
                "shift": "text",
                "tools": "no"
            })),
            [
                "doc is a component the platform already says — use it as it is, or name yours something else",
                "created is kept by the store on every entity — name your component something else",
                "edges is a word of the wire, not a component — name your component something else",
                "Jog is not a component name — use a-z, 0-9 and _, starting with a letter, at most 40 characters",
                "run.miles is numbr — a column is text, number, bool, time, url or ref",
                "run: Who is not a column name — use a-z, 0-9 and _, starting with a letter, at most 40 characters",
                "shift is an object of columns, like { \"who\": \"text\" }",
                "tools is false or true — false turns off the add_ and find_ commands of the kinds",
            ]
        );
    }

    #[test]
    fn a_vocab_that_is_not_an_object_is_refused() {
        assert_eq!(
            problems(json!([1])),
            ["the file is an object of components, like { \"jog\": { \"who\": \"text\" } }"]
        );
    }
}
