//! `shed-harness mcp`: the allowed tools served over MCP stdio (rmcp). A
//! call whose decision could not be recorded ends the service with that
//! sentence.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::harness::{CancelFlag, Harness};
use crate::transcript;

/// The MCP face of one run.
pub struct McpServer {
    harness: Arc<Harness>,
    transcript: Option<PathBuf>,
    /// Told when the run stops: a decision could not be recorded.
    stopped: Arc<tokio::sync::Notify>,
}

/// Serves until the client closes stdin.
pub async fn serve(
    harness: Arc<Harness>,
    transcript: Option<PathBuf>,
) -> Result<(), std::io::Error> {
    let stopped = Arc::new(tokio::sync::Notify::new());
    let server = McpServer {
        harness: harness.clone(),
        transcript,
        stopped: stopped.clone(),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialization failed: {e}")))?;
    let token = running.cancellation_token();
    tokio::select! {
        done = running.waiting() => {
            done.map_err(|e| std::io::Error::other(format!("the MCP service stopped: {e}")))?;
            Ok(())
        }
        () = stopped.notified() => {
            token.cancel();
            Err(std::io::Error::other(harness.trace_failure().unwrap_or_default()))
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("shed-harness", env!("CARGO_PKG_VERSION")))
            .with_instructions("list_commands shows what this run may run; run_command and run_read_command run it.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .harness
            .tools()
            .iter()
            .map(|tool| {
                let schema = match tool.input_schema() {
                    Value::Object(map) => map,
                    _ => Default::default(),
                };
                Tool::new(tool.as_str(), tool.description(), Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let input = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        let cancel = CancelFlag::default();
        let watcher = {
            let cancel = cancel.clone();
            let token = context.ct.clone();
            tokio::spawn(async move {
                token.cancelled().await;
                cancel.cancel();
            })
        };
        let result = self
            .harness
            .call_cancellable(&request.name, input, &cancel)
            .await;
        watcher.abort();
        transcript::write(
            self.transcript.as_deref(),
            json!({ "journal": self.harness.journal_json() }),
        );
        if self.harness.trace_failure().is_some() {
            self.stopped.notify_one();
        }
        let text = result.to_string();
        let mut answer = CallToolResult::success(vec![ContentBlock::text(text)]);
        answer.structured_content = Some(result);
        Ok(answer.into())
    }
}
