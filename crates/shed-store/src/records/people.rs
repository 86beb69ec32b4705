//! The platform's persons, by handle and by eid, written once for both
//! backends ([`Records`]). (The engine's own look-ups of a person — a
//! ref's `@handle`, an apply's check of an eid — stay with each backend's
//! engine.)

use super::{Statement, now};
use crate::names::{handle_taken, new_person};
use crate::txn::{Records, Txn, args};
use crate::{Person, StoreError};

/// A person's columns, as a [`Person`] is read from them, and their table.
const PEOPLE: &str = "eid, handle, name FROM people";

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
        let sql = format!("SELECT {PEOPLE} WHERE handle = $1");
        self.read_optional(&sql, args![handle]).await
    }

    async fn person_by_eid(&self, eid: &str) -> Result<Option<Person>, StoreError> {
        let sql = format!("SELECT {PEOPLE} WHERE eid = $1");
        self.read_optional(&sql, args![eid]).await
    }
}
