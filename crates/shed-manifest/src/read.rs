//! Reading an app's files into its [`Manifest`]: `vocab.json`, then
//! `tools.json` or `tools.yml`, then the generated kind commands — or the one
//! sentence naming every problem, file by file, in file order.

use std::collections::BTreeMap;

use crate::document::{self, Format};
use crate::{Manifest, PLATFORM_COMPONENTS, Refusal, generated, tools, vocab};

/// Reads the files (path relative to the app root → bytes) of the app named
/// `app` — `<space>/<app>`, as the generated commands' descriptions name it
/// ("Add a recipe to jeff/recipes") — against the components the platform
/// says ([`PLATFORM_COMPONENTS`]).
pub fn read_app(files: &BTreeMap<String, Vec<u8>>, app: &str) -> Result<Manifest, Refusal> {
    read_app_with(files, app, PLATFORM_COMPONENTS)
}

/// [`read_app`], naming the components the platform says.
pub fn read_app_with(
    files: &BTreeMap<String, Vec<u8>>,
    app: &str,
    platform: &[&str],
) -> Result<Manifest, Refusal> {
    let mut parts: Vec<String> = Vec::new();

    let (vocab_read, vocab_readable) = match files.get("vocab.json") {
        None => (vocab::read(&serde_json::json!({}), platform), true),
        Some(bytes) => match document::parse("vocab.json", bytes, Format::Json) {
            Ok(doc) => (vocab::read(&doc, platform), true),
            Err(sentence) => {
                parts.push(sentence);
                (vocab::VocabRead::default(), false)
            }
        },
    };

    let is_component = |name: &str| {
        !vocab_readable || platform.contains(&name) || vocab_read.declared.iter().any(|d| d == name)
    };
    let context = tools::Context {
        files,
        is_component: &is_component,
    };
    let mut tools_part = None;
    let tools_read = match (files.get("tools.json"), files.get("tools.yml")) {
        (Some(_), Some(_)) => {
            tools_part = Some("tools.json and tools.yml — keep one".to_owned());
            tools::ToolsRead::default()
        }
        (None, None) => tools::ToolsRead::default(),
        (Some(bytes), None) => {
            read_tools("tools.json", bytes, Format::Json, &context, &mut tools_part)
        }
        (None, Some(bytes)) => {
            read_tools("tools.yml", bytes, Format::Yaml, &context, &mut tools_part)
        }
    };

    let mut vocab_problems = vocab_read.problems;
    if vocab_read.generate {
        vocab_problems.extend(generated::collisions(&vocab_read.vocab, &tools_read.names));
    }
    parts.extend(part("vocab.json", &vocab_problems));
    parts.extend(tools_part);
    if !parts.is_empty() {
        return Err(Refusal(parts.join("; ")));
    }

    let mut commands = tools_read.commands;
    if vocab_read.generate {
        commands.extend(generated::kind_commands(
            &vocab_read.vocab,
            &tools_read.names,
            app,
        ));
    }
    Ok(Manifest {
        vocab: vocab_read.vocab,
        commands,
    })
}

/// Reads the one tools file there is; its part of the sentence, if it has
/// problems, goes to `said`.
fn read_tools(
    file: &str,
    bytes: &[u8],
    format: Format,
    context: &tools::Context,
    said: &mut Option<String>,
) -> tools::ToolsRead {
    match document::parse(file, bytes, format) {
        Ok(doc) => {
            let read = tools::read(doc, context);
            *said = part(file, &read.problems);
            read
        }
        Err(sentence) => {
            *said = Some(sentence);
            tools::ToolsRead::default()
        }
    }
}

/// `file: ` and the file's problems joined by `; `, each said once.
fn part(file: &str, problems: &[String]) -> Option<String> {
    let mut said: Vec<&str> = Vec::with_capacity(problems.len());
    for problem in problems {
        if !said.contains(&problem.as_str()) {
            said.push(problem);
        }
    }
    (!said.is_empty()).then(|| format!("{file}: {}", said.join("; ")))
}
