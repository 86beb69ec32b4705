//! The platform's own records, behind interfaces each backend implements:
//! people ([`People`]); spaces, members, apps, deploys and their files,
//! drafts and listed tools ([`Platform`]); sign-ins ([`SignIns`]); jobs
//! ([`Jobs`]); tokens, and taking access back ([`Revocable`]); OAuth
//! clients, codes and grants ([`OAuth`]); view keys ([`ViewKeys`]);
//! passkeys and their ceremonies' states ([`Passkeys`]). (An app's
//! versions, trash and purge, and the generation, are `lifecycle.rs`'s
//! `Lifecycle`.) Each declaration makes the trait a backend implements and
//! the [`Store`](crate::Store) method that calls it. An interface written
//! once for every backend is implemented in a child module of this one
//! (`records/jobs.rs`, `lifecycle.rs`, `oauth.rs`, `passkeys.rs`,
//! `people.rs`, `platform.rs`, `revocable.rs`, `sign_ins.rs`,
//! `view_keys.rs`), over `txn.rs`'s transaction trait.

mod activity;
mod approvals;
mod jobs;
mod lifecycle;
pub(crate) mod oauth;
pub(crate) mod passkeys;
mod people;
pub(crate) mod platform;
mod revocable;
pub(crate) mod sign_ins;
mod view_keys;

use std::collections::BTreeMap;

use crate::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use crate::passkeys::{
    CeremonyCaps, CeremonyKept, CeremonyKind, CeremonyRecord, NewCeremony, NewPasskey,
    PasskeyRecord,
};
use crate::platform::{AppRecord, Membership, NewDeploy};
use crate::revocable::{LiveToken, MemberRecord, NewToken, SpaceRecord, TokenRecord};
use crate::txn::{Column, Records, Row, Txn};
use crate::values::Sql;
use crate::web_sessions::{HopUsed, NewWebSession, SessionSeen, WebSessionRecord};
use crate::{JobRecord, JobTerms, Person, StoreError, ViewKey};

/// The person whose eid, handle and name are a row's columns `first`,
/// `first + 1` and `first + 2`.
pub(crate) fn person_at(r: &Row, first: usize) -> Result<Person, StoreError> {
    Ok(Person {
        eid: r.get(first)?,
        handle: r.get(first + 1)?,
        name: r.get(first + 2)?,
    })
}

/// A record read from a row a statement answers.
pub(crate) trait FromRow: Sized {
    /// The record this row holds.
    fn from_row(r: Row) -> Result<Self, StoreError>;
}

/// A row of one column holds that column's value.
impl<C: Column> FromRow for C {
    fn from_row(mut r: Row) -> Result<C, StoreError> {
        r.take(0)
    }
}

/// A row of two columns holds a pair.
impl<A: Column, B: Column> FromRow for (A, B) {
    fn from_row(mut r: Row) -> Result<(A, B), StoreError> {
        Ok((r.take(0)?, r.take(1)?))
    }
}

impl FromRow for Person {
    fn from_row(r: Row) -> Result<Person, StoreError> {
        person_at(&r, 0)
    }
}

/// A statement's rows read as records, in a transaction.
pub(crate) trait ReadRows: Txn {
    /// The record of the row a statement answers, if it answers one.
    async fn optional_as<R: FromRow>(
        &self,
        sql: &str,
        params: &[Sql],
    ) -> Result<Option<R>, StoreError> {
        self.optional(sql, params)
            .await?
            .map(R::from_row)
            .transpose()
    }

    /// The record of the one row a statement answers (a count, an
    /// `INSERT … RETURNING`).
    async fn one_as<R: FromRow>(&self, sql: &str, params: &[Sql]) -> Result<R, StoreError> {
        R::from_row(self.one(sql, params).await?)
    }

    /// The records of every row a statement answers.
    async fn all_as<R: FromRow>(&self, sql: &str, params: &[Sql]) -> Result<Vec<R>, StoreError> {
        self.all(sql, params)
            .await?
            .into_iter()
            .map(R::from_row)
            .collect()
    }
}

impl<T: Txn> ReadRows for T {}

/// One statement run by itself: as a read, or as a write of its own.
pub(crate) trait Statement: Records {
    /// The record of the row a read answers, if it answers one.
    async fn read_optional<R: FromRow>(
        &self,
        sql: &str,
        params: &[Sql],
    ) -> Result<Option<R>, StoreError> {
        self.read_records(async |t| t.optional_as(sql, params).await)
            .await
    }

