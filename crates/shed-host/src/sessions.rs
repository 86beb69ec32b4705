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
//!
//! A sign-in has a public id, shared by the platform host's session and the
//! space hosts' sessions its hops made: the account page lists a person's
//! sign-ins by it — the browser's `User-Agent` at sign-in, when, and when
//! last seen (recorded at most once a minute per session, not on every
//! request) — and ends one by it, on every host, at its next request.

use shed_store::web_sessions::{NewWebSession, WebSessionRecord};

use crate::secrets::{hash, now, secret};

use crate::{Caller, Door, Host, HostError, Person};

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
/// A session's last sighting is written at most this often (seconds).
pub const SEEN_EVERY: i64 = 60;
/// The longest `User-Agent` kept, in characters.
const USER_AGENT_CHARS: usize = 300;

/// One sign-in of a person, as their account page lists it: the sessions it
/// holds on the platform's host and the space hosts, taken together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInSession {
    /// Public: how the person names it to end it.
    pub id: String,
    /// The browser's `User-Agent` at sign-in, as it said it.
    pub user_agent: Option<String>,
    /// Unix seconds.
    pub signed_in_at: i64,
    /// Unix seconds: the latest sighting on any of its hosts.
    pub last_seen: i64,
    /// The spaces whose hosts it is signed in on.
    pub spaces: Vec<String>,
    /// Whether it is the sign-in of the request asking.
    pub this_browser: bool,
}

/// A sign-in link, shown once.
#[derive(Clone, Debug)]
pub struct LoginLink {
    /// `http://localhost:7700/_shed/login?key=<secret>`
    pub url: String,
    /// The person it signs in: whoever opens it becomes them.
    pub person: Person,
}

/// What using a sign-in link gives: a session on the platform's own host,
/// and a one-time hop for each of the person's spaces, in slug order.
#[derive(Clone, Debug)]
pub struct SignedIn {
    /// The person now signed in.
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
    /// The fresh one-time code the browser carries back to the platform's
    /// host, which confirms it, and then to the space's host, which trades
    /// it for a session.
    pub back: String,
    /// The secret of the space host's own sign-in cookie, set in the
    /// browser that brought the code: only that browser's hop is traded
    /// for a session.
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
    /// `user_agent` is the browser's `User-Agent`, kept to tell its session
    /// from the person's others.
    pub async fn sign_in_with_link(
        &self,
        key: &str,
        user_agent: Option<&str>,
    ) -> Result<SignedIn, HostError> {
        let store = &self.inner.store;
        let eid = store
            .use_login_link(&hash(key.trim()), now())
            .await?
            .ok_or_else(link_spent)?;
        let person = store.person_by_eid(&eid).await?.ok_or_else(link_spent)?;
        self.open_sessions(person, user_agent).await
    }

