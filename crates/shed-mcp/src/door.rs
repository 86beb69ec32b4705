//! The MCP server handler: who is calling, one host method per tool call,
//! the views as resources, the prompts and their completions, and the
//! list-changed notifications. It holds no access rule — every answer and
//! refusal is the host's.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
};

use axum::extract::ConnectInfo;
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, Extensions,
        GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams,
        InitializeResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, Reference,
        ServerCapabilities, ServerConfig, SubscriptionFilter,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use shed_host::credentials::Credentials;
use shed_host::{Answer, Caller, Host, HostError};

use crate::{
    answers::{answered, refused, unreadable, with_line},
    args::{ArgumentError, ToolCall},
    measured::Timed,
    prompts,
    session_log::SessionLog,
    tools::{TOOLS_CHANGED_LINE, fingerprint, tools},
    views,
    watch::{Notifier, ReachWatch},
};

/// What the server tells a client about itself on connecting.
const INSTRUCTIONS: &str = "shed hosts small apps in spaces. An app's own verbs are not tools: \
call `commands` to see every command of the apps you reach, then `command` to run one. \
`spaces` shows where the apps live; `graph_query` and `graph_apply` read and write an app's data \
where no command fits; `app_files` and `app_deploy` build and ship an app.";

/// One connection's handler. Cheap to clone; the HTTP door makes one per
/// session (or per request, for the sessionless protocol).
#[derive(Clone)]
pub struct Door {
    host: Host,
    identity: Identity,
    listed: ListedTools,
    /// The session this handler serves, logged as it opens and closes.
    session: SessionLog,
}

/// How the door knows who is calling.
#[derive(Clone)]
enum Identity {
    /// Streamable HTTP: the bearer token in each request's Authorization header.
    Bearer,
    /// stdio: the person named when the door was opened (`shed mcp --as`).
    Fixed(Caller),
}

impl Door {
    /// A door that reads the caller from each HTTP request's bearer token.
    pub fn over_http(host: Host, listed: ListedTools) -> Door {
        Door {
            host,
            identity: Identity::Bearer,
            listed,
            session: SessionLog::default(),
        }
    }

    /// A door whose every request comes from one caller.
    pub fn as_caller(host: Host, caller: Caller) -> Door {
        Door {
            host,
            identity: Identity::Fixed(caller),
            listed: ListedTools::default(),
            session: SessionLog::default(),
        }
    }

    /// Who is calling: nobody without a token; an unknown token is the
    /// host's sign-in sentence.
    async fn caller(&self, extensions: &Extensions) -> Result<Caller, HostError> {
        match &self.identity {
            Identity::Fixed(caller) => Ok(caller.clone()),
            Identity::Bearer => match extensions.get::<http::request::Parts>() {
                None => Ok(Caller::Nobody),
                Some(parts) => match parts.extensions.get::<Resolved>() {
                    Some(Resolved(caller)) => Ok(caller.clone()),
                    None => caller_of(&self.host, &parts.headers).await,
                },
            },
        }
    }

    /// One tool call, one host method; `from` is the address the call came
    /// from, when known.
    async fn dispatch(
        &self,
        caller: &Caller,
        from: Option<IpAddr>,
        call: ToolCall,
    ) -> Result<Answer, HostError> {
        let host = &self.host;
        match call {
            ToolCall::Commands { app } => host
                .commands(caller, app.as_deref())
                .await
                .map(Answer::widen),
            ToolCall::Command {
                approval: Some(id), ..
            } => host.approval_outcome(caller, id).await.map(Answer::widen),
            ToolCall::Command {
                name, args, app, ..
            } => host
                .command(caller, &name, args, app.as_deref())
                .await
                .map(Answer::widen),
            ToolCall::GraphQuery { app, filter } => host
                .graph_query(caller, from, &app, &filter)
                .await
                .map(Answer::widen),
            ToolCall::GraphApply { app, bundle } => host
                .graph_apply(caller, &app, bundle)
                .await
                .map(Answer::widen),
            ToolCall::AppFiles { app, write, read } => host
                .app_files(caller, &app, write, read)
                .await
                .map(Answer::widen),
            ToolCall::AppDeploy { app, title, access } => host
                .app_deploy(caller, &app, title, access)
                .await
                .map(Answer::widen),
            ToolCall::Spaces => host.spaces(caller).await.map(Answer::widen),
        }
    }

    /// Whether this caller last listed the tools under an older release's list.
    async fn listed_an_older_list(&self, caller: &Caller) -> bool {
        let Some(key) = ListedTools::key(caller) else {
            return false;
        };
        if let Some(stale) = self.listed.known(&key) {
            return stale;
        }
        let stale = match self.host.listed_tools(caller).await {
            Ok(Some(listed)) => listed != fingerprint(),
            Ok(None) => false,
            Err(error) => {
                tracing::warn!(%error, "could not read which tool list a caller saw");
                return false;
            }
        };
        self.listed.remember(key, stale);
        stale
    }
}