    /// The records of every row a read answers.
    async fn read_all<R: FromRow>(&self, sql: &str, params: &[Sql]) -> Result<Vec<R>, StoreError> {
        self.read_records(async |t| t.all_as(sql, params).await)
            .await
    }
}

impl<B: Records> Statement for B {}

/// The record of the row a write answers (`… RETURNING`), if it answers
/// one: the statement run as one write. (A plain function, neither a
/// method of [`Statement`] nor an `async fn`: a closure made inside either
/// carries their lifetimes, and a write's body must be `'static` — the
/// crates that call the store would not build.)
pub(crate) fn write_optional<'r, B: Records, R: FromRow + Send + 'static>(
    records: &'r B,
    sql: &'static str,
    params: &[Sql],
) -> impl Future<Output = Result<Option<R>, StoreError>> + 'r {
    let params = params.to_vec();
    records.write_records(async move |t| t.optional_as(sql, &params).await)
}

/// Runs a statement that answers no rows as one write: how many rows it
/// changed (a function, as [`write_optional`] is).
pub(crate) fn write_statement<'r, B: Records>(
    records: &'r B,
    sql: &'static str,
    params: &[Sql],
) -> impl Future<Output = Result<u64, StoreError>> + 'r {
    let params = params.to_vec();
    records.write_records(async move |t| t.execute(sql, &params).await)
}

/// The time now as the records' text columns keep a moment (`created_at`,
/// a deploy's `at`, a trash's, a migration's `applied_at`): RFC 3339, UTC.
pub(crate) fn now() -> String {
    jiff::Timestamp::now().to_string()
}

interface! {
    /// The platform's persons, by handle and by eid.
    trait People {
        /// Adds a person; refuses a handle that is taken or not a handle.
        async fn add_person(&self, handle: &str, name: &str) -> Result<Person, StoreError>;
        /// The person with this handle (`ada` or `@ada`), if there is one.
        async fn person(&self, handle: &str) -> Result<Option<Person>, StoreError>;
        /// The person with this eid, if there is one.
        async fn person_by_eid(&self, eid: &str) -> Result<Option<Person>, StoreError>;
    }
}

interface! {
    /// Spaces and their members, apps and their deploys (a deploy's files
    /// kept in the database), drafts, and the tool-list fingerprint a
    /// caller last listed under.
    trait Platform {
        /// Makes a space with its owner; refuses a slug that is taken.
        async fn add_space(&self, slug: &str, owner_eid: &str) -> Result<(), StoreError>;
        /// Makes the person a member of the space with this role (`owner`,
        /// `editor`, `viewer`), or changes the role they have — unless that
        /// would leave the space without an owner.
        async fn set_member(
            &self,
            space: &str,
            person_eid: &str,
            role: &str,
        ) -> Result<crate::revocable::MemberChange, StoreError>;
        /// The spaces a person belongs to, by slug, with their role in each.
        async fn memberships(&self, person_eid: &str) -> Result<Vec<Membership>, StoreError>;
        /// Whether a space of this slug exists.
        async fn space_exists(&self, slug: &str) -> Result<bool, StoreError>;
        /// One app, if it has been deployed.
        async fn platform_app(
            &self,
            space: &str,
            slug: &str,
        ) -> Result<Option<AppRecord>, StoreError>;
        /// The files of one deploy (an [`AppRecord::deploy`]), by path.
        async fn deploy_files(&self, deploy: i64) -> Result<BTreeMap<String, Vec<u8>>, StoreError>;
        /// Every path of one deploy, with the contents of only the paths in
        /// `contents_of` (the others empty): what reading an app's manifest
        /// needs, without reading its pages and images.
        async fn deploy_files_with_contents_of(
            &self,
            deploy: i64,
            contents_of: &[&str],
        ) -> Result<BTreeMap<String, Vec<u8>>, StoreError>;
        /// One file of one deploy, if it has that path.
        async fn deploy_file(
            &self,
            deploy: i64,
            path: &str,
        ) -> Result<Option<Vec<u8>>, StoreError>;
        /// Records a deploy (making the app on its first): the files as rows, the
        /// version one up, the title and access where said. Answers the app as it
        /// now answers.
        async fn record_deploy(&self, deploy: NewDeploy) -> Result<AppRecord, StoreError>;
        /// The drafts of an app's next deploy: path → content, `None` where a
        /// draft deletes a file of the current deploy.
        async fn drafts(
            &self,
            space: &str,
            app: &str,
        ) -> Result<BTreeMap<String, Option<Vec<u8>>>, StoreError>;
        /// Writes drafts of an app's next deploy (`None` deletes the file), all
        /// or nothing. The app need not be deployed yet; the space must exist.
        async fn write_drafts(
            &self,
            space: &str,
            app: &str,
            writes: BTreeMap<String, Option<Vec<u8>>>,
        ) -> Result<(), StoreError>;
        /// The tool-list fingerprint a caller (a key the host chooses) last listed under.
        async fn listed_tools(&self, caller: &str) -> Result<Option<String>, StoreError>;
        /// Remembers the tool-list fingerprint a caller listed under.
        async fn record_listed_tools(
            &self,
            caller: &str,
            fingerprint: &str,
        ) -> Result<(), StoreError>;
    }
}

