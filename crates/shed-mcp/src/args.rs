//! Reads a `tools/call`'s arguments into one typed call, refusing a missing
//! or mistyped argument with a sentence that names it and says what to send.

use std::collections::BTreeMap;

use rmcp::model::JsonObject;
use serde_json::Value;
use shed_host::Access;

use crate::tools::TOOL_NAMES;

/// One call of one of the seven tools, its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// `commands`: the commands the caller may run.
    Commands {
        /// Only this app's (its slug, or `<space>/<app>`), when given.
        app: Option<String>,
    },
    /// `command`: run one.
    Command {
        /// The command's name.
        name: String,
        /// Its arguments, a JSON object.
        args: Value,
        /// The app it is of, when the name alone is not enough.
        app: Option<String>,
        /// An approval's id: the call asks where that approval stands
        /// instead of running anything.
        approval: Option<i64>,
    },
    /// `graph_query`: read an app's data with a filter line.
    GraphQuery {
        /// The app: its slug, or `<space>/<app>`.
        app: String,
        /// The filter line.
        filter: String,
    },
    /// `graph_apply`: write a bundle to an app's data.
    GraphApply {
        /// The app: its slug, or `<space>/<app>`.
        app: String,
        /// The bundle.
        bundle: Value,
    },
    /// `app_files`: read and write an app's files.
    AppFiles {
        /// The app: its slug, or `<space>/<app>`.
        app: String,
        /// Files to write (`Some`) or delete (`None`), by path.
        write: BTreeMap<String, Option<String>>,
        /// Files to read, by path.
        read: Vec<String>,
    },
    /// `app_deploy`: deploy the app's files.
    AppDeploy {
        /// The app: its slug, or `<space>/<app>`.
        app: String,
        /// Its title, when it changes.
        title: Option<String>,
        /// Its access, when it changes.
        access: Option<Access>,
    },
    /// `spaces`: the caller's spaces.
    Spaces,
}

/// Why a call's arguments could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// The tool's name is none of the seven.
    #[error("no tool {0} — shed's tools are {list}", list = TOOL_NAMES.join(", "))]
    NoTool(String),
    /// An argument is missing or has the wrong shape: the sentence says which.
    #[error("{0}")]
    Bad(String),
}

impl ToolCall {
    /// Reads the arguments of a call of `tool`.
    pub fn read(tool: &str, arguments: &JsonObject) -> Result<ToolCall, ArgumentError> {
        let args = Args {
            tool,
            map: arguments,
        };
        Ok(match tool {
            "commands" => ToolCall::Commands {
                app: args.optional_text("app")?,
            },
            "command" => ToolCall::Command {
                name: args.text("name", "the command's name, as commands lists it")?,
                args: args.object_or_empty("args")?,
                app: args.optional_text("app")?,
                approval: args.approval()?,
            },
            "graph_query" => ToolCall::GraphQuery {
                app: args.app()?,
                filter: args.text("filter", "a filter line such as .jog!&.created!")?,
            },
            "graph_apply" => ToolCall::GraphApply {
                app: args.app()?,
                bundle: args.bundle()?,
            },
            "app_files" => ToolCall::AppFiles {
                app: args.app()?,
                write: args.writes()?,
                read: args.paths("read")?,
            },
            "app_deploy" => ToolCall::AppDeploy {
                app: args.app()?,
                title: args.optional_text("title")?,
                access: args.access()?,
            },
            "spaces" => ToolCall::Spaces,
            other => return Err(ArgumentError::NoTool(other.to_string())),
        })
    }
}

/// A call's argument object, with the tool's name for the sentences.
struct Args<'a> {
    tool: &'a str,
    map: &'a JsonObject,
}

