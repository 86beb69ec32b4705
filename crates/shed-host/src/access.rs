//! The access table: who may read and who may write an app, and the sentence
//! each refusal says. Every door's decisions come from here.
//!
//! | access  | reads                | writes                         |
//! |---------|----------------------|--------------------------------|
//! | private | members              | owners and editors             |
//! | public  | anyone               | owners and editors             |
//! | open    | anyone               | anyone signed in               |
//!
//! A write always needs a person (it is recorded as theirs), so a signed-out
//! caller is asked to sign in. A private app does not exist for somebody
//! outside its space: they read "no app …", exactly as for a name nobody used.

use crate::{Access, HostError, Role};

/// How to sign in, the tail of every "sign in first" sentence.
pub const SIGN_IN_HOW: &str = "send a bearer token from `shed token create <handle>` in the \
Authorization header, or run `shed mcp --as <handle>` over stdio";

/// The viewer's sentence, the one the page would have shown them.
pub const VIEWER_SENTENCE: &str =
    "you can read this app but not change it — its owner can make you an editor";

/// "sign in first — …how…", for a call that needs a person and has none.
pub fn sign_in_first() -> HostError {
    HostError::SignIn(format!("sign in first — {SIGN_IN_HOW}"))
}

/// Reading or writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    Read,
    Write,
}

/// Where the caller stands towards one app.
#[derive(Clone, Copy, Debug)]
pub struct Standing {
    /// A person is calling (directly or through an agent).
    pub signed_in: bool,
    /// Their role in the app's space, if they are a member.
    pub role: Option<Role>,
}

/// Decides one cell of the access table for the app `space/app`.
pub fn decide(
    app: &str,
    space: &str,
    access: Access,
    who: Standing,
    want: Want,
) -> Result<(), HostError> {
    let hidden = || HostError::NotFound(format!("no app {app}"));
    match (access, want) {
        (Access::Private, Want::Read) => match (who.signed_in, who.role) {
            (_, Some(_)) => Ok(()),
            (false, None) => Err(sign_in_first()),
            (true, None) => Err(hidden()),
        },
        (Access::Public | Access::Open, Want::Read) => Ok(()),
        (_, Want::Write) if !who.signed_in => Err(sign_in_first()),
        (Access::Open, Want::Write) => Ok(()),
        (Access::Private | Access::Public, Want::Write) => match who.role {
            Some(role) if role.edits() => Ok(()),
            Some(_) => Err(HostError::Refused(VIEWER_SENTENCE.to_string())),
            None if access == Access::Private => Err(hidden()),
            None => Err(HostError::Refused(format!(
                "{app} is public: anyone reads it, and only the owners and editors of {space} \
                 change it — an owner of {space} can add you"
            ))),
        },
    }
}

/// Whether somebody with `role` in the app's space may deploy `space/app`
/// asking for access `wanted`, when it has `current` (`None` for a new app).
/// Who may read an app is its space owner's choice: an editor's deploy keeps
/// the access the app has, and one asking for another is refused. An
/// editor making a new app chooses its access (it holds no data yet).
pub fn may_set_access(
    app: &str,
    space: &str,
    role: Role,
    current: Option<Access>,
    wanted: Access,
) -> Result<(), HostError> {
    match current {
        Some(current) if current != wanted && role != Role::Owner => {
            Err(HostError::Refused(format!(
                "only an owner of {space} changes who may read {app} (it is {}) — deploy without \
                 an access to keep it {}, or ask an owner of {space}",
                current.as_str(),
                current.as_str()
            )))
        }
        _ => Ok(()),
    }
}

/// What a caller outside a space reads when they try to deploy into it —
/// the same whether the space exists or not, so nobody learns which do.
pub fn not_a_space_you_edit(space: &str) -> HostError {
    HostError::NotFound(format!(
        "{space} is not a space you own or edit — `spaces` lists yours, an owner of a space can \
         add you as an editor, and `shed space add {space} --owner <handle>` makes a new one"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(access: Access, signed_in: bool, role: Option<Role>, want: Want) -> String {
        match decide(
            "jeff/runs",
            "jeff",
            access,
            Standing { signed_in, role },
            want,
        ) {
            Ok(()) => "ok".into(),
            Err(HostError::SignIn(_)) => "sign-in".into(),
            Err(HostError::NotFound(s)) => format!("not-found: {s}"),
            Err(HostError::Refused(s)) => format!("refused: {s}"),
            Err(other) => format!("other: {other}"),
        }
    }

    #[test]
    fn a_viewer_writing_a_private_app_reads_the_viewer_sentence() {
        assert_eq!(
            cell(Access::Private, true, Some(Role::Viewer), Want::Write),
            format!("refused: {VIEWER_SENTENCE}")
        );
    }

    #[test]
    fn a_stranger_does_not_learn_a_private_app_exists() {
        assert_eq!(
            cell(Access::Private, true, None, Want::Read),
            "not-found: no app jeff/runs"
        );
        assert_eq!(
            cell(Access::Private, true, None, Want::Write),
            "not-found: no app jeff/runs"
        );
    }

    #[test]
    fn only_an_owner_changes_an_apps_access() {
        let set = |role, current, wanted| {
            may_set_access("jeff/runs", "jeff", role, current, wanted).map_err(|e| e.to_string())
        };
        assert_eq!(
            set(Role::Editor, Some(Access::Private), Access::Public),
            Err(
                "only an owner of jeff changes who may read jeff/runs (it is private) — deploy \
                 without an access to keep it private, or ask an owner of jeff"
                    .to_string()
            )
        );
        assert_eq!(set(Role::Editor, Some(Access::Open), Access::Open), Ok(()));
        assert_eq!(set(Role::Editor, None, Access::Public), Ok(()));
        assert_eq!(
            set(Role::Owner, Some(Access::Private), Access::Open),
            Ok(())
        );
    }

    #[test]
    fn nobody_may_write_an_open_app_without_signing_in() {
        assert_eq!(cell(Access::Open, false, None, Want::Write), "sign-in");
        assert_eq!(cell(Access::Open, false, None, Want::Read), "ok");
        assert_eq!(cell(Access::Open, true, None, Want::Write), "ok");
    }
}