interface! {
    /// The web's sign-in links, hops and sessions (their sha256 only).
    trait SignIns {
        /// Keeps a sign-in link's hash for a person until `expires_at`, and
        /// forgets whatever has expired by `now`.
        async fn add_login_link(
            &self,
            person_eid: &str,
            hash: &str,
            expires_at: i64,
            now: i64,
        ) -> Result<(), StoreError>;
        /// Uses the link with this hash: the person's eid the first time, while
        /// it lives; `None` for a link used already, expired, or never made.
        async fn use_login_link(&self, hash: &str, now: i64) -> Result<Option<String>, StoreError>;
        /// The person's eid of the link with this hash if it still works at
        /// `now` — without using it.
        async fn live_login_link(
            &self,
            hash: &str,
            now: i64,
        ) -> Result<Option<String>, StoreError>;
        /// Keeps a hop's hash: it signs the person in on `space`'s host, once,
        /// in the browser whose hand-off cookie hashes to `handoff`, as part
        /// of the sign-in `sign_in`.
        async fn add_web_hop(
            &self,
            person_eid: &str,
            space: &str,
            hash: &str,
            handoff: &str,
            sign_in: &str,
            expires_at: i64,
        ) -> Result<(), StoreError>;
        /// `space`'s host has seen the hop with this hash: from now on it is the
        /// hop with hash `back`, of the browser whose cookie hashes to
        /// `browser`. `false` for a hop seen already, expired, or never made.
        async fn bind_web_hop(
            &self,
            space: &str,
            hash: &str,
            back: &str,
            browser: &str,
            now: i64,
        ) -> Result<bool, StoreError>;
        /// The platform's host vouches for the bound hop with this hash when the
        /// hash of the hand-off cookie that came with it (`None`: none came) is
        /// the one it was made for: `true`. A hop that came with another is let
        /// go; one unbound, confirmed already, expired or never made is `false`.
        async fn confirm_web_hop(
            &self,
            space: &str,
            hash: &str,
            handoff: Option<&str>,
            now: i64,
        ) -> Result<bool, StoreError>;
        /// Uses the hop with this hash on `space`'s host: its person's eid and
        /// sign-in, once, if it was confirmed and `browser` is the hash of the
        /// cookie it was bound to. Used up either way.
        async fn use_web_hop(
            &self,
            space: &str,
            hash: &str,
            browser: Option<&str>,
            now: i64,
        ) -> Result<Option<HopUsed>, StoreError>;
        /// Keeps a web session's hash for a person on one host (`""` for the
        /// platform's own, else a space slug), seen last at its making.
        async fn add_web_session(&self, session: NewWebSession) -> Result<(), StoreError>;
        /// The person (eid), sign-in and last sighting of a live session with
        /// this hash on this host.
        async fn web_session(
            &self,
            space: &str,
            hash: &str,
            now: i64,
        ) -> Result<Option<SessionSeen>, StoreError>;
        /// Records that the session with this hash was seen at `now`.
        async fn touch_web_session(&self, hash: &str, now: i64) -> Result<(), StoreError>;
        /// A person's live sessions at `now`, every host's, newest sign-in
        /// first.
        async fn web_sessions_of(
            &self,
            person_eid: &str,
            now: i64,
        ) -> Result<Vec<WebSessionRecord>, StoreError>;
        /// Ends the sessions of one sign-in of a person, on every host:
        /// how many ended (none for another person's or an unknown one).
        async fn end_web_sign_in(
            &self,
            person_eid: &str,
            sign_in: &str,
        ) -> Result<usize, StoreError>;
        /// Ends every web session of a person (and their unused links and hops);
        /// answers how many sessions ended.
        async fn end_web_sessions(&self, person_eid: &str) -> Result<usize, StoreError>;
    }
}