/// The address an HTTP request came from, as the server saw it (its
/// `ConnectInfo`); `None` on stdio.
fn client(extensions: &Extensions) -> Option<IpAddr> {
    let parts = extensions.get::<http::request::Parts>()?;
    let ConnectInfo(peer) = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
    Some(peer.ip())
}

/// The caller the HTTP door read from a request before rmcp, handed on in
/// the request's extensions so the token is read once a request.
#[derive(Clone, Debug)]
pub(crate) struct Resolved(pub Caller);

/// The caller of an HTTP request, as the host reads its credentials: the
/// MCP door takes bearer tokens only, never a cookie (a page could make a
/// browser send one).
pub(crate) async fn caller_of(host: &Host, headers: &http::HeaderMap) -> Result<Caller, HostError> {
    let (caller, _) = host.caller_of(Credentials::for_mcp(headers), None).await?;
    Ok(caller)
}

/// Which callers have listed the current tool list, so a stale one is told
/// once per call without asking the host every time. The list moves only
/// with a release, so a caller seen current stays current for the process.
#[derive(Clone, Default)]
pub struct ListedTools(Arc<Mutex<HashMap<String, bool>>>);

impl ListedTools {
    /// The caller as the host records who listed: by token, or by person
    /// when no token was used. Nobody is never told.
    fn key(caller: &Caller) -> Option<String> {
        match caller {
            Caller::Nobody => None,
            Caller::Person {
                token: Some(token), ..
            } => Some(format!("token:{token}")),
            Caller::Person {
                person,
                token: None,
                ..
            } => Some(format!("person:{}", person.eid)),
            Caller::Agent { job, .. } => Some(format!("agent:{job}")),
        }
    }

    fn known(&self, key: &str) -> Option<bool> {
        self.0.lock().ok()?.get(key).copied()
    }

    fn remember(&self, key: String, stale: bool) {
        if let Ok(mut seen) = self.0.lock() {
            seen.insert(key, stale);
        }
    }
}

/// A host refusal outside a tool call, as a JSON-RPC error carrying the sentence.
fn protocol_error(error: HostError) -> ErrorData {
    match error {
        HostError::NotFound(sentence) => ErrorData::resource_not_found(sentence, None),
        HostError::Internal(detail) => {
            tracing::error!(%detail, "a request failed inside the host");
            ErrorData::internal_error(format!("the host failed: {detail}"), None)
        }
        other => ErrorData::invalid_request(other.to_string(), None),
    }
}

/// A host refusal of a prompt: an unknown prompt or argument is the
/// caller's mistake (invalid params, as MCP asks), the rest as elsewhere.
fn prompt_error(error: HostError) -> ErrorData {
    match error {
        HostError::NotFound(sentence) | HostError::BadInput(sentence) => {
            ErrorData::invalid_params(sentence, None)
        }
        other => protocol_error(other),
    }
}

