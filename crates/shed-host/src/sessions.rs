//! Signing in on the web. `shed login <handle>` makes a one-time link (ten
//! minutes, usable once) to the platform's own host. Using it starts a
//! session there, gives the browser a hand-off secret (its cookie on the
//! platform's host), and makes one hop per space of the person: a one-time
//! code (two minutes) each space's host trades for a session of its own, so
//! a browser holds a host-only cookie on every space host (a cookie set on
//! `localhost` never reaches `demo.localhost`). A code alone signs nobody
//! in — whoever pressed the button knows it, and could send it to someone
//! else as a link (login CSRF). The space's host binds it to a cookie of its
//! own and sends the browser back to the platform's host with a fresh code;
//! the platform's host confirms it only with the hand-off cookie the hop was
//! made for; then the space's host signs in the browser holding its cookie.
//! Sessions last thirty days; `shed logout <handle>` ends them all. Every
//! secret is 128 random bits, and only its sha256 is kept.

use crate::secrets::{hash, now, secret};

use crate::{Caller, Host, HostError, Person};

/// Where a sign-in link lands on the platform's own host.
pub const LOGIN_PATH: &str = "/_shed/login";
/// How long a sign-in link lives.
pub const LOGIN_LINK_SECONDS: i64 = 10 * 60;
/// How long a hop to a space's host lives.
pub const HOP_SECONDS: i64 = 2 * 60;
/// How long a web session lives.
pub const SESSION_SECONDS: i64 = 30 * 24 * 60 * 60;

/// The host a web session belongs to: the platform's own is kept as `""`.
const PLATFORM_HOST: &str = "";

/// A sign-in link, shown once.
#[derive(Clone, Debug)]
pub struct LoginLink {
    /// `http://localhost:7700/_shed/login?key=<secret>`
    pub url: String,
    pub person: Person,
}

/// What using a sign-in link gives: a session on the platform's own host,
/// and a one-time hop for each of the person's spaces, in slug order.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub person: Person,
    /// The session's secret, the cookie's value on the platform's host.
    pub session: String,
    /// The hand-off secret, for the platform host's sign-in cookie: the
    /// hops confirm only in the browser that holds it.
    pub handoff: String,
    /// (space slug, one-time code) for every space of the person.
    pub hops: Vec<(String, String)>,
}

/// A space's host has seen a hop's code: the code that takes the browser
/// back to the platform's host, and the secret of the space host's own
/// sign-in cookie.
#[derive(Clone, Debug)]
pub struct HopSeen {
    pub back: String,
    pub browser: String,
}

/// The refusal of a hop step that no longer works (or never did), on `space`.
fn hop_spent(space: &str) -> HostError {
    HostError::SignIn(format!(
        "this sign-in step for {} was used already, is older than two minutes, or was \
         started on another browser — open your sign-in link in the browser you want to \
         sign in on and press its button; `shed login <handle>` on the server makes a new link",
        crate::names::shown(space)
    ))
}

fn link_spent() -> HostError {
    HostError::SignIn(
        "this sign-in link was used already, is older than ten minutes, or was never made — \
         run `shed login <handle>` on the server for a new one"
            .to_string(),
    )
}

impl Host {
    /// A one-time sign-in link for the person with this handle.
    pub async fn login_link(&self, handle: &str) -> Result<LoginLink, HostError> {
        let person = self.person_of(&self.caller_for_handle(handle).await?)?;
        let key = secret();
        let at = now();
        self.inner
            .store
            .add_login_link(&person.eid, &hash(&key), at + LOGIN_LINK_SECONDS, at)
            .await?;
        Ok(LoginLink {
            url: format!("{}{LOGIN_PATH}?key={key}", self.public_url()),
            person,
        })
    }

