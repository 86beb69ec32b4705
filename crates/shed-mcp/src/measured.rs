//! The door's requests, counted and timed by MCP method and, for
//! `tools/call`, by tool: a [`Timed`] is made as a handler starts and
//! records when it is dropped, answered or not. A tool the door does not
//! know is counted as `other`, so a caller cannot grow the series. Costs
//! nothing unless `shed serve` installed a metrics recorder.
//!
//! The method and tool are named once, here: a [`Timed`] also writes them
//! on the handler's `mcp call` span, which each handler opens with the
//! fields `method` and `tool` left empty.

use std::time::Instant;

use crate::tools::TOOL_NAMES;

/// Requests answered, by `method` and `tool`.
const MCP_REQUESTS: &str = "shed_mcp_requests_total";
/// Their time, by `method` and `tool`.
const MCP_REQUEST_SECONDS: &str = "shed_mcp_request_duration_seconds";

/// One request of the door, timed from when it was made until dropped.
pub(crate) struct Timed {
    method: &'static str,
    tool: &'static str,
    started: Instant,
}

impl Timed {
    /// A request of `method` (`resources/list`, …).
    pub(crate) fn method(method: &'static str) -> Timed {
        Timed::of(method, "")
    }

    /// A `tools/call` of the tool `name`.
    pub(crate) fn tool(name: &str) -> Timed {
        Timed::of("tools/call", tool_label(name))
    }

    /// Timed from now, and named on the current span (the handler's).
    fn of(method: &'static str, tool: &'static str) -> Timed {
        let span = tracing::Span::current();
        span.record("method", method);
        if !tool.is_empty() {
            span.record("tool", tool);
        }
        Timed {
            method,
            tool,
            started: Instant::now(),
        }
    }
}

/// A tool's label: its name when it is one of the door's, else `other`.
fn tool_label(name: &str) -> &'static str {
    TOOL_NAMES
        .iter()
        .find(|known| **known == name)
        .copied()
        .unwrap_or("other")
}

impl Drop for Timed {
    fn drop(&mut self) {
        let (method, tool) = (self.method, self.tool);
        metrics::counter!(MCP_REQUESTS, "method" => method, "tool" => tool).increment(1);
        metrics::histogram!(MCP_REQUEST_SECONDS, "method" => method, "tool" => tool)
            .record(self.started.elapsed());
    }
}
