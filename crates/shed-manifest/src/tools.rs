//! Reads `tools.json` / `tools.yml`: an object of hand-written commands keyed
//! by name, each checked as the spec's "What a deploy refuses" says. Every
//! problem is a clause of the deploy's one sentence; an entry with a problem
//! yields no command.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use shed_words::thousands;

use crate::holes::{Piece, pieces};
use crate::names::{NAME_RULE, is_name, shown};
use crate::vocab::said;
use crate::{Act, ArgType, Argument, Command, WIRE_WORDS};

/// The six keys an entry may carry.
const KEYS: [&str; 6] = ["description", "input", "apply", "query", "view", "confirm"];

/// The longest description, in characters.
const LONGEST_DESCRIPTION: usize = 1000;

/// What an entry is checked against: the app's files (for `view`) and the
/// components it may write (the platform's and this deploy's `vocab.json`).
pub(crate) struct Context<'a> {
    pub files: &'a BTreeMap<String, Vec<u8>>,
    pub is_component: &'a dyn Fn(&str) -> bool,
}

/// What reading the tools file found.
#[derive(Debug, Default)]
pub(crate) struct ToolsRead {
    /// The commands with no problem, in file order.
    pub commands: Vec<Command>,
    /// Every entry's name, whether or not it read: each one replaces a
    /// generated command of that name.
    pub names: Vec<String>,
    pub problems: Vec<String>,
}

/// Reads a parsed tools file.
pub(crate) fn read(doc: Value, context: &Context) -> ToolsRead {
    let mut read = ToolsRead::default();
    let Value::Object(entries) = doc else {
        read.problems.push(
            "the file is an object of commands keyed by name, like { \"log_run\": { \"description\": … } }"
                .to_owned(),
        );
        return read;
    };
    for (name, entry) in entries {
        read.names.push(name.clone());
        if let Some(command) = read_entry(name, entry, context, &mut read.problems) {
            read.commands.push(command);
        }
    }
    read
}

fn read_entry(
    name: String,
    entry: Value,
    context: &Context,
    problems: &mut Vec<String>,
) -> Option<Command> {
    let before = problems.len();
    let label = shown(&name);
    if !is_name(&name) {
        problems.push(format!("{label} is not a command name — {NAME_RULE}"));
    }
    let Value::Object(mut fields) = entry else {
        problems.push(format!(
            "{label} is an object of description, input and apply or query"
        ));
        return None;
    };
    let unknown: Vec<String> = fields
        .keys()
        .filter(|k| !KEYS.contains(&k.as_str()))
        .map(|k| shown(k))
        .collect();
    if !unknown.is_empty() {
        problems.push(format!(
            "{label}: {} — a tool says description, input, apply, query, view, confirm",
            unknown.join(", ")
        ));
    }
    let description = read_description(&label, fields.get("description"), problems);
    let (input, declared) = read_input(&label, fields.get("input"), problems);
    let act = read_act(&label, &mut fields, problems);
    if let Some(act) = &act {
        check_holes(&label, act, &declared, problems);
        if let Act::Apply(bundles) = act {
            check_components(bundles, context, problems);
        }
    }
    let view = read_view(&label, fields.get("view"), context, problems);
    let confirm = read_confirm(&label, fields.get("confirm"), act.as_ref(), problems);
    if problems.len() > before {
        return None;
    }
    Some(Command {
        name,
        description: description?,
        input,
        act: act?,
        view,
        generated: false,
        confirm,
    })
}

/// `confirm`: `true` when an agent's call must wait for its person's
/// approval; only a command that writes asks it (a read changes nothing).
fn read_confirm(
    label: &str,
    value: Option<&Value>,
    act: Option<&Act>,
    problems: &mut Vec<String>,
) -> bool {
    match value {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) if matches!(act, Some(Act::Query(_))) => {
            problems.push(format!(
                "{label}.confirm is for a command that writes — a query changes nothing, so leave confirm out"
            ));
            false
        }
        Some(Value::Bool(true)) => true,
        Some(_) => {
            problems.push(format!(
                "{label}.confirm is true or false — true makes an agent's call wait for its person's approval"
            ));
            false
        }
    }
}

