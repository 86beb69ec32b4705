//! How a command presents its input to a caller: the JSON Schema `commands`
//! prints and `command` fills `args` from, the short call shape a listing
//! prints (`log_run(who, miles)`, `add_recipe(title, body?, alias?)`), and
//! the listing's line saying what an app's `time` arguments take.

use serde_json::{Map, Value, json};

use crate::args::{TIME_PATTERN, TIME_SHAPE, URL_SHAPE};
use crate::{ArgType, Argument, Command, Manifest};

impl Manifest {
    /// A listing's line naming the app's `time` arguments and what they
    /// take (`at, since: a time, like 2026-09-01 …, or now, today or
    /// yesterday …`), when any command has one.
    pub fn time_arguments_line(&self) -> Option<String> {
        let mut names: Vec<&str> = Vec::new();
        let times = self.commands.iter().flat_map(|c| &c.input);
        for argument in times.filter(|a| a.ty == ArgType::Time) {
            if !names.contains(&argument.name.as_str()) {
                names.push(&argument.name);
            }
        }
        (!names.is_empty()).then(|| format!("{}: {TIME_SHAPE}", names.join(", ")))
    }
}

impl Command {
    /// The JSON Schema of the command's input: `text`, `time` and `url` are
    /// strings (the last two saying the shape wanted), `number` a number
    /// (with its `minimum` and `maximum` when `tools.json` says them),
    /// `bool` a boolean; `required` names every required argument. Other
    /// properties are allowed, since an undeclared argument is dropped.
    pub fn input_schema(&self) -> Value {
        let properties: Map<String, Value> = self
            .input
            .iter()
            .map(|a| (a.name.clone(), self.property(a)))
            .collect();
        let mut schema = json!({ "type": "object", "properties": properties });
        let required: Vec<&str> = self
            .input
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name.as_str())
            .collect();
        if !required.is_empty()
            && let Some(fields) = schema.as_object_mut()
        {
            fields.insert("required".into(), json!(required));
        }
        schema
    }

    /// `name(a, b?)`: every argument in order, an optional one marked `?`.
    pub fn call_shape(&self) -> String {
        let arguments: Vec<String> = self
            .input
            .iter()
            .map(|a| match a.required {
                true => a.name.clone(),
                false => format!("{}?", a.name),
            })
            .collect();
        format!("{}({})", self.name, arguments.join(", "))
    }

    fn property(&self, argument: &Argument) -> Value {
        let (ty, shape) = match argument.ty {
            ArgType::Text => ("string", None),
            ArgType::Number => ("number", None),
            ArgType::Bool => ("boolean", None),
            ArgType::Time => ("string", Some(TIME_SHAPE)),
            ArgType::Url => ("string", Some(URL_SHAPE)),
        };
        let said = shape.or_else(|| {
            self.generated
                .then(|| generated_argument(&self.name, &argument.name))
                .flatten()
        });
        let mut property = match said {
            Some(description) => json!({ "type": ty, "description": description }),
            None => json!({ "type": ty }),
        };
        if argument.ty == ArgType::Time
            && let Some(fields) = property.as_object_mut()
        {
            fields.insert("pattern".into(), json!(TIME_PATTERN));
        }
        for (key, bound) in [
            ("minimum", &argument.minimum),
            ("maximum", &argument.maximum),
        ] {
            if let (Some(bound), Some(fields)) = (bound, property.as_object_mut()) {
                fields.insert(key.into(), Value::Number(bound.clone()));
            }
        }
        property
    }
}

/// What a generated command's own arguments (not its kind's columns) are for.
fn generated_argument(command: &str, argument: &str) -> Option<&'static str> {
    let adds = command.starts_with("add_");
    Some(match argument {
        "title" if adds => "what it is called",
        "body" if adds => "its text",
        "alias" if adds => {
            "a name it answers to, so a later call reaches it without its eid: a-z, 0-9 and -"
        }
        "words" if !adds => {
            "words to find in the title or body; the last may be the start of a word"
        }
        "limit" if !adds => "at most this many, from 1 to 1000 (50 when left out)",
        _ => return None,
    })
}
