//! Prompts: what a client shows as slash commands. One per app in the
//! caller's reach, named `<space>/<app>` — what the app keeps, its commands
//! and how to call them through `commands` and `command` — and `tour`, a
//! walk through the caller's spaces. Each prompt's text is written here, so
//! every door says the same words; the list follows reach, like `commands`.
//! A signed-out caller reaches no app, so has no prompt.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use shed_manifest::ArgType;

use crate::names::shown;
use crate::reach::Reach;
use crate::registry::{AppParts, LiveApp, Snapshot};
use crate::texts::{NO_APPS_YET, bounded_list, count};
use crate::{Caller, Host, HostError};

/// The name of the prompt that tours the caller's spaces. No app prompt can
/// take it: an app's prompt is named `<space>/<app>`.
pub const TOUR_PROMPT: &str = "tour";

/// The argument of an app's prompt that narrows it to one command.
pub const COMMAND_ARGUMENT: &str = "command";

/// The argument of the tour that narrows it to one space.
pub const SPACE_ARGUMENT: &str = "space";

/// How many completions one answer offers (MCP's limit for `completion/complete`).
pub const MAX_COMPLETIONS: usize = 100;

/// A prompt as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PromptEntry {
    /// `jeff/runs`, or `tour`.
    pub name: String,
    /// `Run club`, or `A tour of your spaces`.
    pub title: String,
    /// One sentence on what the prompt is for.
    pub description: String,
    /// The arguments it takes, each optional.
    pub arguments: Vec<PromptArgument>,
}

/// An argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PromptArgument {
    /// What the client passes it as: [`COMMAND_ARGUMENT`] for an app's
    /// prompt, [`SPACE_ARGUMENT`] for the tour.
    pub name: String,
    /// One sentence a person reads in the client: what to give, and what
    /// leaving it out does.
    pub description: String,
    /// A client must give it; `false` for every argument shed offers
    /// (each may be left out).
    pub required: bool,
}

/// A prompt filled in: its description and the one message a client puts in
/// the conversation, as the person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptText {
    /// What the filled prompt is, in a line: `Run club — jeff/runs`, or `A
    /// tour of ada's spaces`.
    pub description: String,
    /// The message itself, as the person would have typed it: what the app
    /// or the spaces hold and how to use their commands.
    pub text: String,
}

/// Completions for one argument of a prompt: the values that start with
/// what was typed, at most [`MAX_COMPLETIONS`], and how many there were.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completions {
    /// The matching values, at most [`MAX_COMPLETIONS`] of them.
    pub values: Vec<String>,
    /// How many values matched in all, those left out of `values` too.
    pub total: usize,
}

impl Host {
    /// The prompts of the caller: one per app in reach, in listing order,
    /// then the tour. A signed-out caller has none.
    pub async fn prompts(&self, caller: &Caller) -> Result<Vec<PromptEntry>, HostError> {
        if caller.person().is_none() {
            return Ok(Vec::new());
        }
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let mut entries: Vec<PromptEntry> = reach
            .apps(&snapshot)
            .into_iter()
            .map(|app| app_entry(app))
            .collect();
        entries.push(tour_entry(&reach));
        Ok(entries)
    }

    /// A prompt filled in with its arguments. An unknown prompt, or an app
    /// out of reach, is `no prompt …` naming the ones there are.
    pub async fn prompt(
        &self,
        caller: &Caller,
        name: &str,
        arguments: &HashMap<String, String>,
    ) -> Result<PromptText, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let wanted = |argument: &str| {
            arguments
                .get(argument)
                .map(|value| value.trim())
                .filter(|value| !value.is_empty())
        };
        if name == TOUR_PROMPT {
            refuse_unknown_arguments(name, arguments.keys().map(String::as_str), SPACE_ARGUMENT)?;
            return tour(self, &reach, &snapshot, wanted(SPACE_ARGUMENT)).await;
        }
        let app = prompt_app(&reach, &snapshot, name)?;
        refuse_unknown_arguments(name, arguments.keys().map(String::as_str), COMMAND_ARGUMENT)?;
        let parts = self.parts(&app).await?;
        app_prompt(&app, &parts, wanted(COMMAND_ARGUMENT))
    }

    /// The values a prompt's argument may take that start with `typed`: an
    /// app's command names for its prompt's `command`, the caller's space
    /// slugs for the tour's `space`.
    pub async fn complete_prompt_argument(
        &self,
        caller: &Caller,
        name: &str,
        argument: &str,
        typed: &str,
    ) -> Result<Completions, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let candidates: Vec<String> = if name == TOUR_PROMPT {
            refuse_unknown_arguments(name, [argument], SPACE_ARGUMENT)?;
            reach.roles.keys().cloned().collect()
        } else {
            let app = prompt_app(&reach, &snapshot, name)?;
            refuse_unknown_arguments(name, [argument], COMMAND_ARGUMENT)?;
            app.command_names()
        };
        let matching: Vec<String> = candidates
            .into_iter()
            .filter(|candidate| candidate.starts_with(typed))
            .collect();
        let total = matching.len();
        Ok(Completions {
            values: matching.into_iter().take(MAX_COMPLETIONS).collect(),
            total,
        })
    }
}