fn read_description(
    label: &str,
    value: Option<&Value>,
    problems: &mut Vec<String>,
) -> Option<String> {
    const SAY: &str = "say in a sentence what it does and when to reach for it";
    let problem = match value {
        None => format!("{label} has no description — {SAY}"),
        Some(Value::String(text)) => {
            let text = text.trim();
            let length = text.chars().count();
            if text.is_empty() {
                format!("{label}.description is empty — {SAY}")
            } else if text.split_whitespace().nth(1).is_none() {
                format!("{label}.description is one word — {SAY}")
            } else if length > LONGEST_DESCRIPTION {
                format!(
                    "{label}.description is {} characters — say it in 1,000 or fewer",
                    thousands(length)
                )
            } else if let Some(control) = text.chars().find(|c| c.is_control()) {
                format!(
                    "{label}.description holds the control character U+{:04X} — write it as one line of plain text",
                    u32::from(control)
                )
            } else {
                return Some(text.to_owned());
            }
        }
        Some(_) => format!(
            "{label}.description is a sentence, not {} — {SAY}",
            kind_of(value)
        ),
    };
    problems.push(problem);
    None
}

/// The arguments that read, and every name `input` declares (a hole naming a
/// wrongly typed argument is that argument's problem, not the hole's).
fn read_input(
    label: &str,
    value: Option<&Value>,
    problems: &mut Vec<String>,
) -> (Vec<Argument>, Vec<String>) {
    let fields = match value {
        None => {
            problems.push(format!(
                "{label} has no input — say \"input\": {{}} for a command that takes nothing"
            ));
            return (Vec::new(), Vec::new());
        }
        Some(Value::Object(fields)) => fields,
        Some(_) => {
            problems.push(format!(
                "{label}.input is an object of argument names to types, like {{ \"who\": \"text\" }}"
            ));
            return (Vec::new(), Vec::new());
        }
    };
    let mut input = Vec::with_capacity(fields.len());
    for (arg, ty) in fields {
        if !is_name(arg) {
            problems.push(format!(
                "{label}.input: {} is not an argument name — {NAME_RULE}",
                shown(arg)
            ));
            continue;
        }
        if let Some(argument) = read_argument(&format!("{label}.input.{arg}"), arg, ty, problems) {
            input.push(argument);
        }
    }
    (input, fields.keys().cloned().collect())
}

/// The words an argument written as an object may say.
const ARGUMENT_KEYS: [&str; 3] = ["type", "minimum", "maximum"];

/// One argument: its type's word (`"number"`), or an object saying its
/// type and, for a number, its `minimum` and `maximum`. `label` is where it
/// is (`log_run.input.miles`).
fn read_argument(
    label: &str,
    arg: &str,
    value: &Value,
    problems: &mut Vec<String>,
) -> Option<Argument> {
    let before = problems.len();
    let (word, fields) = match value {
        Value::Object(fields) => {
            let unknown: Vec<String> = fields
                .keys()
                .filter(|k| !ARGUMENT_KEYS.contains(&k.as_str()))
                .map(|k| shown(k))
                .collect();
            if !unknown.is_empty() {
                problems.push(format!(
                    "{label}: {} — an argument says type, and a number minimum and maximum",
                    unknown.join(", ")
                ));
            }
            let Some(word) = fields.get("type") else {
                problems.push(format!(
                    "{label} has no type — say \"type\": \"number\" (or text, bool, time, url)"
                ));
                return None;
            };
            (word, Some(fields))
        }
        word => (word, None),
    };
    let Some(ty) = word.as_str().and_then(ArgType::from_word) else {
        problems.push(format!(
            "{label} is {} — an argument is text, number, bool, time or url",
            said(word)
        ));
        return None;
    };
    let mut bound = |key: &str| {
        let value = fields.and_then(|fields| fields.get(key))?;
        match value {
            _ if ty != ArgType::Number => problems.push(format!(
                "{label} has a {key}, and only a number has one — leave it out, or say \"type\": \"number\""
            )),
            Value::Number(bound) => return Some(bound.clone()),
            other => problems.push(format!(
                "{label}.{key} is {} — a {key} is a number, like 0",
                kind_of(Some(other))
            )),
        }
        None
    };
    let minimum = bound("minimum");
    let maximum = bound("maximum");
    if let (Some(low), Some(high)) = (&minimum, &maximum)
        && low.as_f64() > high.as_f64()
    {
        problems.push(format!(
            "{label}: its minimum {low} is above its maximum {high} — no number is both"
        ));
    }
    (problems.len() == before).then(|| Argument {
        name: arg.to_owned(),
        ty,
        required: true,
        minimum,
        maximum,
    })
}

