//! Passkeys (WebAuthn, through the `webauthn-rs` crate): a person signed in
//! on the web adds one on their account page, and signs in with it
//! afterwards without a link. The relying party is the platform's public
//! URL: its host is the passkey's site (`localhost` for
//! `http://localhost:7700`), its origin the only one a ceremony is taken
//! from. A URL whose host is an IP address, or plain http away from
//! localhost, turns passkeys off, with the sentence saying why
//! ([`Host::passkeys_off`]).
//!
//! Each ceremony is two calls: a start that answers the options the browser
//! hands `navigator.credentials` and a ceremony id (128 random bits; the
//! database keeps its sha256 and the library's state for five minutes when
//! adding a passkey, two for a sign-in), and a finish that takes that state
//! once — so a registration or sign-in
//! started on one shed server may finish on another sharing the database,
//! and an answer sent twice is refused the second time. Signing in asks for
//! a discoverable credential, so nobody types a handle: the authenticator
//! says whose it is (a user handle derived from the person), and the
//! credential's id finds the passkey. A passkey sign-in opens the very
//! sessions a sign-in link opens ([`Host::sign_in_with_passkey`] answers
//! the same [`SignedIn`]). A counter that goes backwards — a copied
//! authenticator — is refused.
//!
//! Anyone may start a sign-in, so the sign-ins started and not finished are
//! capped: [`MAX_LIVE_SIGN_INS`] in all and [`MAX_LIVE_SIGN_INS_PER_ADDRESS`]
//! from one address (as [`crate::client_address::counted`] counts it), each
//! kept [`SIGN_IN_CEREMONY_SECONDS`]; past a cap a start is refused with a
//! sentence and nothing is kept.

use std::net::IpAddr;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use shed_store::passkeys::{
    CeremonyCaps, CeremonyKept, CeremonyKind, NewCeremony, NewPasskey, PasskeyRecord,
};
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid, Webauthn, WebauthnBuilder, WebauthnError,
};

use crate::access::sign_in_first;
use crate::secrets::{hash, now, secret};
use crate::sessions::SignedIn;
use crate::{Caller, Host, HostError, Person};

/// How long adding a passkey's state lives: enough to find and touch a key.
pub const CEREMONY_SECONDS: i64 = 5 * 60;

/// How long a sign-in's state lives, and the browser's dialog is told to
/// wait (the options' timeout): a passkey the authenticator keeps answers
/// in seconds, and anyone may start one, so it is kept shorter than adding
/// one.
pub const SIGN_IN_CEREMONY_SECONDS: i64 = 2 * 60;

/// The most sign-ins started and not finished kept at once, from every
/// address: a state is ≈ 0.3 KB (measured: the library's state 155 bytes,
/// its hash 64), so ≈ 0.3 MB at most.
pub const MAX_LIVE_SIGN_INS: i64 = 1024;

/// The most sign-ins started and not finished kept from one address: the
/// people of a household or an office behind one address, each pressing
/// the button a few times.
pub const MAX_LIVE_SIGN_INS_PER_ADDRESS: i64 = 16;

/// The most characters a passkey's name has.
pub const NAME_CHARS: usize = 60;

/// A passkey as its person's account page lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasskeyRow {
    /// The store's id of the passkey: what its person names to remove it.
    pub id: i64,
    /// The name its person gave it when adding it (the device it is on,
    /// say), one line of 1 to [`NAME_CHARS`] characters.
    pub name: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds; `None` until it first signs in.
    pub last_used_at: Option<i64>,
}

impl From<PasskeyRecord> for PasskeyRow {
    fn from(record: PasskeyRecord) -> PasskeyRow {
        PasskeyRow {
            id: record.id,
            name: record.name,
            created_at: record.created_at,
            last_used_at: record.last_used_at,
        }
    }
}

/// A ceremony started: its id, to send back with the browser's answer, and
/// the options to hand `navigator.credentials.create` or `.get` (JSON, byte
/// strings in base64url).
#[derive(Clone, Debug)]
pub struct Ceremony {
    /// The ceremony's id, 128 random bits (the store keeps only its
    /// sha256): the browser's answer must come back with it.
    pub id: String,
    /// The options for `navigator.credentials.create` (adding a passkey)
    /// or `.get` (signing in), as the browser's JS hands them on.
    pub options: serde_json::Value,
}

/// The platform as a WebAuthn relying party — or why it cannot be one.
pub(crate) enum RelyingParty {
    On(Box<Webauthn>),
    Off(String),
}

