//! The look-ups PostgreSQL's `revocable.rs` and `lifecycle.rs` share until
//! they are written once too: a space's id (held or not), its one owner,
//! and an app and a person from a row. The platform's records themselves
//! are written once in `src/records/`.

use deadpool_postgres::Transaction;
use tokio_postgres::Row;

use super::txn::Txn;
use crate::platform::{AppRecord, Trashed};
use crate::records::platform;
use crate::{Person, StoreError};

pub(super) async fn space_id(txn: &Transaction<'_>, slug: &str) -> Result<Option<i64>, StoreError> {
    platform::space_id(&Txn::Write(txn), slug).await
}

pub(super) async fn locked_space(
    txn: &Transaction<'_>,
    slug: &str,
) -> Result<Option<i64>, StoreError> {
    platform::locked_space(&Txn::Write(txn), slug).await
}

pub(super) async fn only_owner(
    txn: &Transaction<'_>,
    space: i64,
    person: &str,
) -> Result<bool, StoreError> {
    platform::only_owner(&Txn::Write(txn), space, person).await
}

/// An app, from a row of [`crate::platform::APP_COLUMNS`].
pub(super) fn app_record(r: &Row) -> AppRecord {
    let trashed_at: Option<String> = r.get(10);
    AppRecord {
        space: r.get(0),
        slug: r.get(1),
        title: r.get(2),
        access: r.get(3),
        version: r.get(4),
        deploy: r.get(5),
        deployed_at: r.get(6),
        deployed_by: person_at(r, 7),
        trashed: trashed_at.map(|at| Trashed {
            at,
            by: person_at(r, 11),
        }),
    }
}

/// The person whose eid, handle and name are a row's columns `first`,
/// `first + 1` and `first + 2`.
pub(super) fn person_at(r: &Row, first: usize) -> Person {
    Person {
        eid: r.get(first),
        handle: r.get(first + 1),
        name: r.get(first + 2),
    }
}
