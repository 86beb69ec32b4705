//! Information-flow labels: who may read a piece of data and whether it can be
//! trusted, joined as a lattice, and the run's observation ceiling.
//!
//! A label's readers are a set of opaque principals (`space:jeff`,
//! `person:ada`) or `public`. Joining intersects readers and keeps the less
//! trusted integrity. A label flows to a ceiling when its readers include
//! every reader of the ceiling.

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// Who may read: everyone, or exactly these principals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readers {
    /// Anyone may read (written `public`).
    Public,
    /// Only these principals may read, each an opaque name such as
    /// `space:jeff`; an empty set means no one.
    Only(BTreeSet<String>),
}

/// Whether the data can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Integrity {
    /// The data's author is trusted (a task the person typed starts so).
    /// Orders before `Untrusted`: the larger of two is the less trusted.
    Trusted,
    /// Someone other than the person may have written it; after observing
    /// such data, `enforce-strict` makes no write.
    Untrusted,
}

/// A confidentiality and integrity label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Who may read the data.
    pub readers: Readers,
    /// Whether the data can be trusted.
    pub integrity: Integrity,
}

/// Why a label could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LabelError {
    /// The label is not a JSON object (for a ceiling given as JSON: not JSON
    /// at all, or not an object).
    #[error(
        "a label must be an object {{\"readers\": [...], \"integrity\": \"trusted\"|\"untrusted\"}}"
    )]
    NotAnObject,
    /// `readers` is absent, not a list, or holds something not a string.
    #[error(
        "a label's readers must be a list of principal names such as \"space:jeff\" or \"public\""
    )]
    BadReaders,
    /// `integrity` is absent or neither `trusted` nor `untrusted`.
    #[error("a label's integrity must be \"trusted\" or \"untrusted\"")]
    BadIntegrity,
    /// `--observation-ceiling` names no reader.
    #[error(
        "the observation ceiling is empty — give a JSON label or a comma list of readers such as space:jeff,person:ada"
    )]
    EmptyCeiling,
    /// A reader named in `--observation-ceiling`'s comma list holds a space
    /// or a control character; it holds that name.
    #[error(
        "the observation ceiling names {0:?}, which is not a principal — names have no spaces, such as space:jeff"
    )]
    BadPrincipal(String),
}

impl Label {
    /// The least restrictive label: anyone may read it, and it is trusted.
    pub fn bottom() -> Label {
        Label {
            readers: Readers::Public,
            integrity: Integrity::Trusted,
        }
    }

    /// The least upper bound: readers intersected, the less trusted integrity.
    pub fn join(&self, other: &Label) -> Label {
        let readers = match (&self.readers, &other.readers) {
            (Readers::Public, r) | (r, Readers::Public) => r.clone(),
            (Readers::Only(a), Readers::Only(b)) => {
                Readers::Only(a.intersection(b).cloned().collect())
            }
        };
        Label {
            readers,
            integrity: self.integrity.max(other.integrity),
        }
    }

    /// Reads a host's `ifc` object.
    pub fn from_json(value: &Value) -> Result<Label, LabelError> {
        let object = value.as_object().ok_or(LabelError::NotAnObject)?;
        let readers = parse_readers(object.get("readers").ok_or(LabelError::BadReaders)?)?;
        let integrity = match object.get("integrity").and_then(Value::as_str) {
            Some("trusted") => Integrity::Trusted,
            Some("untrusted") => Integrity::Untrusted,
            _ => return Err(LabelError::BadIntegrity),
        };
        Ok(Label { readers, integrity })
    }

    /// The label as the host writes it.
    pub fn to_json(&self) -> Value {
        let readers: Vec<String> = match &self.readers {
            Readers::Public => vec!["public".to_string()],
            Readers::Only(set) => set.iter().cloned().collect(),
        };
        let integrity = match self.integrity {
            Integrity::Trusted => "trusted",
            Integrity::Untrusted => "untrusted",
        };
        json!({ "readers": readers, "integrity": integrity })
    }
}

fn parse_readers(value: &Value) -> Result<Readers, LabelError> {
    let list = value.as_array().ok_or(LabelError::BadReaders)?;
    let mut set = BTreeSet::new();
    for item in list {
        let name = item.as_str().ok_or(LabelError::BadReaders)?;
        if name == "public" {
            return Ok(Readers::Public);
        }
        set.insert(name.to_string());
    }
    Ok(Readers::Only(set))
}

