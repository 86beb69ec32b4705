//! Apps deployed, trashed, restored or purged by any process on this data
//! directory, as a stream of app names, and memberships, as a stream of
//! ticks: a task reads the platform's generation and the count of
//! memberships (one read) each time the store's wake says something may have
//! changed — on SQLite every half second, on PostgreSQL at the database's
//! notification (`Store::wake`) — and sends `space/slug` for each change it
//! finds, and a tick when the count moved (somebody joined or left a space;
//! a role changed in place moves nothing). It starts with the first
//! subscriber and stops when the host is dropped.

use std::sync::{Arc, Weak};

use tokio::sync::broadcast;

use crate::{Host, Inner};

impl Host {
    /// A receiver of the apps (`space/slug`) deployed, trashed, restored or
    /// purged from now on, by this process or any other on the same data
    /// directory.
    pub fn app_changes(&self) -> broadcast::Receiver<String> {
        let receiver = self.inner.app_changes.subscribe();
        self.watch();
        receiver
    }

    /// A receiver of a tick each time somebody joined or left a space, by
    /// this process or any other: a caller's reach may have changed.
    pub fn memberships(&self) -> broadcast::Receiver<()> {
        let receiver = self.inner.memberships.subscribe();
        self.watch();
        receiver
    }

    /// Starts the watching task once.
    fn watch(&self) {
        self.inner.watcher.get_or_init(|| {
            let weak = Arc::downgrade(&self.inner);
            let after = self.inner.opened_at;
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(watch(weak, after));
                }
                Err(_) => tracing::warn!("no async runtime: deploys will not be watched"),
            }
        });
    }
}

async fn watch(host: Weak<Inner>, mut after: shed_store::lifecycle::Generation) {
    let Some(mut wake) = host.upgrade().map(|inner| inner.store.wake()) else {
        return;
    };
    // The memberships counted at the first read are the ones before watching.
    let mut members = None;
    loop {
        wake.changed().await;
        let Some(inner) = host.upgrade() else { return };
        match inner.store.changes_since(after).await {
            Ok(changes) => {
                after = changes.now;
                for app in changes.apps {
                    // No receiver is fine: nobody is listening right now.
                    let _ = inner.app_changes.send(app);
                }
                let count = changes.members;
                if members.is_some_and(|before| before != count) {
                    let _ = inner.memberships.send(());
                }
                members = Some(count);
            }
            Err(e) => tracing::warn!(error = %e, "could not read the platform's changes"),
        }
    }
}
