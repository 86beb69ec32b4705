//! The store's write metrics, on every backend (no-ops unless `shed serve
//! --metrics-listen` installed a recorder): writes per committed group
//! (SQLite commits several together; on PostgreSQL each write commits
//! alone), and the commit's time.

/// Writes per committed group, a histogram.
pub(crate) const WRITE_GROUP_SIZE: &str = "shed_store_write_group_size";

/// A commit's time in seconds, a histogram.
pub(crate) const COMMIT_SECONDS: &str = "shed_store_commit_seconds";
