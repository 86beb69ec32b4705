//! Passkeys (WebAuthn credentials) as the platform keeps them: a person's
//! passkeys — the credential's id, the credential as the WebAuthn library
//! serialises it (its public key and counter), the name the person gave it,
//! when it was made and last used — and the short-lived states of the
//! ceremonies that add one or sign in with one. A ceremony's state is kept
//! under the sha256 of a random id the browser holds, until the expiry the
//! host gives, and is taken once: a registration or sign-in started on one
//! shed server may finish on another that shares the database. A sign-in's
//! state also keeps the address it was started from, so the host's caps on
//! live sign-ins ([`CeremonyCaps`]) are counted in the same transaction
//! that keeps one, across servers. Plain storage: what a passkey proves,
//! who may add or remove one, and the caps' numbers are decided in
//! shed-host.

/// A passkey as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasskeyRecord {
    /// The row's id, as the account page's Remove button names it.
    pub id: i64,
    /// The person's eid.
    pub person: String,
    /// The credential's id, base64url: what a browser's answer names.
    pub credential: String,
    /// The credential (public key, counter, flags), serialised as JSON.
    pub passkey: String,
    /// The name the person gave it (`laptop`, `phone`).
    pub name: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds; `None` until it first signs in.
    pub last_used_at: Option<i64>,
}

/// A passkey to keep.
#[derive(Clone, Debug)]
pub struct NewPasskey {
    /// The eid of the person the passkey signs in.
    pub person: String,
    /// The credential's id, base64url; a credential already kept (for
    /// anyone) is not kept again.
    pub credential: String,
    /// The credential (public key, counter, flags), serialised as JSON by
    /// the WebAuthn library.
    pub passkey: String,
    /// The name the person gave it (`laptop`, `phone`).
    pub name: String,
    /// When it was added, Unix seconds.
    pub created_at: i64,
}

/// Which ceremony a kept state belongs to: one is never taken for the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeremonyKind {
    /// Adding a passkey to a signed-in person.
    Register,
    /// Signing in with a passkey.
    SignIn,
}

impl CeremonyKind {
    /// How the `kind` column spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CeremonyKind::Register => "register",
            CeremonyKind::SignIn => "sign-in",
        }
    }
}

/// A ceremony's state to keep until `expires_at`.
#[derive(Clone, Debug)]
pub struct NewCeremony {
    /// The sha256 of the ceremony's id (the browser holds the id).
    pub hash: String,
    /// Which ceremony it is: only a taking of the same kind finds it.
    pub kind: CeremonyKind,
    /// The person adding a passkey (`None` for a sign-in: nobody yet).
    pub person: Option<String>,
    /// The name of the passkey being added.
    pub name: Option<String>,
    /// The WebAuthn library's state of the ceremony, serialised as JSON.
    pub state: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// The address the ceremony was started from, as the host counts
    /// addresses (`None` where it counts none).
    pub address: Option<String>,
}

/// The most live ceremonies of a kind a new one is kept beside: in all, and
/// started from its address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CeremonyCaps {
    /// The most live ceremonies of the kind, from every address together.
    pub all: i64,
    /// The most live ceremonies of the kind started from one address.
    pub per_address: i64,
}

/// What became of a ceremony's state given to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeremonyKept {
    /// Kept: it may be taken once, until it expires.
    Kept,
    /// Not kept: its address holds as many live ceremonies of its kind as
    /// the caps allow one address.
    AddressFull,
    /// Not kept: as many live ceremonies of its kind are kept as the caps
    /// allow in all.
    AllFull,
}

impl CeremonyKept {
    /// Whether a ceremony already kept `live` of its kind in all, and
    /// `from_address` from its address, may be kept beside them.
    pub(crate) fn under(caps: Option<CeremonyCaps>, live: i64, from_address: i64) -> CeremonyKept {
        match caps {
            Some(caps) if from_address >= caps.per_address => CeremonyKept::AddressFull,
            Some(caps) if live >= caps.all => CeremonyKept::AllFull,
            _ => CeremonyKept::Kept,
        }
    }
}

/// A ceremony's state, taken (and so gone) to finish it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CeremonyRecord {
    /// The eid of the person adding a passkey; `None` for a sign-in.
    pub person: Option<String>,
    /// The name the passkey being added will have; `None` for a sign-in.
    pub name: Option<String>,
    /// The WebAuthn library's state of the ceremony, serialised as JSON.
    pub state: String,
}