/// The most a run may observe. An answer whose label does not flow to it is
/// withheld from the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ceiling {
    /// Whom the run observes for: an answer is shown only when every one of
    /// them may read it. `Public` shows only what anyone may read.
    pub readers: Readers,
    /// The least integrity admitted; `Untrusted` admits both.
    pub integrity: Integrity,
}

/// Why an answer was withheld.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withheld {
    /// Its readers do not include every reader of the ceiling.
    AboveCeiling,
    /// It is untrusted and the ceiling admits only trusted data.
    Untrusted,
}

impl Withheld {
    /// The `reasonCode` the model sees.
    pub fn reason_code(self) -> &'static str {
        match self {
            Withheld::AboveCeiling => "above_observation_ceiling",
            Withheld::Untrusted => "untrusted_below_ceiling",
        }
    }
}

impl Ceiling {
    /// Reads `--observation-ceiling`: a JSON label, or a comma list of readers
    /// (`public`, or principals such as `space:jeff,person:ada`).
    pub fn parse(text: &str) -> Result<Ceiling, LabelError> {
        let trimmed = text.trim();
        if trimmed.starts_with('{') {
            let value: Value =
                serde_json::from_str(trimmed).map_err(|_| LabelError::NotAnObject)?;
            let label = Label::from_json(&value)?;
            return Ok(Ceiling {
                readers: label.readers,
                integrity: label.integrity,
            });
        }
        let names: Vec<&str> = trimmed
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if names.is_empty() {
            return Err(LabelError::EmptyCeiling);
        }
        let mut set = BTreeSet::new();
        for name in names {
            if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(LabelError::BadPrincipal(name.to_string()));
            }
            if name == "public" {
                return Ok(Ceiling {
                    readers: Readers::Public,
                    integrity: Integrity::Untrusted,
                });
            }
            set.insert(name.to_string());
        }
        Ok(Ceiling {
            readers: Readers::Only(set),
            integrity: Integrity::Untrusted,
        })
    }

    /// Whether `label` may be shown to a run under this ceiling.
    pub fn admits(&self, label: &Label) -> Result<(), Withheld> {
        let readers_ok = match (&label.readers, &self.readers) {
            (Readers::Public, _) => true,
            (Readers::Only(_), Readers::Public) => false,
            (Readers::Only(have), Readers::Only(need)) => need.is_subset(have),
        };
        if !readers_ok {
            return Err(Withheld::AboveCeiling);
        }
        if label.integrity > self.integrity {
            return Err(Withheld::Untrusted);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(readers: &[&str], trusted: bool) -> Label {
        Label::from_json(&json!({
            "readers": readers,
            "integrity": if trusted { "trusted" } else { "untrusted" }
        }))
        .unwrap()
    }

    #[test]
    fn join_intersects_readers_and_keeps_the_less_trusted() {
        let a = label(&["space:jeff", "person:ada"], true);
        let b = label(&["space:jeff"], false);
        let j = a.join(&b);
        assert_eq!(j, label(&["space:jeff"], false));
        assert_eq!(Label::bottom().join(&a), a);
    }

    #[test]
    fn flows_when_readers_include_the_ceiling() {
        let ceiling = Ceiling::parse("space:jeff").unwrap();
        assert!(
            ceiling
                .admits(&label(&["space:jeff", "space:ann"], true))
                .is_ok()
        );
        assert!(ceiling.admits(&label(&["public"], false)).is_ok());
        assert_eq!(
            ceiling.admits(&label(&["space:ann"], true)),
            Err(Withheld::AboveCeiling)
        );
        let public = Ceiling::parse("public").unwrap();
        assert!(public.admits(&label(&["space:jeff"], true)).is_err());
        let strict = Ceiling::parse(r#"{"readers":["space:jeff"],"integrity":"trusted"}"#).unwrap();
        assert_eq!(
            strict.admits(&label(&["space:jeff"], false)),
            Err(Withheld::Untrusted)
        );
    }

    #[test]
    fn bad_ceilings_are_refused() {
        assert!(Ceiling::parse(" , ").is_err());
        assert!(Ceiling::parse("space jeff").is_err());
        assert!(Ceiling::parse("{").is_err());
    }
}