    /// Signs a person in on the web, however they proved who they are (a
    /// link, a passkey): one sign-in — a session on the platform's host
    /// with the browser's `user_agent`, a hand-off secret, and a hop for
    /// each of their spaces carrying the sign-in's id.
    pub(crate) async fn open_sessions(
        &self,
        person: Person,
        user_agent: Option<&str>,
    ) -> Result<SignedIn, HostError> {
        let at = now();
        let store = &self.inner.store;
        let eid = person.eid.clone();
        let sign_in = sign_in_id();
        let session = self
            .add_session(&eid, PLATFORM_HOST, &sign_in, user_agent)
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
                    &sign_in,
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
    /// The session joins the sign-in the hop was made by.
    pub async fn sign_in_with_hop(
        &self,
        space: &str,
        back: &str,
        browser: Option<&str>,
        user_agent: Option<&str>,
    ) -> Result<(Person, String), HostError> {
        let store = &self.inner.store;
        let browser = browser.map(|secret| hash(secret.trim()));
        let used = store
            .use_web_hop(space, &hash(back.trim()), browser.as_deref(), now())
            .await?
            .ok_or_else(|| hop_spent(space))?;
        let person = store
            .person_by_eid(&used.person)
            .await?
            .ok_or_else(|| hop_spent(space))?;
        let sign_in = used.sign_in.unwrap_or_else(sign_in_id);
        let session = self
            .add_session(&used.person, space, &sign_in, user_agent)
            .await?;
        Ok((person, session))
    }

    /// A new session of the person `eid` on `host`, part of `sign_in`: its
    /// secret, for the browser's cookie.
    async fn add_session(
        &self,
        eid: &str,
        host: &str,
        sign_in: &str,
        user_agent: Option<&str>,
    ) -> Result<String, HostError> {
        let session = secret();
        let at = now();
        let user_agent = user_agent
            .map(|said| {
                said.trim()
                    .chars()
                    .take(USER_AGENT_CHARS)
                    .collect::<String>()
            })
            .filter(|said| !said.is_empty());
        self.inner
            .store
            .add_web_session(NewWebSession {
                person: eid.to_string(),
                space: host.to_string(),
                hash: hash(&session),
                sign_in: sign_in.to_string(),
                user_agent,
                at,
                expires_at: at + SESSION_SECONDS,
            })
            .await?;
        Ok(session)
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
        let (hash, at) = (hash(session.trim()), now());
        let Some(seen) = store.web_session(host, &hash, at).await? else {
            return Ok(Caller::Nobody);
        };
        if at - seen.last_seen >= SEEN_EVERY {
            // A sighting not written is only a "last seen" a little old: the
            // request goes on.
            if let Err(error) = store.touch_web_session(&hash, at).await {
                tracing::warn!(%error, "a session's last sighting was not recorded");
            }
        }
        Ok(match store.person_by_eid(&seen.person).await? {
            Some(person) => Caller::signed_in(person, None, Door::Web),
            None => Caller::Nobody,
        })
    }

    /// Ends every web session of the person (and their unused sign-in
    /// links): how many sessions ended.
    pub async fn end_sessions(&self, handle: &str) -> Result<usize, HostError> {
        let person = self.person_of(&self.caller_for_handle(handle).await?)?;
        Ok(self.inner.store.end_web_sessions(&person.eid).await?)
    }

    /// The caller's sign-ins: the one of the browser holding `session` (its
    /// cookie on `space`'s host, `None` for the platform's) marked and first,
    /// then the others, newest first.
    pub async fn own_sessions(
        &self,
        caller: &Caller,
        space: Option<&str>,
        session: Option<&str>,
    ) -> Result<Vec<SignInSession>, HostError> {
        let person = caller.person().ok_or_else(crate::access::sign_in_first)?;
        let this = self.sign_in_holding(person, space, session).await?;
        let records = self.inner.store.web_sessions_of(&person.eid, now()).await?;
        let mut listed = sign_ins(records, this.as_deref());
        listed.sort_by_key(|one| !one.this_browser);
        Ok(listed)
    }

    /// The id of `person`'s sign-in that the browser holding `session` (its
    /// cookie on `space`'s host, `None` for the platform's) is signed in
    /// by; `None` for no cookie, or one that is not theirs.
    async fn sign_in_holding(
        &self,
        person: &Person,
        space: Option<&str>,
        session: Option<&str>,
    ) -> Result<Option<String>, HostError> {
        let Some(session) = session else {
            return Ok(None);
        };
        Ok(self
            .inner
            .store
            .web_session(space.unwrap_or(PLATFORM_HOST), &hash(session.trim()), now())
            .await?
            .filter(|seen| seen.person == person.eid)
            .map(|seen| seen.sign_in))
    }

    /// Ends one of the caller's sign-ins, named by its id as listed, on every
    /// host: the browser holding it is signed out at its next request.
    /// Answers whether it was the sign-in of the browser holding `session`
    /// (its cookie on the platform's host). Another person's, or one that
    /// ended already, is not found.
    pub async fn end_own_session(
        &self,
        caller: &Caller,
        id: &str,
        session: Option<&str>,
    ) -> Result<bool, HostError> {
        let person = caller.person().ok_or_else(crate::access::sign_in_first)?;
        let id = id.trim();
        let this = self.sign_in_holding(person, None, session).await?;
        let ended = self.inner.store.end_web_sign_in(&person.eid, id).await?;
        if ended == 0 {
            return Err(HostError::NotFound(format!(
                "no sign-in session {} of yours — it ended already, or is not yours; your \
                 account page lists yours",
                crate::names::shown(id)
            )));
        }
        tracing::info!(person = %person.handle, sessions = ended, "ended a sign-in session");
        Ok(this.as_deref() == Some(id))
    }

    fn person_of(&self, caller: &Caller) -> Result<Person, HostError> {
        caller
            .person()
            .cloned()
            .ok_or_else(|| HostError::Internal("a handle answered nobody".to_string()))
    }
}

/// A sign-in's public id: 64 random bits, in hex.
fn sign_in_id() -> String {
    secret()[..16].to_string()
}

/// A person's sessions as sign-ins, in the order of the first of each
/// (newest first), `this` marked.
fn sign_ins(records: Vec<WebSessionRecord>, this: Option<&str>) -> Vec<SignInSession> {
    let mut listed: Vec<SignInSession> = Vec::new();
    for record in records {
        let space = (record.space != PLATFORM_HOST).then_some(record.space);
        match listed.iter_mut().find(|one| one.id == record.sign_in) {
            Some(one) => {
                one.last_seen = one.last_seen.max(record.last_seen);
                one.signed_in_at = one.signed_in_at.min(record.signed_in_at);
                one.user_agent = one.user_agent.take().or(record.user_agent);
                one.spaces.extend(space);
            }
            None => listed.push(SignInSession {
                this_browser: this == Some(record.sign_in.as_str()),
                id: record.sign_in,
                user_agent: record.user_agent,
                signed_in_at: record.signed_in_at,
                last_seen: record.last_seen,
                spaces: space.into_iter().collect(),
            }),
        }
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    async fn host() -> (tempfile::TempDir, Host) {
        let (dir, host) = crate::test_host("http://localhost:7700").await;
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
        let signed = host.sign_in_with_link(key_of(&link), None).await.unwrap();
        assert_eq!(signed.person.handle, "ada");
        let spaces: Vec<&str> = signed
            .hops
            .iter()
            .map(|(space, _)| space.as_str())
            .collect();
        assert_eq!(spaces, ["club", "demo"]);
        let again = host
            .sign_in_with_link(key_of(&link), None)
            .await
            .unwrap_err();
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
        let signed = host.sign_in_with_link(key_of(&link), None).await.unwrap();
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
            host.sign_in_with_hop(&space, &seen.back, Some(&seen.browser), None)
                .await
                .is_err(),
            "not before the platform's host vouched for it"
        );

        let signed = host
            .sign_in_with_link(key_of(&host.login_link("ada").await.unwrap()), None)
            .await
            .unwrap();
        let code = &signed.hops.iter().find(|(s, _)| s == "demo").unwrap().1;
        let seen = host.see_hop(&space, code).await.unwrap();
        host.confirm_hop(&space, &seen.back, Some(&signed.handoff))
            .await
            .unwrap();
        let (person, session) = host
            .sign_in_with_hop(&space, &seen.back, Some(&seen.browser), None)
            .await
            .unwrap();
        assert_eq!(person.handle, "ada");
        assert!(
            host.sign_in_with_hop(&space, &seen.back, Some(&seen.browser), None)
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
            .sign_in_with_link(key_of(&host.login_link("bob").await.unwrap()), None)
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
            .sign_in_with_link(key_of(&host.login_link("ada").await.unwrap()), None)
            .await
            .unwrap();
        let unused = host.login_link("ada").await.unwrap();
        let bobs = host
            .sign_in_with_link(key_of(&host.login_link("bob").await.unwrap()), None)
            .await
            .unwrap();
        assert_eq!(host.end_sessions("ada").await.unwrap(), 1);
        assert!(matches!(
            host.caller_for_session(None, &signed.session)
                .await
                .unwrap(),
            Caller::Nobody
        ));
        assert!(host.sign_in_with_link(key_of(&unused), None).await.is_err());
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

    /// Signs `handle` in on the platform's host and on demo's through its
    /// hop, as the browser saying `user_agent`: the sign-in and demo's
    /// session secret.
    async fn signed_in_on_demo(host: &Host, handle: &str, user_agent: &str) -> (SignedIn, String) {
        let link = host.login_link(handle).await.unwrap();
        let signed = host
            .sign_in_with_link(key_of(&link), Some(user_agent))
            .await
            .unwrap();
        let code = &signed.hops.iter().find(|(s, _)| s == "demo").unwrap().1;
        let seen = host.see_hop("demo", code).await.unwrap();
        host.confirm_hop("demo", &seen.back, Some(&signed.handoff))
            .await
            .unwrap();
        let (_, demo) = host
            .sign_in_with_hop("demo", &seen.back, Some(&seen.browser), Some(user_agent))
            .await
            .unwrap();
        (signed, demo)
    }

    #[tokio::test]
    async fn a_person_lists_their_sign_ins_and_ends_one_on_every_host() {
        let (_dir, host) = host().await;
        let (laptop, laptop_demo) = signed_in_on_demo(&host, "ada", "Laptop/1.0").await;
        let (phone, phone_demo) = signed_in_on_demo(&host, "ada", "Phone/2.0").await;
        let ada = host
            .caller_for_session(None, &laptop.session)
            .await
            .unwrap();

        let listed = host
            .own_sessions(&ada, None, Some(&laptop.session))
            .await
            .unwrap();
        assert_eq!(listed.len(), 2, "{listed:?}");
        let agents: Vec<Option<&str>> = listed.iter().map(|s| s.user_agent.as_deref()).collect();
        assert!(agents.contains(&Some("Laptop/1.0")) && agents.contains(&Some("Phone/2.0")));
        for one in &listed {
            assert_eq!(one.spaces, ["demo"], "each holds demo's host too");
            assert_eq!(
                one.this_browser,
                one.user_agent.as_deref() == Some("Laptop/1.0")
            );
        }
        // Asked from demo's host with its cookie, the same browser is marked.
        let from_demo = host
            .own_sessions(&ada, Some("demo"), Some(&phone_demo))
            .await
            .unwrap();
        let marked: Vec<_> = from_demo.iter().filter(|s| s.this_browser).collect();
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].user_agent.as_deref(), Some("Phone/2.0"));
        let phones = marked[0].id.clone();

        // Bob cannot end it; a made-up id is not found; nothing changed.
        let bob = host
            .sign_in_with_link(key_of(&host.login_link("bob").await.unwrap()), None)
            .await
            .unwrap();
        let bob = host.caller_for_session(None, &bob.session).await.unwrap();
        for (who, id) in [
            (&bob, phones.as_str()),
            (&ada, "0123456789abcdef"),
            (&ada, ""),
        ] {
            let refused = host.end_own_session(who, id, None).await.unwrap_err();
            assert!(
                matches!(refused, HostError::NotFound(ref s) if s.contains("of yours")),
                "{refused}"
            );
        }
        assert!(
            host.end_own_session(&Caller::Nobody, &phones, None)
                .await
                .is_err()
        );
        assert_eq!(host.own_sessions(&ada, None, None).await.unwrap().len(), 2);

        let this_browser = host
            .end_own_session(&ada, &phones, Some(&laptop.session))
            .await
            .unwrap();
        assert!(!this_browser, "the laptop ended the phone's sign-in");
        for (space, session) in [(None, &phone.session), (Some("demo"), &phone_demo)] {
            assert!(
                matches!(
                    host.caller_for_session(space, session).await.unwrap(),
                    Caller::Nobody
                ),
                "the phone is signed out on {space:?}"
            );
        }
        for (space, session) in [(None, &laptop.session), (Some("demo"), &laptop_demo)] {
            assert!(
                host.caller_for_session(space, session)
                    .await
                    .unwrap()
                    .person()
                    .is_some()
            );
        }
        let left = host
            .own_sessions(&ada, None, Some(&laptop.session))
            .await
            .unwrap();
        assert_eq!(left.len(), 1);
        assert!(left[0].this_browser);
        // Ending the sign-in of the browser asking says it was its own.
        let this_browser = host
            .end_own_session(&ada, &left[0].id, Some(&laptop.session))
            .await
            .unwrap();
        assert!(this_browser, "the laptop ended its own sign-in");
    }

    #[tokio::test]
    async fn a_session_s_last_sighting_is_written_at_most_once_a_minute() {
        let (_dir, host) = host().await;
        let signed = host
            .sign_in_with_link(key_of(&host.login_link("ada").await.unwrap()), None)
            .await
            .unwrap();
        let store = &host.inner.store;
        let seen = || async {
            store
                .web_session("", &hash(&signed.session), now())
                .await
                .unwrap()
                .unwrap()
                .last_seen
        };
        // Seen within the minute: nothing is written.
        let a_little_ago = now() - SEEN_EVERY + 5;
        store
            .touch_web_session(&hash(&signed.session), a_little_ago)
            .await
            .unwrap();
        host.caller_for_session(None, &signed.session)
            .await
            .unwrap();
        assert_eq!(seen().await, a_little_ago);
        // Seen a minute ago or more: this request is recorded.
        let long_ago = now() - SEEN_EVERY - 5;
        store
            .touch_web_session(&hash(&signed.session), long_ago)
            .await
            .unwrap();
        let before = now();
        host.caller_for_session(None, &signed.session)
            .await
            .unwrap();
        assert!(seen().await >= before);
    }

    #[tokio::test]
    async fn a_made_up_session_is_nobody() {
        let (_dir, host) = host().await;
        assert!(matches!(
            host.caller_for_session(Some("demo"), "0123").await.unwrap(),
            Caller::Nobody
        ));
        assert!(host.sign_in_with_link("made-up", None).await.is_err());
    }
}
