//! The bearer tokens seen lately, so a door does not read the token and its
//! person from the database on every call of a busy client. An entry answers
//! for [`FRESH_FOR`] and is then read again: tokens are never revoked today,
//! and whatever revokes one later (in this process or another) takes effect
//! within that time. Unknown tokens are never remembered.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::Person;

/// How long a token read from the database answers without reading it again.
pub(crate) const FRESH_FOR: Duration = Duration::from_secs(10);
/// The most tokens remembered; past it the memory starts afresh.
const MOST_REMEMBERED: usize = 4096;

/// A token's id and person, and when they were read.
struct Seen {
    read_at: Instant,
    token: i64,
    person: Person,
}

/// Token hashes (sha256, hex) to what the database said of them.
#[derive(Default)]
pub(crate) struct SignedIn {
    seen: Mutex<HashMap<String, Seen>>,
}

impl SignedIn {
    /// The token id and person of `hash`, if read within [`FRESH_FOR`].
    pub(crate) fn recall(&self, hash: &str) -> Option<(i64, Person)> {
        let seen = self.seen.lock().ok()?;
        let entry = seen.get(hash)?;
        (entry.read_at.elapsed() < FRESH_FOR).then(|| (entry.token, entry.person.clone()))
    }

    /// Remembers what the database said of `hash` just now.
    pub(crate) fn remember(&self, hash: String, token: i64, person: Person) {
        if let Ok(mut seen) = self.seen.lock() {
            if seen.len() >= MOST_REMEMBERED {
                seen.clear();
            }
            seen.insert(
                hash,
                Seen {
                    read_at: Instant::now(),
                    token,
                    person,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ada() -> Person {
        Person {
            eid: "p1".into(),
            handle: "ada".into(),
            name: "Ada".into(),
        }
    }

    #[test]
    fn a_remembered_token_is_recalled_and_an_unknown_one_is_not() {
        let signed_in = SignedIn::default();
        signed_in.remember("h1".into(), 7, ada());
        let (token, person) = signed_in.recall("h1").unwrap();
        assert_eq!((token, person.handle.as_str()), (7, "ada"));
        assert!(signed_in.recall("h2").is_none());
    }

    #[test]
    fn an_old_entry_is_read_again() {
        let signed_in = SignedIn::default();
        signed_in.remember("h1".into(), 7, ada());
        {
            let mut seen = signed_in.seen.lock().unwrap();
            let entry = seen.get_mut("h1").unwrap();
            entry.read_at = entry.read_at.checked_sub(FRESH_FOR).unwrap();
        }
        assert!(signed_in.recall("h1").is_none());
    }
}
