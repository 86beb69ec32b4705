//! Watches the deploys (and trashes, restores, purges) and memberships of
//! every process on the data dir and tells one live session
//! `notifications/resources/list_changed` when one changed the views that
//! session's caller reaches (or redeployed an app whose views it reaches),
//! and `notifications/prompts/list_changed` when it changed their prompts
//! (an app came into reach, went to the trash, was retitled or redeployed).

use std::time::Duration;

use rmcp::{
    Peer, RoleServer,
    service::{SubscriptionSendError, SubscriptionSink},
};
use shed_host::prompts::PromptEntry;
use shed_host::{Caller, Host, ViewResource};
use tokio::sync::broadcast::{self, error::RecvError};

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

/// A session's watch of its caller's reach, subscribed to the platform's
/// changes the moment it begins — before the caller is read or anything
/// else is awaited — so that a change made after a client was answered
/// (its `initialize`, or the acknowledgment of its `subscriptions/listen`)
/// is heard.
pub struct ReachWatch {
    host: Host,
    changes: broadcast::Receiver<String>,
    memberships: broadcast::Receiver<()>,
}

/// What a watch heard: an app deployed, trashed, restored or purged; a
/// membership moved; or more than it could keep (the channel lagged).
enum Heard {
    App(String),
    Members,
    Lagged,
}

impl ReachWatch {
    /// Subscribes to every deploy, trash, restore, purge and membership from now on.
    pub fn begin(host: Host) -> Self {
        let changes = host.app_changes();
        let memberships = host.memberships();
        Self {
            host,
            changes,
            memberships,
        }
    }

    /// Runs until the session closes: after every change heard, compares
    /// the views and the prompts the caller reaches with those it reached
    /// before, and notifies on each change.
    ///
    /// A change to an app whose views (or prompt) the caller reaches is
    /// told even when the list reads the same: the first read of what the
    /// caller reaches may come after a change the client made once
    /// answered, and a rolled-back or redeployed app's views are new pages
    /// under the same names. An app out of the caller's reach is never told.
    pub async fn run(mut self, caller: Caller, notifier: Notifier) {
        let host = self.host.clone();
        let mut seen = views_of(&host, &caller).await;
        let mut prompts = prompts_of(&host, &caller).await;
        let mut closed_check = tokio::time::interval(CLOSED_CHECK);
        loop {
            let heard = tokio::select! {
                changed = self.changes.recv() => match changed {
                    Ok(app) => Heard::App(app),
                    Err(RecvError::Lagged(_)) => Heard::Lagged,
                    Err(RecvError::Closed) => return,
                },
                joined = self.memberships.recv() => match joined {
                    Ok(()) => Heard::Members,
                    Err(RecvError::Lagged(_)) => Heard::Lagged,
                    Err(RecvError::Closed) => return,
                },
                _ = closed_check.tick() => {
                    if notifier.is_closed() {
                        return;
                    }
                    continue;
                }
            };
            let now = views_of(&host, &caller).await;
            let told = heard.touches(now.iter().map(|(uri, ..)| view_app(uri)));
            if now != seen || told {
                seen = now;
                if !notifier.resources_changed().await {
                    return;
                }
            }
            let now = prompts_of(&host, &caller).await;
            let told = heard.touches(now.iter().map(|prompt| prompt.name.as_str()));
            if now != prompts || told {
                prompts = now;
                if !notifier.prompts_changed().await {
                    return;
                }
            }
        }
    }
}

impl Heard {
    /// Whether what was heard may have changed one of `apps` in place: an
    /// app among them changed, or the watch lagged and cannot tell.
    fn touches<'a>(&self, mut apps: impl Iterator<Item = &'a str>) -> bool {
        match self {
            Heard::App(app) => apps.any(|reached| reached == app),
            Heard::Members => false,
            Heard::Lagged => true,
        }
    }
}

/// The app (`space/slug`) of a view's URI (`ui://space/slug/page.html`).
fn view_app(uri: &str) -> &str {
    let path = uri.strip_prefix("ui://").unwrap_or(uri);
    let mut cut = path.match_indices('/').map(|(at, _)| at);
    match cut.nth(1) {
        Some(at) => &path[..at],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::view_app;

    #[test]
    fn a_view_names_its_app() {
        assert_eq!(view_app("ui://jeff/runs/leaderboard.html"), "jeff/runs");
        assert_eq!(view_app("ui://jeff/runs/deep/page.html"), "jeff/runs");
        assert_eq!(view_app("ui://jeff/runs"), "jeff/runs");
    }
}
