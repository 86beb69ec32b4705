//! Administration: people, spaces and members — and turning a
//! token or a handle into the [`Caller`] a door acts for. A token is shown
//! once; only its sha256 is kept.

use shed_store::revocable::MemberChange;

use crate::access::{SIGN_IN_HOW, last_owner_of_space};
use crate::caller::ReadWithCredential;
use crate::credentials::Presented;
use crate::names::{bad_slug, is_slug, shown};
use crate::secrets::{hash, now};
use crate::texts::is_plain;
use crate::{Caller, Door, Host, HostError, Person, Role};

/// How often, at most, a token's "last used" is written, in seconds.
const LAST_USED_EVERY: i64 = 60;

impl Host {
    /// Adds a person (`name` defaults to the handle) — refused when the
    /// name holds a character that is not plain ([`is_plain`], as a
    /// token's and a client's name): it is shown on every page and line
    /// that says who did something.
    pub async fn add_person(&self, handle: &str, name: Option<&str>) -> Result<Person, HostError> {
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(handle);
        if !name.chars().all(is_plain) {
            return Err(HostError::BadInput(format!(
                "the name {} holds control or bidirectional formatting characters — give the person's name in plain characters",
                shown(name)
            )));
        }
        Ok(self.inner.store.add_person(handle, name).await?)
    }

    /// The person with this handle, unless they were removed.
    pub(crate) async fn person(&self, handle: &str) -> Result<Person, HostError> {
        self.inner
            .store
            .present_person(handle)
            .await?
            .ok_or_else(|| {
                HostError::NotFound(format!(
                    "no person {} — {} adds them",
                    shown(handle),
                    self.shed_command(&format!("person add {}", shown(handle)))
                ))
            })
    }

    /// Makes a space owned by the person `owner_handle`.
    pub async fn add_space(&self, slug: &str, owner_handle: &str) -> Result<(), HostError> {
        if !is_slug(slug) {
            return Err(bad_slug("space", slug));
        }
        let owner = self.person(owner_handle).await?;
        Ok(self.inner.store.add_space(slug, &owner.eid).await?)
    }

    /// Makes a person a member of a space with `role`, or changes their role
    /// — refused when that would leave the space without an owner.
    pub async fn add_member(&self, space: &str, handle: &str, role: Role) -> Result<(), HostError> {
        let person = self.person(handle).await?;
        if !self.inner.store.space_exists(space).await? {
            return Err(HostError::NotFound(format!(
                "no space {} — `shed space add {} --owner <handle>` makes one",
                shown(space),
                shown(space)
            )));
        }
        match self
            .inner
            .store
            .set_member(space, &person.eid, role.as_str())
            .await?
        {
            MemberChange::LastOwner => Err(last_owner_of_space(&person.handle, space)),
            MemberChange::Done | MemberChange::NotAMember => Ok(()),
        }
    }

    /// The person a bearer token presented to the MCP endpoint stands for
    /// (see [`Host::caller_for_token_to`]).
    pub async fn caller_for_token(&self, token: &str) -> Result<Caller, HostError> {
        self.caller_for_token_to(token, Presented::ToMcp).await
    }

    /// The person a bearer token presented `to` a resource stands for: one
    /// indexed read of its hash per call (the sha256 of a 128-bit secret is
    /// the key, so finding it tells a guesser nothing a constant-time compare
    /// would hide), so a revoked or expired token is refused at its very next
    /// request. An OAuth access token is taken only by the resource it was
    /// issued for — the MCP endpoint — and a pasted token by every door.
    /// When it was last used is written at most once a minute
    /// (`LAST_USED_EVERY`), after the answer, off the call's path.
    pub async fn caller_for_token_to(
        &self,
        token: &str,
        to: Presented,
    ) -> Result<Caller, HostError> {
        let at = now();
        let live = self
            .inner
            .store
            .live_token(&hash(token.trim()), at)
            .await?
            .filter(|live| match (&live.resource, to) {
                (None, _) => true,
                (Some(resource), Presented::ToMcp) => *resource == self.mcp_resource(),
                (Some(_), Presented::ToWeb) => false,
            })
            .ok_or_else(|| {
                HostError::SignIn(format!(
                    "sign in first — that token is not one this host knows, or it was revoked, has expired or is for another resource; {SIGN_IN_HOW}"
                ))
            })?;
        if live
            .last_used_at
            .is_none_or(|used| at - used >= LAST_USED_EVERY)
        {
            let store = self.inner.store.clone();
            tokio::spawn(async move {
                if let Err(error) = store.token_used(live.id, at).await {
                    tracing::warn!(%error, "could not record when a token was used");
                }
            });
        }
        Ok(Caller::Person {
            person: live.person,
            token: Some(live.id),
            door: match to {
                Presented::ToMcp => Door::Mcp,
                Presented::ToWeb => Door::Web,
            },
            client: live.client,
            read_with_credential: ReadWithCredential::of(live.memberships, live.generation),
        })
    }

    /// The person with this handle, as `shed mcp --as <handle>` acts for them.
    pub async fn caller_for_handle(&self, handle: &str) -> Result<Caller, HostError> {
        Ok(Caller::signed_in(
            self.person(handle).await?,
            None,
            Door::Mcp,
        ))
    }

    /// The person with this handle, as a `shed … --as <handle>` command at
    /// the server's terminal acts for them: the commands its sentences
    /// suggest carry `--as <handle>` and the flags of [`Host::at_terminal`].
    pub async fn caller_at_terminal(&self, handle: &str) -> Result<Caller, HostError> {
        let door = Door::Terminal {
            flags: self.terminal_flags.to_string(),
        };
        Ok(Caller::signed_in(self.person(handle).await?, None, door))
    }

    /// The tool-list fingerprint the caller last listed under, if any.
    pub async fn listed_tools(&self, caller: &Caller) -> Result<Option<String>, HostError> {
        match caller.listing_key() {
            Some(key) => Ok(self.inner.store.listed_tools(&key).await?),
            None => Ok(None),
        }
    }

    /// Remembers the tool-list fingerprint the caller listed under (a
    /// signed-out caller has nothing to remember it by).
    pub async fn record_listed_tools(
        &self,
        caller: &Caller,
        fingerprint: &str,
    ) -> Result<(), HostError> {
        if let Some(key) = caller.listing_key() {
            self.inner
                .store
                .record_listed_tools(&key, fingerprint)
                .await?;
        }
        Ok(())
    }
}
