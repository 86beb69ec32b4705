//! The MCP door over stdio (`shed mcp --as <handle>`): one session, every
//! request made as the person named.

use rmcp::ServiceExt;
use shed_host::{Caller, Host};

use crate::door::Door;

/// Why the stdio door stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioDoorError {
    /// The client never completed the MCP handshake.
    #[error("the MCP client on stdin did not start a session: {0}")]
    Start(String),
    /// The session's task ended abnormally.
    #[error("the MCP session on stdio ended abnormally: {0}")]
    Ended(String),
}

/// Serves MCP on stdin/stdout as `caller` until the client hangs up.
pub async fn serve_stdio(host: Host, caller: Caller) -> Result<(), StdioDoorError> {
    let running = Door::as_caller(host, caller)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| StdioDoorError::Start(error.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|error| StdioDoorError::Ended(error.to_string()))?;
    Ok(())
}