impl RelyingParty {
    /// The relying party of a public URL (`scheme://host[:port]`, as
    /// [`crate::address::PublicUrl`] writes it).
    pub(crate) fn of(public_url: &str, host: &str) -> RelyingParty {
        let off = |why: String| {
            RelyingParty::Off(format!(
                "Passkeys are off on this shed: {why}. Sign in with a link (`shed login <handle>` on the server)."
            ))
        };
        if host.parse::<std::net::Ipv4Addr>().is_ok() || host.starts_with('[') {
            return off(format!(
                "its public URL {public_url} names its host by an IP address, and a passkey belongs \
                 to a domain name — serve it at a name (http://localhost:7700 on this machine, \
                 or https://shed.example.org)"
            ));
        }
        let localhost = host == "localhost" || host.ends_with(".localhost");
        if public_url.starts_with("http://") && !localhost {
            return off(format!(
                "its public URL {public_url} is plain http, and a browser offers passkeys only over \
                 https (or on localhost) — serve it over https"
            ));
        }
        let built = Url::parse(public_url)
            .map_err(|e| e.to_string())
            .and_then(|origin| {
                WebauthnBuilder::new(host, &origin)
                    .and_then(|builder| builder.rp_name("shed").build())
                    .map_err(|e| e.to_string())
            });
        match built {
            Ok(webauthn) => RelyingParty::On(Box::new(webauthn)),
            Err(e) => off(format!("{host} cannot be a passkey's site ({e})")),
        }
    }
}

