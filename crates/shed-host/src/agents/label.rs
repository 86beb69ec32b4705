//! The information-flow label every agent answer carries (DESIGN's
//! "Labels"): who may read what the answer holds, and whether its content
//! can be trusted — both read off the rule book's table (`access`): a
//! private app's data is read by its space; a public or open app's by
//! anyone; an open app's rows may be written by anyone, so they are
//! untrusted. What only concerns the person (their apps, a refusal that
//! names them) is read by that person.

use serde::Serialize;

use crate::registry::LiveApp;
use crate::{Caller, access};

/// Whether an answer's content comes from those the reader trusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Integrity {
    Trusted,
    Untrusted,
}

/// `{ readers: ["space:jeff"] | ["public"] | ["person:ada"], integrity }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    pub readers: Vec<String>,
    pub integrity: Integrity,
}

impl Label {
    /// The label of what holds nobody's data: a job's own refusals, a
    /// request the broker could not read.
    pub fn public() -> Label {
        Label {
            readers: vec!["public".to_string()],
            integrity: Integrity::Trusted,
        }
    }

    /// The label of an app's data.
    pub(crate) fn of_app(app: &LiveApp) -> Label {
        let integrity = if access::trusted(app.access) {
            Integrity::Trusted
        } else {
            Integrity::Untrusted
        };
        Label {
            readers: access::readers_of(app.access, &app.space),
            integrity,
        }
    }

    /// The label of what concerns only the caller's person (`public` for a
    /// caller with none: what is said to nobody is said to anyone).
    pub fn of_caller(caller: &Caller) -> Label {
        let readers = match caller.person() {
            Some(person) => vec![format!("person:{}", person.handle)],
            None => vec!["public".to_string()],
        };
        Label {
            readers,
            integrity: Integrity::Trusted,
        }
    }
}
