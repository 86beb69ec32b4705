//! The host's prompts in the protocol's shape: a [`PromptEntry`] is a
//! `prompts/list` item, a [`PromptText`] a `prompts/get` answer (one user
//! message), [`Completions`] a `completion/complete` answer. The texts and
//! who sees which prompt are the host's.

use std::collections::HashMap;

use rmcp::model::{
    CompleteResult, CompletionInfo, GetPromptResult, JsonObject, Prompt, PromptArgument,
    PromptMessage, Role,
};
use serde_json::Value;
use shed_host::prompts::{Completions, PromptEntry, PromptText};

/// A prompt as `prompts/list` shows it.
pub fn listed(entry: PromptEntry) -> Prompt {
    let arguments = entry
        .arguments
        .into_iter()
        .map(|argument| {
            PromptArgument::new(argument.name)
                .with_description(argument.description)
                .with_required(argument.required)
        })
        .collect();
    Prompt::new(entry.name, Some(entry.description), Some(arguments)).with_title(entry.title)
}

/// A `prompts/get`'s arguments as the host takes them: strings, as the
/// protocol says; a client that sends a number or a boolean means its text.
pub fn arguments(given: Option<JsonObject>) -> HashMap<String, String> {
    given
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => (name, text),
            other => (name, other.to_string()),
        })
        .collect()
}

/// A prompt filled in: one message, as the person's.
pub fn filled(prompt: PromptText) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, prompt.text)])
        .with_description(prompt.description)
}

/// The completions of a prompt's argument.
pub fn completed(completions: Completions) -> CompleteResult {
    let total = u32::try_from(completions.total).unwrap_or(u32::MAX);
    let has_more = completions.total > completions.values.len();
    // The host offers at most MCP's 100 values, so this is never refused.
    let info = CompletionInfo::with_pagination(completions.values, Some(total), has_more)
        .unwrap_or_default();
    CompleteResult::new(info)
}