interface! {
    /// The agents' runs the broker holds, each kept with its secret's hash
    /// and answered with its public name (`src/jobs.rs`).
    trait Jobs {
        /// Keeps a new job (its person must exist) with its secret's hash
        /// ([`crate::secret_hash`]; the secret itself is never kept), and
        /// answers it with its name.
        async fn add_job(&self, secret_hash: String, job: JobTerms) -> Result<JobRecord, StoreError>;
        /// The job whose secret has this hash, if there is one.
        async fn job_by_secret_hash(&self, hash: &str) -> Result<Option<JobRecord>, StoreError>;
        /// The job with this public name, if there is one.
        async fn job_named(&self, name: &str) -> Result<Option<JobRecord>, StoreError>;
        /// Ends the job named `name` at `at` (Unix milliseconds) unless it has
        /// ended already; answers the job as it now stands, or `None` when there
        /// is no such job.
        async fn end_job(&self, name: &str, at: i64) -> Result<Option<JobRecord>, StoreError>;
        /// Every job, oldest first.
        async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError>;
    }
}

interface! {
    /// What can be taken back (`src/revocable.rs`): bearer tokens (named,
    /// expiring, revoked), a person's place in a space, a person's place
    /// on the platform; and the lists an administrator reads them from.
    trait Revocable {
        /// Keeps a bearer token's hash; answers the token's id.
        async fn add_token(&self, token: NewToken) -> Result<i64, StoreError>;
        /// The token with this hash, if it is neither revoked nor expired at
        /// `now` (Unix seconds), with its person, their memberships and the
        /// registry's generation: one statement.
        async fn live_token(&self, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError>;
        /// Records that the token was used at `now` (Unix seconds).
        async fn token_used(&self, id: i64, now: i64) -> Result<(), StoreError>;
        /// The live pasted tokens, of one person (eid) or of everyone, oldest
        /// first (an OAuth grant's access tokens are listed as their grant,
        /// by `grants`).
        async fn tokens(
            &self,
            person: Option<&str>,
            now: i64,
        ) -> Result<Vec<TokenRecord>, StoreError>;
        /// Revokes the pasted token `id` at `now`: whether it was live.
        async fn revoke_token(&self, id: i64, now: i64) -> Result<bool, StoreError>;
        /// The person with this handle, unless they were removed.
        async fn present_person(&self, handle: &str) -> Result<Option<Person>, StoreError>;
        /// Everyone not removed, by handle.
        async fn people(&self) -> Result<Vec<Person>, StoreError>;
        /// Every space, by slug, with how many members and apps it has.
        async fn spaces(&self) -> Result<Vec<SpaceRecord>, StoreError>;
        /// The members of a space, owners first (`None`: no such space).
        async fn members(&self, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError>;
        /// Takes the person (eid) out of the space, unless they are its only
        /// owner.
        async fn remove_member(
            &self,
            space: &str,
            person: &str,
        ) -> Result<crate::revocable::MemberChange, StoreError>;
        /// Removes the person (eid) at `now` (Unix seconds): their tokens are
        /// revoked, their OAuth grants ended, their memberships, sessions and
        /// sign-in links gone, their jobs ended; their row stays, for what
        /// they wrote. Unless they are the only owner of a space: then
        /// nothing changes.
        async fn remove_person(
            &self,
            person: &str,
            now: i64,
        ) -> Result<crate::revocable::PersonRemoval, StoreError>;
    }
}

interface! {
    /// The platform's OAuth 2.1 authorization server's records
    /// (`src/oauth.rs`): clients, codes, grants and their refresh tokens.
    trait OAuth {
        /// Registers (or, for a metadata document read again, updates) a client.
        async fn register_client(&self, client: ClientRecord, now: i64) -> Result<(), StoreError>;
        /// Forgets the clients registered before `registered_before` that
        /// hold no live grant and no code unexpired at `now`: a client with a
        /// grant lives as long as the grant. Answers how many were forgotten.
        async fn forget_unused_clients(
            &self,
            registered_before: i64,
            now: i64,
        ) -> Result<u64, StoreError>;
        /// The client with this `client_id`, if registered.
        async fn oauth_client(&self, id: &str) -> Result<Option<ClientRecord>, StoreError>;
        /// Keeps a code until it is redeemed or expires.
        async fn add_code(&self, code: NewCode) -> Result<(), StoreError>;
        /// Spends the code with this hash at `now`: a code answers once; a code
        /// presented again revokes the grant it opened and its tokens.
        async fn redeem_code(&self, hash: &str, now: i64) -> Result<Redeemed, StoreError>;
        /// Opens the grant a redeemed code stands for, with its first access
        /// token and the hash of its first refresh token: the grant's id.
        async fn open_grant(
            &self,
            code_hash: &str,
            code: CodeRecord,
            access: NewToken,
            refresh_hash: &str,
            now: i64,
        ) -> Result<i64, StoreError>;
        /// Rotates the refresh token with this hash, presented by `client`, for
        /// `access.person`: the old one is spent, `new_refresh` replaces it and
        /// `access` is kept; a spent one presented again revokes the whole grant.
        async fn refresh_grant(
            &self,
            hash: &str,
            client: &str,
            access: NewToken,
            new_refresh: &str,
            now: i64,
        ) -> Result<Refreshed, StoreError>;
        /// The person (eid) of the live grant whose refresh token has this
        /// hash — or of the grant a spent one belonged to.
        async fn refresh_person(&self, hash: &str) -> Result<Option<String>, StoreError>;
        /// Revokes the grant an access or refresh token with this hash belongs
        /// to (RFC 7009): whether there was one.
        async fn revoke_grant_of(&self, hash: &str, now: i64) -> Result<bool, StoreError>;
        /// The live grants, of one person (eid) or of everyone, oldest first,
        /// as `shed token list` shows them: the client's name, and when one
        /// of its access tokens was last used. A grant lasts until revoked.
        async fn grants(&self, person: Option<&str>) -> Result<Vec<TokenRecord>, StoreError>;
        /// Revokes the grant `id` and its access tokens at `now`: whether it
        /// was live.
        async fn revoke_grant(&self, id: i64, now: i64) -> Result<bool, StoreError>;
    }
}

interface! {
    /// The keys that let a view load its private app's files (their sha256 only).
    trait ViewKeys {
        /// Keeps a view key until `expires_at`, and forgets the keys expired by `now`.
        async fn add_view_key(
            &self,
            key: ViewKey<'_>,
            expires_at: i64,
            now: i64,
        ) -> Result<(), StoreError>;
        /// The person's eid of the live key with this hash for app `space/slug`;
        /// `None` for a key expired, made for another app, or never made.
        async fn view_key_person(
            &self,
            hash: &str,
            space: &str,
            slug: &str,
            now: i64,
        ) -> Result<Option<String>, StoreError>;
    }
}

interface! {
    /// Passkeys, and the states of the ceremonies that add one or sign in
    /// with one (`src/passkeys.rs`).
    trait Passkeys {
        /// Keeps a passkey: its id, or `None` when a passkey with its
        /// credential is kept already (anyone's).
        async fn add_passkey(&self, passkey: NewPasskey) -> Result<Option<i64>, StoreError>;
        /// A person's (eid) passkeys, oldest first.
        async fn passkeys(&self, person: &str) -> Result<Vec<PasskeyRecord>, StoreError>;
        /// The passkey whose credential has this id (base64url), if one is kept.
        async fn passkey_by_credential(
            &self,
            credential: &str,
        ) -> Result<Option<PasskeyRecord>, StoreError>;
        /// Records a sign-in with passkey `id` at `now` (Unix seconds),
        /// keeping the credential as it now stands (its counter moved):
        /// whether the passkey is still kept.
        async fn passkey_used(&self, id: i64, passkey: &str, now: i64) -> Result<bool, StoreError>;
        /// Removes the person's (eid) passkey `id`: whether they had it.
        async fn remove_passkey(&self, person: &str, id: i64) -> Result<bool, StoreError>;
        /// Forgets the states expired by `now`, then keeps a ceremony's state
        /// unless `caps` are reached: counted among the live ceremonies of
        /// its kind, in all and from its address, in the transaction that
        /// keeps it.
        async fn add_ceremony(
            &self,
            ceremony: NewCeremony,
            now: i64,
            caps: Option<CeremonyCaps>,
        ) -> Result<CeremonyKept, StoreError>;
        /// Takes the ceremony of this kind whose id has this hash, if it lives
        /// at `now`: its state, once — then it is gone. `None` for one taken
        /// already, expired, of the other kind, or never made.
        async fn take_ceremony(
            &self,
            hash: &str,
            kind: CeremonyKind,
            now: i64,
        ) -> Result<Option<CeremonyRecord>, StoreError>;
    }
}
