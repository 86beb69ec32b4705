//! The MCP door's reading of a tool call's arguments: any tool name and any
//! JSON object read into a call or refuse with a sentence, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shed_mcp::{TOOL_NAMES, ToolCall};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    let Ok(arguments) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(json) else {
        return;
    };
    let tool = TOOL_NAMES.get(usize::from(pick) % (TOOL_NAMES.len() + 1)).copied().unwrap_or("no_such_tool");
    if let Err(error) = ToolCall::read(tool, &arguments) {
        assert!(!error.to_string().is_empty());
    }
});