/// A passkey's name as the person gave it, trimmed; or the sentence saying
/// what to give instead.
fn checked_name(name: &str) -> Result<String, HostError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(HostError::BadInput(
            "a passkey needs a name, to tell it from your others when you remove one — \
             name it after the device it is on (laptop, phone)"
                .to_string(),
        ));
    }
    let chars = name.chars().count();
    if chars > NAME_CHARS {
        return Err(HostError::BadInput(format!(
            "a passkey's name is at most {NAME_CHARS} characters, and this one has {chars} — give a shorter name"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(HostError::BadInput(
            "a passkey's name is one line of plain text — give one without line breaks or tabs"
                .to_string(),
        ));
    }
    Ok(name.to_string())
}

/// The person signed in on the web, who may add and remove their passkeys:
/// not a token (a program's), not an agent.
fn web_person(caller: &Caller) -> Result<&Person, HostError> {
    match caller {
        Caller::Nobody => Err(sign_in_first()),
        Caller::Person {
            person,
            token: None,
            ..
        } => Ok(person),
        Caller::Person { .. } | Caller::Agent { .. } => Err(HostError::Refused(
            "passkeys are added and removed on the account page, in a browser signed in to shed — \
             a token or an agent cannot change them"
                .to_string(),
        )),
    }
}

/// The WebAuthn user handle of a person: 16 bytes derived from their eid,
/// the same for each of their passkeys, telling nothing of the eid.
fn user_handle(person_eid: &str) -> Uuid {
    let digest = Sha256::digest(format!("shed passkey user\0{person_eid}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// A credential's id as the store keys it.
fn credential_key(id: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(id)
}

fn adding_spent() -> HostError {
    HostError::BadInput(
        "this passkey step was finished already, is older than five minutes, or was started \
         on another account — press Add a passkey again"
            .to_string(),
    )
}

fn sign_in_spent() -> HostError {
    HostError::SignIn(
        "this passkey sign-in was finished already or is older than two minutes — \
         press Sign in with a passkey again"
            .to_string(),
    )
}

/// The refusal of a sign-in past a cap, or `None` for one kept.
fn sign_ins_full(kept: CeremonyKept) -> Option<HostError> {
    let sentence = match kept {
        CeremonyKept::Kept => return None,
        CeremonyKept::AddressFull => format!(
            "your address has {MAX_LIVE_SIGN_INS_PER_ADDRESS} passkey sign-ins started and not \
             finished, the most shed keeps for one address — finish one, or press Sign in with \
             a passkey again in two minutes"
        ),
        CeremonyKept::AllFull => format!(
            "shed has {MAX_LIVE_SIGN_INS} passkey sign-ins started and not finished, the most it \
             keeps at once — press Sign in with a passkey again in two minutes, or sign in with \
             a link (`shed login <handle>` on the server)"
        ),
    };
    Some(HostError::Busy(sentence))
}

fn unknown_passkey() -> HostError {
    HostError::SignIn(
        "this passkey is not one of this shed's: it was removed, or added on another shed — \
         sign in with a link (`shed login <handle>` on the server) and add it again on your account page"
            .to_string(),
    )
}

fn internal(what: &str, error: impl std::fmt::Display) -> HostError {
    HostError::Internal(format!("{what}: {error}"))
}

impl Host {
    /// `None` when passkeys work on this shed; else the sentence saying why
    /// they are off (an IP address or plain http in the public URL) and
    /// how to sign in instead.
    pub fn passkeys_off(&self) -> Option<&str> {
        match &self.inner.passkeys {
            RelyingParty::On(_) => None,
            RelyingParty::Off(why) => Some(why),
        }
    }

    fn relying_party(&self) -> Result<&Webauthn, HostError> {
        match &self.inner.passkeys {
            RelyingParty::On(webauthn) => Ok(webauthn),
            RelyingParty::Off(why) => Err(HostError::Refused(why.clone())),
        }
    }

    /// The caller's passkeys, oldest first.
    pub async fn own_passkeys(&self, caller: &Caller) -> Result<Vec<PasskeyRow>, HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?;
        let kept = self.inner.store.passkeys(&person.eid).await?;
        Ok(kept.into_iter().map(PasskeyRow::from).collect())
    }

    /// Starts adding a passkey named `name` to the person signed in on the
    /// web: the options for `navigator.credentials.create`, asking for a
    /// discoverable credential with user verification, and excluding the
    /// authenticators they added already.
    pub async fn start_adding_passkey(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<Ceremony, HostError> {
        let person = web_person(caller)?;
        let webauthn = self.relying_party()?;
        let name = checked_name(name)?;
        let store = &self.inner.store;
        let mut theirs = Vec::new();
        for record in store.passkeys(&person.eid).await? {
            let kept: Passkey = serde_json::from_str(&record.passkey)
                .map_err(|e| internal("a kept passkey does not read", e))?;
            theirs.push(kept.cred_id().clone());
        }
        let (options, state) = webauthn
            .start_passkey_registration(
                user_handle(&person.eid),
                &person.handle,
                &person.name,
                Some(theirs),
            )
            .map_err(|e| internal("could not start adding a passkey", e))?;
        let mut options = serde_json::to_value(&options)
            .map_err(|e| internal("a passkey's options do not write", e))?;
        // A passkey signs in without a handle only if the authenticator
        // keeps it (a discoverable, "resident" credential): asked for here,
        // in the options' own words (the library's types for them are not
        // public).
        options["publicKey"]["authenticatorSelection"]["residentKey"] = "required".into();
        options["publicKey"]["authenticatorSelection"]["requireResidentKey"] = true.into();
        let id = secret();
        let at = now();
        store
            .add_ceremony(
                NewCeremony {
                    hash: hash(&id),
                    kind: CeremonyKind::Register,
                    person: Some(person.eid.clone()),
                    name: Some(name),
                    state: serde_json::to_string(&state)
                        .map_err(|e| internal("a passkey step's state does not write", e))?,
                    expires_at: at + CEREMONY_SECONDS,
                    address: None,
                },
                at,
                None,
            )
            .await?;
        Ok(Ceremony { id, options })
    }

    /// Finishes adding a passkey: the browser's answer (the JSON of the
    /// `PublicKeyCredential` `navigator.credentials.create` gave) to the
    /// ceremony `ceremony`, which the same person started. Refused: a
    /// ceremony finished before, expired or another's; an answer that does
    /// not check out; a passkey this shed keeps already.
    pub async fn finish_adding_passkey(
        &self,
        caller: &Caller,
        ceremony: &str,
        answer: serde_json::Value,
    ) -> Result<PasskeyRow, HostError> {
        let person = web_person(caller)?;
        let webauthn = self.relying_party()?;
        let store = &self.inner.store;
        let taken = store
            .take_ceremony(&hash(ceremony.trim()), CeremonyKind::Register, now())
            .await?
            .filter(|taken| taken.person.as_deref() == Some(person.eid.as_str()))
            .ok_or_else(adding_spent)?;
        let state: PasskeyRegistration = serde_json::from_str(&taken.state)
            .map_err(|e| internal("a passkey step's state does not read", e))?;
        let answer: RegisterPublicKeyCredential = serde_json::from_value(answer).map_err(|e| {
            HostError::BadInput(format!(
                "the browser's answer is not a new passkey ({e}) — press Add a passkey again"
            ))
        })?;
        let passkey = webauthn
            .finish_passkey_registration(&answer, &state)
            .map_err(|e| {
                HostError::BadInput(format!(
                    "the new passkey did not check out ({e}) — press Add a passkey again"
                ))
            })?;
        let name = taken.name.unwrap_or_default();
        let created_at = now();
        let id = store
            .add_passkey(NewPasskey {
                person: person.eid.clone(),
                credential: credential_key(passkey.cred_id()),
                passkey: serde_json::to_string(&passkey)
                    .map_err(|e| internal("a passkey does not write", e))?,
                name: name.clone(),
                created_at,
            })
            .await?
            .ok_or_else(|| {
                HostError::Conflict(
                    "this passkey is kept by this shed already — it signs in as it is; \
                     to add another, use another device or security key"
                        .to_string(),
                )
            })?;
        tracing::info!(person = %person.handle, passkey = id, "added a passkey");
        Ok(PasskeyRow {
            id,
            name,
            created_at,
            last_used_at: None,
        })
    }

    /// Removes one of the caller's passkeys, by its id as listed: its name.
    /// Another's, or one not there, is "no passkey".
    pub async fn remove_own_passkey(&self, caller: &Caller, id: &str) -> Result<String, HostError> {
        let person = web_person(caller)?;
        let none = || {
            HostError::NotFound(format!(
                "you have no passkey {} — reload your account page to see the ones you have",
                crate::names::shown(id)
            ))
        };
        let id: i64 = id.trim().parse().map_err(|_| none())?;
        let store = &self.inner.store;
        let name = store
            .passkeys(&person.eid)
            .await?
            .into_iter()
            .find(|kept| kept.id == id)
            .map(|kept| kept.name)
            .ok_or_else(none)?;
        if !store.remove_passkey(&person.eid, id).await? {
            return Err(none());
        }
        tracing::info!(person = %person.handle, passkey = id, "removed a passkey");
        Ok(name)
    }

    /// Starts a passkey sign-in asked from the address `from` (when
    /// known): the options for `navigator.credentials.get`, naming no
    /// credential (the authenticator offers the ones it keeps for this
    /// site). Refused past [`MAX_LIVE_SIGN_INS_PER_ADDRESS`] or
    /// [`MAX_LIVE_SIGN_INS`].
    pub async fn start_passkey_sign_in(&self, from: Option<IpAddr>) -> Result<Ceremony, HostError> {
        let webauthn = self.relying_party()?;
        let (mut options, state) = webauthn
            .start_discoverable_authentication()
            .map_err(|e| internal("could not start a passkey sign-in", e))?;
        // The browser asks at the button's press, in its own dialog: not
        // the form-filling ("conditional") kind the library sets.
        options.mediation = None;
        options.public_key.timeout = Some(SIGN_IN_CEREMONY_SECONDS as u32 * 1000);
        let id = secret();
        let at = now();
        let kept = self
            .inner
            .store
            .add_ceremony(
                NewCeremony {
                    hash: hash(&id),
                    kind: CeremonyKind::SignIn,
                    person: None,
                    name: None,
                    state: serde_json::to_string(&state)
                        .map_err(|e| internal("a passkey step's state does not write", e))?,
                    expires_at: at + SIGN_IN_CEREMONY_SECONDS,
                    address: Some(crate::client_address::counted(from).to_string()),
                },
                at,
                Some(CeremonyCaps {
                    all: MAX_LIVE_SIGN_INS,
                    per_address: MAX_LIVE_SIGN_INS_PER_ADDRESS,
                }),
            )
            .await?;
        if let Some(refused) = sign_ins_full(kept) {
            tracing::debug!(%refused, "refused a passkey sign-in");
            return Err(refused);
        }
        Ok(Ceremony {
            id,
            options: serde_json::to_value(&options)
                .map_err(|e| internal("a passkey's options do not write", e))?,
        })
    }

    /// Finishes a passkey sign-in with the browser's answer (the JSON of the
    /// `PublicKeyCredential` `navigator.credentials.get` gave): the sessions
    /// a sign-in link opens, for the passkey's person; the passkey's counter
    /// and last use recorded. Refused: a ceremony finished before or
    /// expired, a passkey this shed does not keep, an answer that does not
    /// check out, a counter that went backwards (a copied authenticator).
    /// `user_agent` is the browser's, kept as a link sign-in keeps it.
    pub async fn sign_in_with_passkey(
        &self,
        ceremony: &str,
        answer: serde_json::Value,
        user_agent: Option<&str>,
    ) -> Result<SignedIn, HostError> {
        let webauthn = self.relying_party()?;
        let store = &self.inner.store;
        let taken = store
            .take_ceremony(&hash(ceremony.trim()), CeremonyKind::SignIn, now())
            .await?
            .ok_or_else(sign_in_spent)?;
        let state: DiscoverableAuthentication = serde_json::from_str(&taken.state)
            .map_err(|e| internal("a passkey step's state does not read", e))?;
        let answer: PublicKeyCredential = serde_json::from_value(answer).map_err(|e| {
            HostError::SignIn(format!(
                "the browser's answer is not a passkey's ({e}) — press Sign in with a passkey again"
            ))
        })?;
        let (handle, credential) = webauthn
            .identify_discoverable_authentication(&answer)
            .map_err(|_| unknown_passkey())?;
        let record = store
            .passkey_by_credential(&credential_key(credential))
            .await?
            .filter(|record| user_handle(&record.person) == handle)
            .ok_or_else(unknown_passkey)?;
        let mut passkey: Passkey = serde_json::from_str(&record.passkey)
            .map_err(|e| internal("a kept passkey does not read", e))?;
        let result = webauthn
            .finish_discoverable_authentication_v2(&answer, state, &passkey)
            .map_err(|e| match e {
                WebauthnError::CredentialPossibleCompromise => HostError::SignIn(format!(
                    "the passkey {} counted backwards, as a copied authenticator does, so it was not \
                     taken — sign in with a link (`shed login <handle>` on the server) and remove it \
                     on your account page",
                    crate::names::shown(&record.name)
                )),
                other => HostError::SignIn(format!(
                    "the passkey's answer did not check out ({other}) — press Sign in with a passkey again"
                )),
            })?;
        passkey.update_credential(&result);
        let kept =
            serde_json::to_string(&passkey).map_err(|e| internal("a passkey does not write", e))?;
        if !store.passkey_used(record.id, &kept, now()).await? {
            return Err(unknown_passkey());
        }
        let person = store
            .person_by_eid(&record.person)
            .await?
            .ok_or_else(unknown_passkey)?;
        tracing::info!(person = %person.handle, passkey = record.id, "signed in with a passkey");
        self.open_sessions(person, user_agent).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn host_at(public_url: &str) -> (tempfile::TempDir, Host) {
        let (dir, host) = crate::test_host(public_url).await;
        host.add_person("ada", Some("Ada")).await.unwrap();
        (dir, host)
    }

    async fn ada(host: &Host) -> Caller {
        host.caller_for_handle("ada").await.unwrap()
    }

    #[test]
    fn the_relying_party_is_the_public_url_s_host_unless_it_cannot_be() {
        for (url, host) in [
            ("http://localhost:7700", "localhost"),
            ("https://shed.example.org", "shed.example.org"),
            ("http://shed.localhost:9000", "shed.localhost"),
        ] {
            assert!(
                matches!(RelyingParty::of(url, host), RelyingParty::On(_)),
                "{url}"
            );
        }
        for (url, host, why) in [
            ("http://127.0.0.1:7700", "127.0.0.1", "IP address"),
            ("http://[::1]:7700", "[::1]", "IP address"),
            ("http://shed.example.org", "shed.example.org", "plain http"),
        ] {
            match RelyingParty::of(url, host) {
                RelyingParty::Off(sentence) => assert!(
                    sentence.starts_with("Passkeys are off on this shed")
                        && sentence.contains(why)
                        && sentence.contains("shed login"),
                    "{sentence}"
                ),
                RelyingParty::On(_) => panic!("{url} is no passkey site"),
            }
        }
    }

    #[tokio::test]
    async fn a_name_is_one_line_of_one_to_sixty_characters() {
        let (_dir, host) = host_at("http://localhost:7700").await;
        let ada = ada(&host).await;
        for (name, said) in [
            ("", "a passkey needs a name"),
            ("   ", "a passkey needs a name"),
            (
                &"x".repeat(61),
                "at most 60 characters, and this one has 61",
            ),
            ("two\nlines", "one line of plain text"),
        ] {
            let refused = host.start_adding_passkey(&ada, name).await.unwrap_err();
            assert!(
                matches!(refused, HostError::BadInput(ref s) if s.contains(said)),
                "{name:?}: {refused}"
            );
        }
        let started = host
            .start_adding_passkey(&ada, &format!("  {}  ", "é".repeat(60)))
            .await
            .unwrap();
        let public_key = &started.options["publicKey"];
        assert_eq!(public_key["rp"]["id"], "localhost");
        assert_eq!(public_key["user"]["name"], "ada");
        assert_eq!(
            public_key["authenticatorSelection"]["residentKey"],
            "required"
        );
        assert_eq!(
            public_key["authenticatorSelection"]["userVerification"],
            "required"
        );
    }

    #[tokio::test]
    async fn only_a_person_signed_in_on_the_web_adds_or_removes_a_passkey() {
        let (_dir, host) = host_at("http://localhost:7700").await;
        let Caller::Person { person, .. } = ada(&host).await else {
            unreachable!()
        };
        let with_token = Caller::signed_in(person.clone(), Some(1), crate::Door::Mcp);
        let agent = Caller::Agent {
            person,
            job: "job-1".into(),
        };
        for caller in [&with_token, &agent] {
            let refused = host.start_adding_passkey(caller, "laptop").await;
            assert!(
                matches!(refused, Err(HostError::Refused(ref s)) if s.contains("a token or an agent cannot")),
                "{refused:?}"
            );
            assert!(host.remove_own_passkey(caller, "1").await.is_err());
        }
        assert!(matches!(
            host.start_adding_passkey(&Caller::Nobody, "laptop").await,
            Err(HostError::SignIn(_))
        ));
        let none = host.remove_own_passkey(&ada(&host).await, "7").await;
        assert!(
            matches!(none, Err(HostError::NotFound(ref s)) if s.contains("you have no passkey 7")),
            "{none:?}"
        );
    }

    #[tokio::test]
    async fn a_ceremony_is_finished_once_and_by_whoever_started_it() {
        let (_dir, host) = host_at("http://localhost:7700").await;
        host.add_person("bob", None).await.unwrap();
        let ada = ada(&host).await;
        let bob = host.caller_for_handle("bob").await.unwrap();
        let not_a_passkey = serde_json::json!({ "id": "x" });

        let adding = host.start_adding_passkey(&ada, "laptop").await.unwrap();
        let stranger = host
            .finish_adding_passkey(&bob, &adding.id, not_a_passkey.clone())
            .await;
        assert!(
            matches!(stranger, Err(HostError::BadInput(ref s)) if s.contains("started on another account")),
            "{stranger:?}"
        );
        let adding = host.start_adding_passkey(&ada, "laptop").await.unwrap();
        let bad = host
            .finish_adding_passkey(&ada, &adding.id, not_a_passkey.clone())
            .await;
        assert!(
            matches!(bad, Err(HostError::BadInput(ref s)) if s.contains("not a new passkey")),
            "{bad:?}"
        );
        let again = host
            .finish_adding_passkey(&ada, &adding.id, not_a_passkey.clone())
            .await;
        assert!(
            matches!(again, Err(HostError::BadInput(ref s)) if s.contains("finished already")),
            "{again:?}"
        );
        assert!(host.own_passkeys(&ada).await.unwrap().is_empty());

        let signing = host.start_passkey_sign_in(None).await.unwrap();
        assert!(
            signing.options["mediation"].is_null(),
            "a dialog, not a form's"
        );
        assert!(
            signing.options["publicKey"]["allowCredentials"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "no handle asked, no credential named"
        );
        let bad = host
            .sign_in_with_passkey(&signing.id, not_a_passkey.clone(), None)
            .await;
        assert!(matches!(bad, Err(HostError::SignIn(_))), "{bad:?}");
        let again = host
            .sign_in_with_passkey(&signing.id, not_a_passkey, None)
            .await;
        assert!(
            matches!(again, Err(HostError::SignIn(ref s)) if s.contains("finished already")),
            "{again:?}"
        );
    }

    #[tokio::test]
    async fn passkeys_off_refuse_with_the_reason() {
        let (_dir, host) = host_at("http://127.0.0.1:7700").await;
        let why = host.passkeys_off().expect("off at an IP address");
        let refused = host.start_passkey_sign_in(None).await.unwrap_err();
        assert_eq!(refused.to_string(), why);
        let ada = ada(&host).await;
        assert_eq!(
            host.start_adding_passkey(&ada, "laptop")
                .await
                .unwrap_err()
                .to_string(),
            why
        );
    }
}
