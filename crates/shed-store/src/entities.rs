//! The entity–component engine's interface, which each backend implements:
//! declaring an app's vocabulary, applying bundles, reading with a filter
//! line, the app data version and an entity's history. The declaration makes
//! the trait and the [`Store`](crate::Store) method that calls it.

use crate::{Actor, Applied, HistoryEntry, Listing, StoreError, Vocabulary};

interface! {
    /// Entities, their components, edges and history, per app.
    trait Entities {
        /// Takes an app's vocabulary at deploy: creates the components and columns
        /// it does not have yet, and refuses to change the type of a column that
        /// holds values. `app` is `space/slug`, e.g. `jeff/runs`.
        async fn declare(&self, app: &str, vocab: &Vocabulary) -> Result<(), StoreError>;
        /// Applies one bundle or a list of them, all or nothing (DESIGN's "Apply
        /// (the wire)"). `expect: Some(n)` refuses with [`StoreError::Conflict`]
        /// unless the app data version is `n` before the write.
        #[tracing::instrument(level = "debug", name = "store apply", skip_all, fields(app = app))]
        async fn apply(
            &self,
            app: &str,
            actor: &Actor,
            body: serde_json::Value,
            expect: Option<u64>,
        ) -> Result<Applied, StoreError>;
        /// Reads an app's rows with a filter line (DESIGN's "The filter line"),
        /// stopped at [`READ_DEADLINE`](crate::deadline::READ_DEADLINE).
        async fn query(&self, app: &str, filter: &str) -> Result<Listing, StoreError>;
        /// The app data version: +1 on every committed write; 0 for an app never written.
        async fn data_version(&self, app: &str) -> Result<u64, StoreError>;
        /// Every write to one entity (named by eid or alias), oldest first.
        async fn history(
            &self,
            app: &str,
            eid_or_alias: &str,
        ) -> Result<Vec<HistoryEntry>, StoreError>;
    }
}
