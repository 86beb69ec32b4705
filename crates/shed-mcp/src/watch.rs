//! Watches the deploys (and trashes, restores, purges) and memberships of
//! every process on the data dir and
//! tells one live session `notifications/resources/list_changed` when one
//! changed the views that session's caller reaches, and
//! `notifications/prompts/list_changed` when it changed their prompts (an
//! app came into reach, went to the trash, or was retitled).

use std::time::Duration;

use rmcp::{
    Peer, RoleServer,
    service::{SubscriptionSendError, SubscriptionSink},
};
use shed_host::prompts::PromptEntry;
use shed_host::{Caller, Host, ViewResource};
use tokio::sync::broadcast::error::RecvError;

/// How often a watcher looks whether its session has closed while no
/// deploy is happening.
const CLOSED_CHECK: Duration = Duration::from_secs(10);

/// Where a session's notifications go.
pub enum Notifier {
    /// A session that began with `initialize` (Streamable HTTP sessions, stdio).
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream of the sessionless protocol.
    Subscription(SubscriptionSink),
}

impl Notifier {
    fn is_closed(&self) -> bool {
        match self {
            Notifier::Session(peer) => peer.is_transport_closed(),
            Notifier::Subscription(_) => false,
        }
    }

    /// Sends `notifications/resources/list_changed`; false once the session is gone.
    async fn resources_changed(&self) -> bool {
        match self {
            Notifier::Session(peer) => peer.notify_resource_list_changed().await.is_ok(),
            Notifier::Subscription(sink) => {
                still_listening(sink.notify_resource_list_changed().await)
            }
        }
    }

    /// Sends `notifications/prompts/list_changed`; false once the session is gone.
    async fn prompts_changed(&self) -> bool {
        match self {
            Notifier::Session(peer) => peer.notify_prompt_list_changed().await.is_ok(),
            Notifier::Subscription(sink) => {
                still_listening(sink.notify_prompt_list_changed().await)
            }
        }
    }
}

/// Whether a listening stream is still there after a send: one that did not
/// ask for this kind of change is not told, and listens on.
fn still_listening(sent: Result<(), SubscriptionSendError>) -> bool {
    matches!(
        sent,
        Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_))
    )
}

/// What of a caller's views a client sees in `resources/list`.
fn listing(views: &[ViewResource]) -> Vec<(String, String, String)> {
    views
        .iter()
        .map(|view| (view.uri.clone(), view.name.clone(), view.title.clone()))
        .collect()
}

async fn views_of(host: &Host, caller: &Caller) -> Vec<(String, String, String)> {
    match host.views(caller).await {
        Ok(views) => listing(&views),
        Err(error) => {
            tracing::debug!(%error, "no views for a watched session");
            Vec::new()
        }
    }
}

async fn prompts_of(host: &Host, caller: &Caller) -> Vec<PromptEntry> {
    host.prompts(caller).await.unwrap_or_else(|error| {
        tracing::debug!(%error, "no prompts for a watched session");
        Vec::new()
    })
}

/// Runs until the session closes: after every deploy, trash, restore or
/// purge and every new membership, compares the views and the prompts the
/// caller reaches with those it reached before, and notifies on each change.
pub async fn watch_reach(host: Host, caller: Caller, notifier: Notifier) {
    let mut changes = host.app_changes();
    let mut memberships = host.memberships();
    let mut seen = views_of(&host, &caller).await;
    let mut prompts = prompts_of(&host, &caller).await;
    let mut closed_check = tokio::time::interval(CLOSED_CHECK);
    loop {
        let moved = tokio::select! {
            changed = changes.recv() => changed.map(drop),
            joined = memberships.recv() => joined,
            _ = closed_check.tick() => {
                if notifier.is_closed() {
                    return;
                }
                continue;
            }
        };
        match moved {
            Ok(()) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
        let now = views_of(&host, &caller).await;
        if now != seen {
            seen = now;
            if !notifier.resources_changed().await {
                return;
            }
        }
        let now = prompts_of(&host, &caller).await;
        if now != prompts {
            prompts = now;
            if !notifier.prompts_changed().await {
                return;
            }
        }
    }
}
