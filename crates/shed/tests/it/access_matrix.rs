//! The rule book's matrix, black-box: every app access × every standing
//! (signed out, sam outside demo, vic viewer, ed editor, ada owner) × read
//! and write, asked through a door; each answer must be the rule book's
//! verdict for that cell, word for word (`shed_host::access::may`, whose own
//! table test pins the verdicts and sentences).

use shed_host::access::{Act, Standing, Subject, may};
use shed_host::{Access, HostError, Role};

pub const STANDINGS: [(Option<&str>, Standing); 5] = [
    (None, Standing::SignedOut),
    (Some("sam"), Standing::Outsider),
    (Some("vic"), Standing::Member(Role::Viewer)),
    (Some("ed"), Standing::Member(Role::Editor)),
    (Some("ada"), Standing::Member(Role::Owner)),
];
pub const APPS: [(&str, Access); 3] = [
    ("runs", Access::Private),
    ("pub", Access::Public),
    ("open", Access::Open),
];
pub const ACTS: [Act; 2] = [Act::Read, Act::Write];

/// The rule book's answer for one cell: `None` to go ahead, else the
/// refusal's kind (`sign-in`, `not-found`, `refused`) and sentence.
pub fn verdict(
    app: &str,
    access: Access,
    standing: Standing,
    act: Act,
) -> Option<(&'static str, String)> {
    let name = format!("demo/{app}");
    let subject = Subject {
        name: &name,
        space: "demo",
        access,
    };
    may(subject, standing, act).err().map(|error| {
        let kind = match error {
            HostError::SignIn(_) => "sign-in",
            HostError::NotFound(_) => "not-found",
            HostError::Refused(_) => "refused",
            _ => "other",
        };
        (kind, error.to_string())
    })
}