/// The app an app prompt's name names, among the caller's spaces only.
fn prompt_app(reach: &Reach, snapshot: &Snapshot, name: &str) -> Result<Arc<LiveApp>, HostError> {
    reach
        .apps(snapshot)
        .into_iter()
        .find(|app| app.name == name)
        .cloned()
        .ok_or_else(|| {
            let mut names: Vec<String> = reach
                .apps(snapshot)
                .iter()
                .map(|app| app.name.clone())
                .collect();
            names.push(TOUR_PROMPT.to_string());
            HostError::NotFound(format!(
                "no prompt {} — your prompts are {}",
                shown(name),
                bounded_list(&names)
            ))
        })
}

/// Refuses an argument the prompt does not take, naming the one it does.
fn refuse_unknown_arguments<'a>(
    prompt: &str,
    arguments: impl IntoIterator<Item = &'a str>,
    takes: &str,
) -> Result<(), HostError> {
    for argument in arguments {
        if argument != takes {
            return Err(HostError::BadInput(format!(
                "the prompt {prompt} takes no argument {} — it takes {takes}",
                shown(argument)
            )));
        }
    }
    Ok(())
}

fn app_entry(app: &LiveApp) -> PromptEntry {
    PromptEntry {
        name: app.name.clone(),
        title: app.title.clone(),
        description: format!(
            "{}: what {} is for, its {} and how to call them",
            app.title,
            app.name,
            count(app.commands.len(), "command", "commands")
        ),
        arguments: vec![PromptArgument {
            name: COMMAND_ARGUMENT.to_string(),
            description: format!(
                "One command of {} to use now (leave it out for all of them)",
                app.name
            ),
            required: false,
        }],
    }
}

fn tour_entry(reach: &Reach) -> PromptEntry {
    PromptEntry {
        name: TOUR_PROMPT.to_string(),
        title: "A tour of your spaces".to_string(),
        description: format!(
            "Show {} around their spaces: each one's apps, what they keep and what they can do",
            reach.person.handle
        ),
        arguments: vec![PromptArgument {
            name: SPACE_ARGUMENT.to_string(),
            description: "One of your spaces to tour (leave it out for all of them)".to_string(),
            required: false,
        }],
    }
}

/// What an app keeps: `jog (who, miles, at)`, one kind a part.
fn kinds(parts: &AppParts) -> String {
    let kinds: Vec<String> = parts
        .manifest
        .vocab
        .components
        .iter()
        .map(|(kind, columns)| {
            let columns: Vec<&str> = columns.keys().map(String::as_str).collect();
            format!("{kind} ({})", columns.join(", "))
        })
        .collect();
    if kinds.is_empty() {
        "documents and comments only (its vocab.json declares no kind)".to_string()
    } else {
        kinds.join("; ")
    }
}

/// `Run club (jeff/runs), a private app at http://jeff.localhost:7700/runs/, v3.`
fn introduction(app: &LiveApp, parts: &AppParts) -> String {
    format!(
        "{} ({}) is a {} app of the space {}, at {}, v{}. It keeps {}.",
        app.title,
        app.name,
        app.access,
        app.space,
        app.address,
        app.version,
        kinds(parts)
    )
}

/// A `command` call written out, as the tool takes it: a number argument
/// as a number (`3`), a bool as `true`, any other as `"<its name>"` — each
/// of the JSON type the call must send.
fn call_example(app: &LiveApp, command: &shed_manifest::Command) -> String {
    let args: serde_json::Map<String, serde_json::Value> = command
        .input
        .iter()
        .map(|argument| {
            let example = match argument.ty {
                ArgType::Number => json!(3),
                ArgType::Bool => json!(true),
                ArgType::Text | ArgType::Time | ArgType::Url => {
                    json!(format!("<{}>", argument.name))
                }
            };
            (argument.name.clone(), example)
        })
        .collect();
    json!({ "name": command.name, "args": args, "app": app.name }).to_string()
}

