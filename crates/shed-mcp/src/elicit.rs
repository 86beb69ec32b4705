//! Asking the person inside their client (MCP elicitation, form mode),
//! where the client declared it can: a write kept for its person's
//! approval is shown in the client — who asks, the command, its app, its
//! arguments exactly as they will run — with Approve and Decline. Their
//! answer decides the approval (`Host::decide_in_client`): approved, it
//! runs once, attributed to the client, approved by the person; declined
//! or cancelled, nothing runs and the answer says so. A client that
//! declared no elicitation, or one that fails to answer within
//! [`ELICITATION_TIMEOUT`], gets the page's address instead (the approval
//! stays pending there).

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use serde_json::Value;
use shed_host::answer::ApprovalState;
use shed_host::{Answer, Caller, Host};

use crate::answers::{answered, refused};

/// How long a tool call waits for the person to answer in their client
/// before it answers with the approval's address instead.
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(300);

/// The answer to a call kept for approval: asked in the client when it
/// declared form elicitation, else the waiting answer with the address.
pub(crate) async fn ask_in_client(
    host: &Host,
    caller: &Caller,
    peer: &Peer<RoleServer>,
    waiting: Answer<ApprovalState>,
) -> CallToolResult {
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return answered(waiting.widen());
    }
    let id = waiting.data.approval;
    let Ok(shown) = host.approval(caller, id).await else {
        return answered(waiting.widen());
    };
    let message = format!(
        "{} asks to run {} in {} with these arguments, exactly as they will run:\n{}\n\
         Approve runs it once; Decline runs nothing.",
        shown.asked_by, shown.command, shown.app, shown.args
    );
    let schema = ElicitationSchema::builder()
        .optional_bool("approve", true)
        .title(format!("Approve {} in {}?", shown.command, shown.app))
        .build_unchecked();
    let asked = peer
        .create_elicitation_with_timeout(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            },
            Some(ELICITATION_TIMEOUT),
        )
        .await;
    let approve = match asked {
        Ok(result) => match result.action {
            ElicitationAction::Accept => result
                .content
                .as_ref()
                .and_then(|content| content.get("approve"))
                .and_then(Value::as_bool)
                .unwrap_or(true),
            _ => false,
        },
        Err(error) => {
            tracing::debug!(%error, "the client did not answer an approval; the page waits");
            return answered(waiting.widen());
        }
    };
    if let Err(error) = host.decide_in_client(caller, id, approve).await {
        return refused(&error);
    }
    match host.approval_outcome(caller, id).await {
        Ok(outcome) => answered(outcome.widen()),
        Err(error) => refused(&error),
    }
}