    /// Who a sign-in link's key would sign in, without using it: refused,
    /// as [`Host::sign_in_with_link`] would refuse it, for a key used before,
    /// expired, or never made.
    pub async fn login_link_person(&self, key: &str) -> Result<Person, HostError> {
        let store = &self.inner.store;
        let eid = store
            .live_login_link(&hash(key.trim()), now())
            .await?
            .ok_or_else(link_spent)?;
        store.person_by_eid(&eid).await?.ok_or_else(link_spent)
    }

    /// Uses a sign-in link's key: a session on the platform's host, and a hop
    /// for each of the person's spaces. A key used before, expired, or never
    /// made is refused with how to get a new one.
    pub async fn sign_in_with_link(&self, key: &str) -> Result<SignedIn, HostError> {
        let store = &self.inner.store;
        let eid = store
            .use_login_link(&hash(key.trim()), now())
            .await?
            .ok_or_else(link_spent)?;
        let person = store.person_by_eid(&eid).await?.ok_or_else(link_spent)?;
        self.open_sessions(person).await
    }

    /// Signs a person in on the web, however they proved who they are (a
    /// link, a passkey): a session on the platform's host, a hand-off
    /// secret, and a hop for each of their spaces.
    pub(crate) async fn open_sessions(&self, person: Person) -> Result<SignedIn, HostError> {
        let at = now();
        let store = &self.inner.store;
        let eid = person.eid.clone();
        let session = secret();
        store
            .add_web_session(&eid, PLATFORM_HOST, &hash(&session), at + SESSION_SECONDS)
            .await?;
        let handoff = secret();
        let mut hops = Vec::new();
        for membership in store.memberships(&eid).await? {
            let code = secret();
            store
                .add_web_hop(
                    &eid,
                    &membership.space,
                    &hash(&code),
                    &hash(&handoff),
                    at + HOP_SECONDS,
                )
                .await?;
            hops.push((membership.space, code));
        }
        Ok(SignedIn {
            person,
            session,
            handoff,
            hops,
        })
    }

    /// `space`'s host has seen a hop's code: the hop now belongs to the
    /// browser that brought it (the secret of its cookie there) and goes on
    /// as a fresh code, back to the platform's host. A code seen before,
    /// expired, or made for another space is refused.
    pub async fn see_hop(&self, space: &str, code: &str) -> Result<HopSeen, HostError> {
        let seen = HopSeen {
            back: secret(),
            browser: secret(),
        };
        let bound = self
            .inner
            .store
            .bind_web_hop(
                space,
                &hash(code.trim()),
                &hash(&seen.back),
                &hash(&seen.browser),
                now(),
            )
            .await?;
        if bound {
            Ok(seen)
        } else {
            Err(hop_spent(space))
        }
    }

    /// The platform's host vouches for a hop come back from `space`'s host
    /// (its `back` code) when the browser sent the hand-off cookie the hop
    /// was made for. Refused — and the hop let go — otherwise.
    pub async fn confirm_hop(
        &self,
        space: &str,
        back: &str,
        handoff: Option<&str>,
    ) -> Result<(), HostError> {
        let handoff = handoff.map(|secret| hash(secret.trim()));
        let confirmed = self
            .inner
            .store
            .confirm_web_hop(space, &hash(back.trim()), handoff.as_deref(), now())
            .await?;
        if confirmed {
            Ok(())
        } else {
            Err(hop_spent(space))
        }
    }

    /// Trades a confirmed hop (its `back` code) on `space`'s host for a
    /// session there, in the browser whose cookie it was bound to: the
    /// person and the session's secret. Anything else is refused.
    pub async fn sign_in_with_hop(
        &self,
        space: &str,
        back: &str,
        browser: Option<&str>,
    ) -> Result<(Person, String), HostError> {
        let at = now();
        let store = &self.inner.store;
        let browser = browser.map(|secret| hash(secret.trim()));
        let eid = store
            .use_web_hop(space, &hash(back.trim()), browser.as_deref(), at)
            .await?
            .ok_or_else(|| hop_spent(space))?;
        let person = store
            .person_by_eid(&eid)
            .await?
            .ok_or_else(|| hop_spent(space))?;
        let session = secret();
        store
            .add_web_session(&eid, space, &hash(&session), at + SESSION_SECONDS)
            .await?;
        Ok((person, session))
    }