fn app_prompt(
    app: &LiveApp,
    parts: &AppParts,
    focus: Option<&str>,
) -> Result<PromptText, HostError> {
    let mut lines = vec![introduction(app, parts)];
    match focus {
        Some(name) => {
            let command = parts.manifest.command(name).ok_or_else(|| {
                HostError::NotFound(format!(
                    "no command {} in {} — its commands are {}",
                    shown(name),
                    app.name,
                    bounded_list(&app.command_names())
                ))
            })?;
            lines.push(format!(
                "I want to use its command {} — {}.",
                command.call_shape(),
                command.description
            ));
            lines.push(format!(
                "Ask me for any argument it needs that I have not given (one marked ? may be \
                 left out), then run it with the tool `command`: {}. Tell me what the answer \
                 says.",
                call_example(app, command)
            ));
        }
        None if parts.manifest.commands.is_empty() => lines.push(format!(
            "It offers no commands yet: read and write its data with `graph_query` and \
             `graph_apply` on app {}, or give it commands with `app_files` (a tools.json, or a \
             kind in its vocab.json) and `app_deploy`.",
            app.name
        )),
        None => {
            lines.push(format!(
                "Its commands — each is run with the tool `command`, never as a tool of its own \
                 (an argument marked ? may be left out):\n{}",
                parts
                    .listing
                    .lines()
                    .skip(1)
                    .map(|line| format!("- {line}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
            if let Some(first) = parts.manifest.commands.first() {
                lines.push(format!(
                    "To run one, call `command` with its name, its arguments as `args` and the \
                     app, e.g. {}. `commands` with app {} lists them again with each \
                     argument's type.",
                    call_example(app, first),
                    app.name
                ));
            }
            lines.push(
                "Help me with this app: ask what I want to do, then do it with these commands."
                    .to_string(),
            );
        }
    }
    Ok(PromptText {
        description: format!("{} — {}", app.title, app.name),
        text: lines.join("\n\n"),
    })
}

async fn tour(
    host: &Host,
    reach: &Reach,
    snapshot: &Snapshot,
    focus: Option<&str>,
) -> Result<PromptText, HostError> {
    let spaces: Vec<(&String, &crate::Role)> = match focus {
        Some(space) => vec![reach.roles.get_key_value(space).ok_or_else(|| {
            let yours: Vec<String> = reach.roles.keys().cloned().collect();
            HostError::NotFound(if yours.is_empty() {
                format!(
                    "no space {} of yours — you belong to no space yet",
                    shown(space)
                )
            } else {
                format!(
                    "no space {} of yours — your spaces are {}",
                    shown(space),
                    bounded_list(&yours)
                )
            })
        })?],
        None => reach.roles.iter().collect(),
    };
    let mut lines = vec![format!(
        "Show me ({}, @{}) around my spaces on shed: what each app is for and what I can \
         do there. Use the tools `spaces` and `commands` for anything this leaves out, and \
         `command` to try a command when I ask.",
        reach.person.name, reach.person.handle
    )];
    if spaces.is_empty() {
        lines.push(format!(
            "I belong to no space yet — an owner of a space can add me (shed member add <space> {} --role editor).",
            reach.person.handle
        ));
    }
    for (space, role) in spaces {
        let apps = snapshot.apps_in(space);
        let mut part = vec![format!("## {space} — I am {} here", role.with_article())];
        if apps.is_empty() {
            part.push(NO_APPS_YET.to_string());
        }
        for (app, parts) in apps.iter().zip(host.parts_of(&apps).await?) {
            let commands = app.command_names();
            part.push(format!(
                "- {} — {}, {}, {}: keeps {}; commands: {}",
                app.name,
                app.title,
                app.access,
                app.address,
                kinds(&parts),
                if commands.is_empty() {
                    "none yet".to_string()
                } else {
                    bounded_list(&commands)
                }
            ));
        }
        lines.push(part.join("\n"));
    }
    Ok(PromptText {
        description: format!("A tour of {}'s spaces", reach.person.handle),
        text: lines.join("\n\n"),
    })
}
