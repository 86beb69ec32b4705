//! shed's MCP door, through the official rmcp SDK: the fixed tool list
//! (`commands`, `command`, `graph_query`, `graph_apply`, `app_files`,
//! `app_deploy`, `spaces`), the apps' views as `ui://` resources, a prompt
//! per app in reach and a tour of the caller's spaces (with completions of
//! their arguments), and the `tools/list_changed`, `resources/list_changed`
//! and `prompts/list_changed` notifications — over
//! Streamable HTTP at `/mcp` (bearer token) and over stdio (one person).
//!
//! Every tool call is one call of a [`shed_host::Host`] method; the door
//! translates the protocol and decides nothing about access.

mod answers;
mod args;
mod door;
mod elicit;
mod http;
mod measured;
mod prompts;
mod session_log;
mod sessions;
mod stdio;
mod tools;
mod views;
mod watch;

pub use args::{ArgumentError, ToolCall};
pub use door::{Door, ListedTools};
pub use elicit::ELICITATION_TIMEOUT;
pub use http::{AllowedCallers, HttpDoorError, MCP_PATH, router};
pub use session_log::MAX_LOGGED_CLIENT_NAME;
pub use sessions::{
    IPV6_ADDRESS_BITS, MAX_SESSIONS, MAX_SESSIONS_PER_PERSON, MAX_SIGNED_OUT_SESSIONS,
    MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS, SessionRefusal, UNUSED_SESSION_TIMEOUT,
};
pub use stdio::{StdioDoorError, serve_stdio};
pub use tools::{TOOL_NAMES, TOOLS_CHANGED_LINE, fingerprint, tools};
pub use views::VIEW_MIME_TYPE;
