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
//!
//! On 2026-07-28, which holds no session and sends no request to a client,
//! a request whose `_meta` declares form elicitation is answered with a
//! result of type `input_required`: the same form as `inputRequests`'
//! [`INPUT_KEY`], and a `requestState` the host signs
//! (`Host::approval_request_state`); the client's retry with
//! `inputResponses` and the echoed state is verified and decided by the
//! host (`Host::answer_request_state`), once.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ElicitRequest, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequiredResult, InputResponses,
    ProtocolVersion,
};
use rmcp::service::{ElicitationMode, RequestContext};
use serde_json::Value;
use shed_host::answer::ApprovalState;
use shed_host::{Answer, Caller, Host};

use crate::answers::{answered, refused};

/// How long a tool call waits for the person to answer in their client
/// before it answers with the approval's address instead.
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(300);

/// The key of the one input request an approval asks (`inputRequests`,
/// `inputResponses`).
pub const INPUT_KEY: &str = "approval";

/// Whether a client's capabilities declare form elicitation (an empty
/// `elicitation` object means form only).
fn declares_form(capabilities: Option<ClientCapabilities>) -> bool {
    capabilities
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// Whether the person approved, as an elicitation's answer says: accepted,
/// and `approve` not false.
fn approved(action: &ElicitationAction, content: Option<&Value>) -> bool {
    matches!(action, ElicitationAction::Accept)
        && content
            .and_then(|content| content.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(true)
}

/// The form asking the person about approval `id`: the message (who asks,
/// the command, its app, its arguments as they will run) and its schema.
async fn form(host: &Host, caller: &Caller, id: i64) -> Option<ElicitRequestParams> {
    let shown = host.approval(caller, id).await.ok()?;
    let message = format!(
        "{} asks to run {} in {} with these arguments, exactly as they will run:\n{}\n\
         Approve runs it once; Decline runs nothing.",
        shown.asked_by, shown.command, shown.app, shown.args
    );
    let requested_schema = ElicitationSchema::builder()
        .optional_bool("approve", true)
        .title(format!("Approve {} in {}?", shown.command, shown.app))
        .build_unchecked();
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    })
}

/// The answer to a call kept for approval — `command` with `args`, when it
/// is a command's call: asked in the client when it declared form
/// elicitation (a request to it, or on 2026-07-28 `input_required`), else
/// the waiting answer with the address.
pub(crate) async fn ask_in_client(
    host: &Host,
    caller: &Caller,
    context: &RequestContext<RoleServer>,
    waiting: Answer<ApprovalState>,
    command: Option<(&str, &Value)>,
) -> CallToolResponse {
    let id = waiting.data.approval;
    if context.protocol_version() == Some(ProtocolVersion::V_2026_07_28) {
        let (true, Some((name, args))) = (declares_form(context.client_capabilities()), command)
        else {
            return answered(waiting.widen()).into();
        };
        let Some(params) = form(host, caller, id).await else {
            return answered(waiting.widen()).into();
        };
        let state = match host
            .approval_request_state(caller, &waiting.data, name, args)
            .await
        {
            Ok(state) => state,
            Err(error) => return refused(&error).into(),
        };
        let requests = [(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        )];
        return CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests.into_iter().collect()),
            Some(state),
        ));
    }
    let peer = &context.peer;
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return answered(waiting.widen()).into();
    }
    let Some(params) = form(host, caller, id).await else {
        return answered(waiting.widen()).into();
    };
    let asked = peer
        .create_elicitation_with_timeout(params, Some(ELICITATION_TIMEOUT))
        .await;
    let approve = match asked {
        Ok(result) => approved(&result.action, result.content.as_ref()),
        Err(error) => {
            tracing::debug!(%error, "the client did not answer an approval; the page waits");
            return answered(waiting.widen()).into();
        }
    };
    if let Err(error) = host.decide_in_client(caller, id, approve).await {
        return refused(&error).into();
    }
    match host.approval_outcome(caller, id).await {
        Ok(outcome) => answered(outcome.widen()).into(),
        Err(error) => refused(&error).into(),
    }
}

/// A 2026-07-28 retry of `command` with `args`, echoing `state` with the
/// person's answer in `responses`: the host verifies the state and decides
/// the approval once.
pub(crate) async fn answer_retry(
    host: &Host,
    caller: &Caller,
    state: &str,
    responses: Option<&InputResponses>,
    command: &str,
    args: &Value,
) -> CallToolResult {
    let Some(answer) = responses.and_then(|responses| responses.get(INPUT_KEY)) else {
        return refused(&shed_host::HostError::BadInput(format!(
            "the retry carries no answer — send the person's answer to the form as inputResponses.{INPUT_KEY}, with the requestState"
        )));
    };
    let action: Option<ElicitationAction> = answer
        .get("action")
        .and_then(|action| serde_json::from_value(action.clone()).ok());
    let approve = action.is_some_and(|action| approved(&action, answer.get("content")));
    match host
        .answer_request_state(caller, state, command, args, approve)
        .await
    {
        Ok(outcome) => answered(outcome.widen()),
        Err(error) => refused(&error),
    }
}