impl Args<'_> {
    /// A present, non-null argument.
    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    fn bad(&self, sentence: String) -> ArgumentError {
        ArgumentError::Bad(sentence)
    }

    fn text(&self, key: &str, what: &str) -> Result<String, ArgumentError> {
        match self.get(key) {
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
            Some(Value::String(_)) | None => {
                Err(self.bad(format!("{tool} needs {key} — {what}", tool = self.tool)))
            }
            Some(_) => Err(self.bad(format!("{key} is text — {what}"))),
        }
    }

    fn optional_text(&self, key: &str) -> Result<Option<String>, ArgumentError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.bad(format!("{key} is text"))),
        }
    }

    /// `approval`: the id a waiting answer gave, a whole number.
    fn approval(&self) -> Result<Option<i64>, ArgumentError> {
        match self.get("approval") {
            None => Ok(None),
            Some(value) => value.as_i64().filter(|id| *id > 0).map(Some).ok_or_else(|| {
                self.bad(
                    "approval is the number a waiting answer gave, such as 17 — or leave it out to run the command"
                        .to_string(),
                )
            }),
        }
    }

    fn app(&self) -> Result<String, ArgumentError> {
        self.text("app", "the app's slug, or <space>/<app>")
    }

    fn object_or_empty(&self, key: &str) -> Result<Value, ArgumentError> {
        match self.get(key) {
            None => Ok(Value::Object(JsonObject::new())),
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(_) => Err(self.bad(format!(
                "{key} is an object of the command's arguments, such as {{\"who\": \"Ada\"}}"
            ))),
        }
    }

    fn bundle(&self) -> Result<Value, ArgumentError> {
        match self.get("bundle") {
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(Value::Array(items)) if items.iter().all(Value::is_object) => {
                Ok(Value::Array(items.clone()))
            }
            None => Err(self.bad(
                "graph_apply needs bundle — an entity bundle such as {\"entity\": {\"eid\": \"$run\"}, \"jog\": {\"miles\": 5}}, or a list of them"
                    .to_string(),
            )),
            Some(_) => Err(self.bad(
                "bundle is an entity bundle (an object) or a list of them".to_string(),
            )),
        }
    }

    fn writes(&self) -> Result<BTreeMap<String, Option<String>>, ArgumentError> {
        let Some(value) = self.get("write") else {
            return Ok(BTreeMap::new());
        };
        let Value::Object(map) = value else {
            return Err(self.bad(
                "write maps a path to its new text, or to null to delete it, such as {\"index.html\": \"<!doctype html>…\"}"
                    .to_string(),
            ));
        };
        map.iter()
            .map(|(path, text)| match text {
                Value::String(text) => Ok((path.clone(), Some(text.clone()))),
                Value::Null => Ok((path.clone(), None)),
                _ => Err(self.bad(format!(
                    "write.{path} is the file's text, or null to delete it"
                ))),
            })
            .collect()
    }

    fn paths(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(path) => Ok(path.clone()),
                    _ => Err(self.bad(format!(
                        "{key} is a list of paths, such as [\"tools.json\"]"
                    ))),
                })
                .collect(),
            Some(_) => Err(self.bad(format!(
                "{key} is a list of paths, such as [\"tools.json\"]"
            ))),
        }
    }

    fn access(&self) -> Result<Option<Access>, ArgumentError> {
        match self.optional_text("access")? {
            None => Ok(None),
            Some(word) => word
                .parse::<Access>()
                .map(Some)
                .map_err(|error| self.bad(error.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn read(tool: &str, value: Value) -> Result<ToolCall, ArgumentError> {
        let Value::Object(map) = value else {
            panic!("test arguments are an object")
        };
        ToolCall::read(tool, &map)
    }

    #[test]
    fn a_command_call_keeps_its_args_whole() {
        let call = read(
            "command",
            json!({"name": "log_run", "args": {"who": "Ada", "miles": "5"}}),
        );
        assert_eq!(
            call,
            Ok(ToolCall::Command {
                name: "log_run".into(),
                args: json!({"who": "Ada", "miles": "5"}),
                app: None,
                approval: None
            })
        );
    }

    #[test]
    fn a_command_without_args_gets_an_empty_object() {
        let call = read(
            "command",
            json!({"name": "leaderboard", "app": "jeff/runs"}),
        );
        assert_eq!(
            call,
            Ok(ToolCall::Command {
                name: "leaderboard".into(),
                args: json!({}),
                app: Some("jeff/runs".into()),
                approval: None
            })
        );
    }

    #[test]
    fn a_missing_name_is_a_sentence_naming_it() {
        let call = read("command", json!({"args": {}}));
        assert_eq!(
            call,
            Err(ArgumentError::Bad(
                "command needs name — the command's name, as commands lists it".into()
            ))
        );
    }

    #[test]
    fn app_files_reads_writes_deletes_and_reads() {
        let call = read(
            "app_files",
            json!({"app": "runs", "write": {"a.html": "<p>", "old.html": null}, "read": ["tools.json"]}),
        );
        let mut write = BTreeMap::new();
        write.insert("a.html".to_string(), Some("<p>".to_string()));
        write.insert("old.html".to_string(), None);
        assert_eq!(
            call,
            Ok(ToolCall::AppFiles {
                app: "runs".into(),
                write,
                read: vec!["tools.json".into()]
            })
        );
    }

    #[test]
    fn a_wrong_access_names_the_three() {
        let call = read("app_deploy", json!({"app": "runs", "access": "secret"}));
        assert_eq!(
            call,
            Err(ArgumentError::Bad(
                "secret is not an access level — say private, public or open".into()
            ))
        );
    }

    #[test]
    fn an_unknown_tool_names_the_seven() {
        let call = read("deploy", json!({}));
        assert_eq!(
            call.unwrap_err().to_string(),
            "no tool deploy — shed's tools are commands, command, graph_query, graph_apply, app_files, app_deploy, spaces"
        );
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{0,8}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_arguments_to_any_tool_read_or_refuse_without_panicking(
            tool in prop_oneof![
                Just("commands".to_string()), Just("command".to_string()),
                Just("graph_query".to_string()), Just("graph_apply".to_string()),
                Just("app_files".to_string()), Just("app_deploy".to_string()),
                Just("spaces".to_string()), "[a-z_]{0,10}"
            ],
            keys in prop::collection::btree_map(
                prop_oneof![
                    Just("app".to_string()), Just("name".to_string()), Just("args".to_string()),
                    Just("filter".to_string()), Just("bundle".to_string()), Just("write".to_string()),
                    Just("read".to_string()), Just("title".to_string()), Just("access".to_string()),
                    "[a-z]{1,6}"
                ],
                any_json(),
                0..6,
            )
        ) {
            let map: JsonObject = keys.into_iter().collect();
            match ToolCall::read(&tool, &map) {
                Ok(_) => {}
                Err(error) => prop_assert!(!error.to_string().is_empty()),
            }
        }
    }
}
