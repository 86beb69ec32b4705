//! The platform's persons, by handle and by eid, written once for both
//! backends ([`Records`]). (The engine's own look-ups of a person — a
//! ref's `@handle`, an apply's check of an eid — stay with each backend's
//! engine.)

use super::{ReadRows, now};
use crate::names::{handle_taken, new_person};
use crate::txn::{Records, Txn, args};
use crate::{Person, StoreError};

/// The person whose `column` (`handle`, `eid`) is `value`.
async fn person_where(
    t: &impl Txn,
    column: &str,
    value: &str,
) -> Result<Option<Person>, StoreError> {
    t.optional_as(
        &format!("SELECT eid, handle, name FROM people WHERE {column} = $1"),
        args![value],
    )
    .await
}

impl<B: Records> super::People for B {
    async fn add_person(&self, handle: &str, name: &str) -> Result<Person, StoreError> {
        let person = new_person(handle, name)?;
        self.write_records(async move |t| {
            let added = t
                .execute(
                    "INSERT INTO people(eid, handle, name, created_at) VALUES($1, $2, $3, $4)
                     ON CONFLICT(handle) DO NOTHING",
                    args![&person.eid, &person.handle, &person.name, now()],
                )
                .await?;
            if added == 0 {
                return Err(handle_taken(&person.handle));
            }
            Ok(person.clone())
        })
        .await
    }

    async fn person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        let handle = handle.strip_prefix('@').unwrap_or(handle);
        self.read_records(async |t| person_where(t, "handle", handle).await)
            .await
    }

    async fn person_by_eid(&self, eid: &str) -> Result<Option<Person>, StoreError> {
        self.read_records(async |t| person_where(t, "eid", eid).await)
            .await
    }
}