    /// The caller a session cookie stands for on a host (`None` for the
    /// platform's own, else the space): a stale or unknown session is
    /// nobody, so the page asks them to sign in.
    pub async fn caller_for_session(
        &self,
        space: Option<&str>,
        session: &str,
    ) -> Result<Caller, HostError> {
        let store = &self.inner.store;
        let host = space.unwrap_or(PLATFORM_HOST);
        let Some(eid) = store
            .web_session(host, &hash(session.trim()), now())
            .await?
        else {
            return Ok(Caller::Nobody);
        };
        Ok(match store.person_by_eid(&eid).await? {
            Some(person) => Caller::Person {
                person,
                token: None,
            },
            None => Caller::Nobody,
        })
    }

    /// Ends every web session of the person (and their unused sign-in
    /// links): how many sessions ended.
    pub async fn end_sessions(&self, handle: &str) -> Result<usize, HostError> {
        let person = self.person_of(&self.caller_for_handle(handle).await?)?;
        Ok(self.inner.store.end_web_sessions(&person.eid).await?)
    }

    fn person_of(&self, caller: &Caller) -> Result<Person, HostError> {
        caller
            .person()
            .cloned()
            .ok_or_else(|| HostError::Internal("a handle answered nobody".to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostConfig, Role};

    async fn host() -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(HostConfig {
            data_dir: dir.path().to_path_buf(),
            public_url: "http://localhost:7700".into(),
            database: shed_test_database::for_folder(dir.path()),
        })
        .await
        .unwrap();
        host.add_person("ada", Some("Ada")).await.unwrap();
        host.add_person("bob", None).await.unwrap();
        host.add_space("demo", "ada").await.unwrap();
        host.add_space("club", "bob").await.unwrap();
        host.add_member("club", "ada", Role::Viewer).await.unwrap();
        (dir, host)
    }

    fn key_of(link: &LoginLink) -> &str {
        link.url.split_once("?key=").unwrap().1
    }

    #[tokio::test]
    async fn a_link_signs_in_once_with_a_hop_per_space() {
        let (_dir, host) = host().await;
        let link = host.login_link("ada").await.unwrap();
        assert!(
            link.url
                .starts_with("http://localhost:7700/_shed/login?key=")
        );
        for _ in 0..2 {
            let person = host.login_link_person(key_of(&link)).await.unwrap();
            assert_eq!(person.handle, "ada", "looking does not use the link");
        }
        let signed = host.sign_in_with_link(key_of(&link)).await.unwrap();
        assert_eq!(signed.person.handle, "ada");
        let spaces: Vec<&str> = signed
            .hops
            .iter()
            .map(|(space, _)| space.as_str())
            .collect();
        assert_eq!(spaces, ["club", "demo"]);
        let again = host.sign_in_with_link(key_of(&link)).await.unwrap_err();
        assert!(
            matches!(again, HostError::SignIn(ref s) if s.contains("shed login <handle>")),
            "{again}"
        );
        assert_eq!(
            host.login_link_person(key_of(&link))
                .await
                .unwrap_err()
                .to_string(),
            again.to_string()
        );

        let platform = host
            .caller_for_session(None, &signed.session)
            .await
            .unwrap();
        assert_eq!(platform.person().map(|p| p.handle.as_str()), Some("ada"));
        // The platform's session is no space's.
        assert!(matches!(
            host.caller_for_session(Some("demo"), &signed.session)
                .await
                .unwrap(),
            Caller::Nobody
        ));
    }

    #[tokio::test]
    async fn a_hop_signs_in_once_only_on_its_space_and_in_its_browser() {
        let (_dir, host) = host().await;
        let link = host.login_link("ada").await.unwrap();
        let signed = host.sign_in_with_link(key_of(&link)).await.unwrap();
        let (space, code) = signed
            .hops
            .iter()
            .find(|(space, _)| space == "demo")
            .unwrap()
            .clone();
        assert!(
            host.see_hop("club", &code).await.is_err(),
            "a hop is for its own space"
        );
        let seen = host.see_hop(&space, &code).await.unwrap();
        assert!(
            host.see_hop(&space, &code).await.is_err(),
            "a code is seen once"
        );
        assert!(
            host.sign_in_with_hop(&space, &seen.back, Some(&seen.browser))
                .await
                .is_err(),
            "not before the platform's host vouched for it"
        );

        let signed = host
            .sign_in_with_link(key_of(&host.login_link("ada").await.unwrap()))
            .await
            .unwrap();
        let code = &signed.hops.iter().find(|(s, _)| s == "demo").unwrap().1;
        let seen = host.see_hop(&space, code).await.unwrap();
        host.confirm_hop(&space, &seen.back, Some(&signed.handoff))
            .await
            .unwrap();
        let (person, session) = host
            .sign_in_with_hop(&space, &seen.back, Some(&seen.browser))
            .await
            .unwrap();
        assert_eq!(person.handle, "ada");
        assert!(
            host.sign_in_with_hop(&space, &seen.back, Some(&seen.browser))
                .await
                .is_err(),
            "a hop works once"
        );
        let caller = host
            .caller_for_session(Some("demo"), &session)
            .await
            .unwrap();
        assert_eq!(caller.person().map(|p| p.handle.as_str()), Some("ada"));
        assert!(matches!(
            host.caller_for_session(Some("club"), &session)
                .await
                .unwrap(),
            Caller::Nobody
        ));

        // Login CSRF: bob's code, brought by a browser without bob's hand-off
        // cookie, is refused there and then, and gone.
        let bobs = host
            .sign_in_with_link(key_of(&host.login_link("bob").await.unwrap()))
            .await
            .unwrap();
        let (bob_space, bob_code) = bobs.hops[0].clone();
        let seen = host.see_hop(&bob_space, &bob_code).await.unwrap();
        for handoff in [None, Some(signed.handoff.as_str())] {
            let refused = host.confirm_hop(&bob_space, &seen.back, handoff).await;
            assert!(
                matches!(refused, Err(HostError::SignIn(ref s)) if s.contains("started on another browser")),
                "{refused:?}"
            );
        }
        assert!(
            host.confirm_hop(&bob_space, &seen.back, Some(&bobs.handoff))
                .await
                .is_err(),
            "let go"
        );
    }

    #[tokio::test]
    async fn logout_ends_every_session_and_unused_link() {
        let (_dir, host) = host().await;
        let signed = host
            .sign_in_with_link(key_of(&host.login_link("ada").await.unwrap()))
            .await
            .unwrap();
        let unused = host.login_link("ada").await.unwrap();
        let bobs = host
            .sign_in_with_link(key_of(&host.login_link("bob").await.unwrap()))
            .await
            .unwrap();
        assert_eq!(host.end_sessions("ada").await.unwrap(), 1);
        assert!(matches!(
            host.caller_for_session(None, &signed.session)
                .await
                .unwrap(),
            Caller::Nobody
        ));
        assert!(host.sign_in_with_link(key_of(&unused)).await.is_err());
        assert!(
            host.caller_for_session(None, &bobs.session)
                .await
                .unwrap()
                .person()
                .is_some(),
            "bob stays"
        );
        assert!(host.end_sessions("nobody-here").await.is_err());
    }

    #[tokio::test]
    async fn a_made_up_session_is_nobody() {
        let (_dir, host) = host().await;
        assert!(matches!(
            host.caller_for_session(Some("demo"), "0123").await.unwrap(),
            Caller::Nobody
        ));
        assert!(host.sign_in_with_link("made-up").await.is_err());
    }
}
