//! Deploys made by any process on this data directory, as a stream of app
//! names: a task polls the deploy counter every half second (one indexed row)
//! and sends `space/slug` for each deploy it finds. It starts with the first
//! subscriber and stops when the host is dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast;

use crate::{Host, Inner};

/// How often the deploy counter is read.
const POLL: Duration = Duration::from_millis(500);

impl Host {
    /// A receiver of the apps (`space/slug`) deployed from now on, by this
    /// process or any other on the same data directory.
    pub fn deploys(&self) -> broadcast::Receiver<String> {
        let receiver = self.inner.deploys.subscribe();
        self.inner.watcher.get_or_init(|| {
            let weak = Arc::downgrade(&self.inner);
            let after = self.inner.opened_at_deploy;
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(watch(weak, after));
                }
                Err(_) => tracing::warn!("no async runtime: deploys will not be watched"),
            }
        });
        receiver
    }
}

async fn watch(host: Weak<Inner>, mut after: i64) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = host.upgrade() else { return };
        match inner.store.deploys_since(after).await {
            Ok(deploys) => {
                for (id, app) in deploys {
                    after = id;
                    // No receiver is fine: nobody is listening right now.
                    let _ = inner.deploys.send(app);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the deploy counter"),
        }
    }
}
