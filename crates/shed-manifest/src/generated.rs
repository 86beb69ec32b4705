//! The two commands every kind is worth: `add_<kind>` mints an entity wearing
//! the kind, with a `doc` and an alias; `find_<kind>` reads a filter line over
//! the same words. Their templates use optional holes, so a clause whose
//! argument is left out drops out of what is filled. Their descriptions name
//! the app as `<space>/<app>` ("Add a recipe to jeff/recipes"); the host
//! appends the title and address.

use serde_json::{Map, Value};

use crate::{Act, ArgType, Argument, ColumnType, Command, Vocab};

/// The arguments `add_<kind>` takes before the kind's columns.
const ADD_OWN: [&str; 3] = ["title", "body", "alias"];
/// The arguments `find_<kind>` takes beside the kind's columns.
const FIND_OWN: [&str; 2] = ["words", "limit"];

/// A column spelled like one of a generated command's own arguments cannot be
/// an argument of that command too; each such column is a problem, unless
/// the app wrote that command itself (then nothing is generated).
pub(crate) fn collisions(vocab: &Vocab, written: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for (kind, columns) in &vocab.components {
        for (verb, own) in [("add", &ADD_OWN[..]), ("find", &FIND_OWN[..])] {
            let command = format!("{verb}_{kind}");
            if written.contains(&command) {
                continue;
            }
            for column in columns.keys().filter(|c| own.contains(&c.as_str())) {
                problems.push(format!(
                    "{kind}.{column} is also {command}'s own {column} argument — rename the column, or write {command} in tools.json yourself"
                ));
            }
        }
    }
    problems
}

/// `add_<kind>` and `find_<kind>` for every kind of the app named `app`
/// (`<space>/<app>`), kind by kind, except those the app wrote itself.
pub(crate) fn kind_commands(vocab: &Vocab, written: &[String], app: &str) -> Vec<Command> {
    let mut commands = Vec::with_capacity(vocab.components.len() * 2);
    for (kind, columns) in &vocab.components {
        for command in [add(kind, columns, app), find(kind, columns, app)] {
            if !written.contains(&command.name) {
                commands.push(command);
            }
        }
    }
    commands
}

type Columns = indexmap::IndexMap<String, ColumnType>;

fn add(kind: &str, columns: &Columns, app: &str) -> Command {
    let mut input = vec![
        argument("title", ArgType::Text, true),
        argument("body", ArgType::Text, false),
        argument("alias", ArgType::Text, false),
    ];
    input.extend(column_arguments(columns));
    let mut bundle = Map::new();
    bundle.insert(
        "entity".into(),
        object([("eid", format!("${kind}")), ("alias", hole("alias"))]),
    );
    bundle.insert(
        "doc".into(),
        object([("title", hole("title")), ("body", hole("body"))]),
    );
    bundle.insert(
        kind.into(),
        object(columns.keys().map(|c| (c.as_str(), hole(c)))),
    );
    let noun = noun(kind);
    Command {
        name: format!("add_{kind}"),
        description: format!("Add {} {noun} to {app}", article(&noun)),
        input,
        act: Act::Apply(Value::Object(bundle)),
        view: None,
        generated: true,
        confirm: false,
    }
}

fn find(kind: &str, columns: &Columns, app: &str) -> Command {
    let mut input = vec![argument("words", ArgType::Text, false)];
    input.extend(column_arguments(columns));
    input.push(argument("limit", ArgType::Number, false));
    let mut line = format!(".{kind}!&.doc?&q={}", hole("words"));
    for column in columns.keys() {
        line.push_str(&format!("&.{kind}.{column}={}", hole(column)));
    }
    line.push_str(&format!("&limit={}", hole("limit")));
    let many = plural(&noun(kind));
    let by_columns = match columns.len() {
        0 => String::new(),
        _ => format!(", or by {}", either(columns.keys().map(|c| noun(c)))),
    };
    Command {
        name: format!("find_{kind}"),
        description: format!(
            "Find {many} in {app} by words in their title or body{by_columns}; say nothing for every one"
        ),
        input,
        act: Act::Query(line),
        view: None,
        generated: true,
        confirm: false,
    }
}

fn argument(name: &str, ty: ArgType, required: bool) -> Argument {
    Argument {
        name: name.to_owned(),
        ty,
        required,
        minimum: None,
        maximum: None,
    }
}

fn column_arguments(columns: &Columns) -> impl Iterator<Item = Argument> + '_ {
    columns
        .iter()
        .map(|(column, ty)| argument(column, ArgType::of_column(*ty), false))
}

fn hole(name: &str) -> String {
    format!("{{{{{name}}}}}")
}

fn object<'a>(fields: impl IntoIterator<Item = (&'a str, String)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v)))
            .collect(),
    )
}

/// A name as words: `shift_note` is "shift note".
fn noun(name: &str) -> String {
    name.replace('_', " ")
}

fn article(noun: &str) -> &'static str {
    match noun.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// English plural, by the common rules: box → boxes, story → stories.
fn plural(noun: &str) -> String {
    let consonant_y = noun.ends_with('y')
        && !matches!(noun.chars().rev().nth(1), Some('a' | 'e' | 'i' | 'o' | 'u'));
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| noun.ends_with(end))
    {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// "a", "a or b", "a, b or c".
fn either(words: impl Iterator<Item = String>) -> String {
    let words: Vec<String> = words.collect();
    match words.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_read_as_english() {
        assert_eq!(plural("recipe"), "recipes");
        assert_eq!(plural("box"), "boxes");
        assert_eq!(plural("story"), "stories");
        assert_eq!(plural("day"), "days");
        assert_eq!(plural("shift note"), "shift notes");
        assert_eq!(plural("y"), "ies");
    }

    #[test]
    fn lists_read_as_english() {
        let list = |w: &[&str]| either(w.iter().map(|s| s.to_string()));
        assert_eq!(list(&["serves"]), "serves");
        assert_eq!(list(&["serves", "cuisine"]), "serves or cuisine");
        assert_eq!(list(&["a", "b", "c"]), "a, b or c");
    }
}