/// The act, taken out of the entry (the template is not copied).
fn read_act(
    label: &str,
    fields: &mut Map<String, Value>,
    problems: &mut Vec<String>,
) -> Option<Act> {
    match (fields.remove("apply"), fields.remove("query")) {
        (Some(apply), None) => {
            let bundles_only = match &apply {
                Value::Object(_) => true,
                Value::Array(list) => !list.is_empty() && list.iter().all(Value::is_object),
                _ => false,
            };
            if bundles_only {
                return Some(Act::Apply(apply));
            }
            problems.push(format!(
                "{label}.apply is a bundle or a list of bundles, like {{ \"entity\": {{ \"eid\": \"$run\" }} }}"
            ));
        }
        (None, Some(Value::String(line))) => return Some(Act::Query(line)),
        (None, Some(_)) => problems.push(format!(
            "{label}.query is a filter line, a string like \".jog!&.doc?\""
        )),
        _ => problems.push(format!(
            "{label} does one thing: apply (a bundle to write) or query (a filter line to read)"
        )),
    }
    None
}

/// Every hole must name a declared argument; each one that does not is named
/// once, in the order the template holds them.
fn check_holes(label: &str, act: &Act, declared: &[String], problems: &mut Vec<String>) {
    let mut unnamed: Vec<String> = Vec::new();
    let mut note = |template: &str| {
        for piece in pieces(template) {
            if let Piece::Hole(hole) = piece
                && !declared.iter().any(|d| d == hole)
                && !unnamed.iter().any(|u| u == hole)
            {
                problems.push(format!(
                    "{label}: {{{{{}}}}} names no input — declare it in {label}.input",
                    shown(hole)
                ));
                unnamed.push(hole.to_owned());
            }
        }
    };
    match act {
        Act::Query(line) => note(line),
        Act::Apply(template) => each_string(template, &mut note),
    }
}

/// Calls `visit` on every string value in `value` (not on keys).
fn each_string(value: &Value, visit: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => visit(s),
        Value::Array(items) => items.iter().for_each(|v| each_string(v, visit)),
        Value::Object(fields) => fields.values().for_each(|v| each_string(v, visit)),
        _ => {}
    }
}

/// Every key of a bundle is a wire word or a component the app may write.
fn check_components(bundles: &Value, context: &Context, problems: &mut Vec<String>) {
    let bundles: &[Value] = match bundles {
        Value::Array(list) => list,
        single => std::slice::from_ref(single),
    };
    for key in bundles
        .iter()
        .filter_map(Value::as_object)
        .flat_map(Map::keys)
    {
        if !WIRE_WORDS.contains(&key.as_str()) && !(context.is_component)(key) {
            problems.push(format!(
                "{} is not a component — declare it in vocab.json, or use one the platform already says",
                shown(key)
            ));
        }
    }
}

/// A view is a page of the app's own files: relative, no `..`, ending
/// `.html`, and deployed. A leading `./` is the same page without it.
fn read_view(
    label: &str,
    value: Option<&Value>,
    context: &Context,
    problems: &mut Vec<String>,
) -> Option<String> {
    let page = match value? {
        Value::String(page) => page,
        _ => {
            problems.push(format!(
                "{label}.view is a page of this app, like \"leaderboard.html\""
            ));
            return None;
        }
    };
    let mut path = page.as_str();
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    let well_formed = !path.starts_with('/')
        && !path.contains('\\')
        && !path.split('/').any(|segment| segment == "..")
        && path.len() > ".html".len()
        && path.ends_with(".html");
    if !well_formed {
        problems.push(format!(
            "{} — a view is a page of this app named from its root, like leaderboard.html: no leading /, no .., ending .html",
            shown(page)
        ));
        return None;
    }
    if !context.files.contains_key(path) {
        problems.push(format!(
            "{} — a view names a page in this app's own files; deploy the page beside index.html",
            shown(page)
        ));
        return None;
    }
    Some(path.to_owned())
}

/// What sort of JSON value something is, for a sentence.
fn kind_of(value: Option<&Value>) -> &'static str {
    match value {
        None | Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "true or false",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "text",
        Some(Value::Array(_)) => "a list",
        Some(Value::Object(_)) => "an object",
    }
}
