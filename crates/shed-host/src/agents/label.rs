//! The information-flow label every agent answer carries (DESIGN's
//! "Labels"): who may read what the answer holds, and whether its content
//! can be trusted. Readers are read off the rule book's table (`access`): a
//! private app's data is read by its space; a public or open app's by
//! anyone. Integrity asks who wrote the content: an open app's rows may be
//! written by anyone, so they are untrusted; so is a row that anyone other
//! than the acting person created or changed last, or that an agent wrote
//! (the store's `via`), and an answer is as untrusted as its least trusted
//! row. A listing row's title and description are written by whoever
//! deployed its app. What only concerns the person (their apps, a refusal
//! that names them) is read by that person.

use serde::Serialize;
use shed_store::Authorship;

use crate::registry::LiveApp;
use crate::{Access, Caller, access};

/// Whether an answer's content comes from those the reader trusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Integrity {
    /// Written only by the acting person themself (created and last
    /// changed by them, no agent between), in an app nobody outside its
    /// space may write; or said by shed itself.
    Trusted,
    /// Some of it may come from someone else: another person, an agent, or
    /// anyone at all (an open app). Under the harness's strict policy, a
    /// run that has read it may write no more.
    Untrusted,
}

/// `{ readers: ["space:jeff"] | ["public"] | ["person:ada"], integrity }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Label {
    /// Who may read what the answer holds: `space:<space>` (a private app's
    /// members), `public` (anyone), or `person:<handle>` (that person
    /// alone).
    pub(crate) readers: Vec<String>,
    /// Whether the content comes from those the reader trusts.
    pub(crate) integrity: Integrity,
}

impl Label {
    /// The label of what holds nobody's data: a job's own refusals, a
    /// request the broker could not read, a built-in's row.
    pub fn public() -> Label {
        Label {
            readers: vec!["public".to_string()],
            integrity: Integrity::Trusted,
        }
    }

    /// The label of an app's data where no row says who wrote it (a write's
    /// answer, a refusal): as trusted as the app's access lets it be.
    pub(crate) fn of_app(app: &LiveApp) -> Label {
        of_access(app.access, &app.space, true)
    }

    /// The label of an answer holding these rows of `app`, read for
    /// `caller`: the join of the rows' labels.
    pub(crate) fn of_rows(app: &LiveApp, caller: &Caller, rows: &[Authorship]) -> Label {
        of_access(app.access, &app.space, written_only_by(caller, rows))
    }

    /// The label of `app`'s command rows as `caller`'s listing shows them:
    /// their titles and descriptions are written by whoever deployed it.
    pub(crate) fn of_listing(app: &LiveApp, caller: &Caller) -> Label {
        let by_caller = caller
            .person()
            .is_some_and(|person| person.eid == app.deployed_by.eid);
        of_access(app.access, &app.space, by_caller)
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

/// The label of content of an app of this access in `space`: trusted only
/// when the access lets nobody outside the space write it and the caller's
/// person wrote it themself.
fn of_access(app_access: Access, space: &str, by_caller: bool) -> Label {
    let integrity = if access::trusted(app_access) && by_caller {
        Integrity::Trusted
    } else {
        Integrity::Untrusted
    };
    Label {
        readers: access::readers_of(app_access, space),
        integrity,
    }
}

/// Whether every row was created and last changed by the caller's person,
/// with no agent between (none of them is, for a caller with no person).
fn written_only_by(caller: &Caller, rows: &[Authorship]) -> bool {
    match caller.person() {
        Some(person) => rows.iter().all(|row| row.only_by(&person.eid)),
        None => rows.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shed_store::{Actor, Person};

    fn ada() -> Person {
        Person {
            eid: "p-ada".into(),
            handle: "ada".into(),
            name: "Ada".into(),
        }
    }

    fn by(person: &str, via: Option<&str>) -> Actor {
        Actor {
            person: person.into(),
            via: via.map(str::to_string),
            through: None,
        }
    }

    fn row(created: Actor, updated: Actor) -> Authorship {
        Authorship { created, updated }
    }

    fn agent() -> Caller {
        Caller::Agent {
            person: ada(),
            job: "job-1".into(),
        }
    }

    #[test]
    fn the_persons_own_rows_are_trusted_and_anyone_elses_or_an_agents_are_not() {
        let own = row(by("p-ada", None), by("p-ada", None));
        assert!(written_only_by(&agent(), &[own.clone(), own.clone()]));
        assert!(written_only_by(&agent(), &[]), "no rows: nothing untrusted");
        for other in [
            row(by("p-bob", None), by("p-bob", None)),
            row(by("p-ada", None), by("p-bob", None)),
            row(by("p-bob", None), by("p-ada", None)),
            row(by("p-ada", Some("agent:job-1")), by("p-ada", None)),
            row(by("p-ada", None), by("p-ada", Some("agent:job-2"))),
        ] {
            assert!(
                !written_only_by(&agent(), &[own.clone(), other.clone()]),
                "one row written by another makes the answer untrusted: {other:?}"
            );
        }
        assert!(!written_only_by(&Caller::Nobody, &[own]));
    }

    #[test]
    fn integrity_needs_both_a_closed_access_and_the_persons_own_writing() {
        let trusted = |access, by_caller| of_access(access, "demo", by_caller).integrity;
        assert_eq!(trusted(Access::Private, true), Integrity::Trusted);
        assert_eq!(trusted(Access::Public, true), Integrity::Trusted);
        assert_eq!(trusted(Access::Open, true), Integrity::Untrusted);
        for access in [Access::Private, Access::Public, Access::Open] {
            assert_eq!(trusted(access, false), Integrity::Untrusted);
        }
        assert_eq!(
            of_access(Access::Private, "demo", true).readers,
            ["space:demo"]
        );
        assert_eq!(of_access(Access::Open, "demo", false).readers, ["public"]);
    }
}
