//! People: the platform's persons, by handle and by eid.

use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::names::{handle_taken, new_person};
use crate::{Person, StoreError};

/// Adds a person with a fresh eid.
pub(crate) fn add(txn: &Transaction<'_>, handle: &str, name: &str) -> Result<Person, StoreError> {
    let person = new_person(handle, name)?;
    if by_handle(txn, handle)?.is_some() {
        return Err(handle_taken(handle));
    }
    txn.execute(
        "INSERT INTO people(eid, handle, name, created_at) VALUES(?1, ?2, ?3, ?4)",
        rusqlite::params![
            person.eid,
            person.handle,
            person.name,
            crate::records::now()
        ],
    )?;
    Ok(person)
}

/// The person with this handle (`ada` or `@ada`).
pub(crate) fn by_handle(conn: &Connection, handle: &str) -> Result<Option<Person>, StoreError> {
    let handle = handle.strip_prefix('@').unwrap_or(handle);
    let mut stmt = conn.prepare_cached("SELECT eid, handle, name FROM people WHERE handle = ?1")?;
    Ok(stmt.query_row([handle], |r| person_at(r, 0)).optional()?)
}

/// The person with this eid.
pub(crate) fn by_eid(conn: &Connection, eid: &str) -> Result<Option<Person>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT eid, handle, name FROM people WHERE eid = ?1")?;
    Ok(stmt.query_row([eid], |r| person_at(r, 0)).optional()?)
}

/// The person whose eid, handle and name are a row's columns `first`,
/// `first + 1` and `first + 2`.
pub(crate) fn person_at(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Person> {
    Ok(Person {
        eid: r.get(first)?,
        handle: r.get(first + 1)?,
        name: r.get(first + 2)?,
    })
}