impl ServerHandler for Door {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_completions()
                .build(),
        )
        .with_server_info(Implementation::new("shed", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    /// A session opens: logged with its client and caller, then answered
    /// as rmcp answers.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let caller = self
            .caller(&context.extensions)
            .await
            .unwrap_or(Caller::Nobody);
        self.session.opened(&request.client_info.name, &caller);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let _timed = Timed::method("tools/list");
        if let Ok(caller) = self.caller(&context.extensions).await
            && let Some(key) = ListedTools::key(&caller)
        {
            match self.host.record_listed_tools(&caller, fingerprint()).await {
                Ok(()) => self.listed.remember(key, false),
                Err(error) => tracing::warn!(%error, "could not record the tool list a caller saw"),
            }
        }
        Ok(ListToolsResult::with_all_items(tools()))
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _timed = Timed::tool(&request.name);
        // The name the client gives itself, for its writes' activity: in
        // the request's `_meta` (2026-07-28), or in its `initialize`
        // (earlier versions). A sessionless request's peer is one rmcp
        // makes up, with rmcp's own name: that is no client's claim.
        let claimed = context
            .meta
            .client_info()
            .map(|info| info.name)
            .or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|info| info.client_info.clone())
                    .filter(|client| *client != Implementation::default())
                    .map(|client| client.name)
            });
        let caller = match self.caller(&context.extensions).await {
            Ok(caller) => caller.with_claimed_client(claimed.as_deref()),
            Err(error) => return Ok(refused(&error).into()),
        };
        let arguments = request.arguments.unwrap_or_default();
        let result = match ToolCall::read(&request.name, &arguments) {
            Err(error @ ArgumentError::NoTool(_)) => {
                return Err(ErrorData::invalid_params(error.to_string(), None));
            }
            Err(error) => unreadable(&error),
            Ok(call) => {
                let command = match &call {
                    ToolCall::Command {
                        name,
                        args,
                        approval: None,
                        ..
                    } => Some((name.clone(), args.clone())),
                    _ => None,
                };
                match (request.request_state.as_deref(), &command) {
                    // A 2026-07-28 retry with the person's answer.
                    (Some(state), Some((name, args))) => {
                        let responses = request.input_responses.as_ref();
                        crate::elicit::answer_retry(
                            &self.host, &caller, state, responses, name, args,
                        )
                        .await
                    }
                    _ => match self
                        .dispatch(&caller, client(&context.extensions), call)
                        .await
                    {
                        Ok(answer) => answered(answer),
                        // Kept for the person's approval: asked in the client
                        // where it can, else an answer (not an error) with
                        // the address.
                        Err(HostError::Waiting(waiting)) => {
                            let asked = command.as_ref().map(|(name, args)| (name.as_str(), args));
                            match crate::elicit::ask_in_client(
                                &self.host, &caller, &context, waiting, asked,
                            )
                            .await
                            {
                                CallToolResponse::Complete(result) => result,
                                other => return Ok(other),
                            }
                        }
                        Err(error) => refused(&error),
                    },
                }
            }
        };
        if self.listed_an_older_list(&caller).await {
            if let Err(error) = context.peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "could not send tools/list_changed");
            }
            return Ok(with_line(result, TOOLS_CHANGED_LINE).into());
        }
        Ok(result.into())
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let _timed = Timed::method("resources/list");
        let caller = self
            .caller(&context.extensions)
            .await
            .map_err(protocol_error)?;
        let reach = self.host.views(&caller).await.map_err(protocol_error)?;
        Ok(ListResourcesResult::with_all_items(
            reach.iter().map(views::listed).collect(),
        ))
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _timed = Timed::method("resources/read");
        let caller = self
            .caller(&context.extensions)
            .await
            .map_err(protocol_error)?;
        let page = self
            .host
            .read_view(&caller, &request.uri)
            .await
            .map_err(protocol_error)?;
        Ok(views::read(page).into())
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let _timed = Timed::method("prompts/list");
        let caller = self
            .caller(&context.extensions)
            .await
            .map_err(protocol_error)?;
        let entries = self.host.prompts(&caller).await.map_err(protocol_error)?;
        Ok(ListPromptsResult::with_all_items(
            entries.into_iter().map(prompts::listed).collect(),
        ))
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let _timed = Timed::method("prompts/get");
        let caller = self
            .caller(&context.extensions)
            .await
            .map_err(protocol_error)?;
        let arguments = prompts::arguments(request.arguments);
        let prompt = self
            .host
            .prompt(&caller, &request.name, &arguments)
            .await
            .map_err(prompt_error)?;
        Ok(prompts::filled(prompt).into())
    }

    #[tracing::instrument(level = "debug", name = "mcp call", skip_all, fields(method, tool))]
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let _timed = Timed::method("completion/complete");
        let Reference::Prompt(prompt) = &request.r#ref else {
            return Err(ErrorData::invalid_params(
                "shed completes the arguments of prompts only — it has no resource templates",
                None,
            ));
        };
        let caller = self
            .caller(&context.extensions)
            .await
            .map_err(protocol_error)?;
        let argument = &request.argument;
        let completions = self
            .host
            .complete_prompt_argument(&caller, &prompt.name, &argument.name, &argument.value)
            .await
            .map_err(prompt_error)?;
        Ok(prompts::completed(completions))
    }

    /// A session that began with `initialize` is watched for deploys that
    /// change the views and prompts it reaches, for as long as it lives.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let watch = ReachWatch::begin(self.host.clone());
        let Ok(caller) = self.caller(&context.extensions).await else {
            return;
        };
        tokio::spawn(watch.run(caller, Notifier::Session(context.peer)));
    }

    /// The sessionless protocol asks for change notifications with
    /// `subscriptions/listen`: resources, prompts and tools.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let watch = ReachWatch::begin(self.host.clone());
        let caller = self
            .caller(&context.request_context().extensions)
            .await
            .map_err(protocol_error)?;
        if self.listed_an_older_list(&caller).await
            && let Err(error) = context.sink().notify_tool_list_changed().await
        {
            tracing::debug!(%error, "could not send tools/list_changed");
        }
        let sink = context.sink().clone();
        tokio::select! {
            () = watch.run(caller, Notifier::Subscription(sink)) => {}
            () = context.cancelled() => {}
        }
        Ok(())
    }
}
