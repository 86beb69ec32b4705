//! The platform's persons as SQLite's engine looks them up (an apply's
//! check of an eid, a row's names); the `People`
//! interface is written once in `src/records/people.rs`.

use rusqlite::{Connection, OptionalExtension};

use crate::{Person, StoreError};

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
