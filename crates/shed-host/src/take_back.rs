//! Taking access back, as the CLI and a later web page ask it: tokens
//! listed and revoked, people listed and removed, spaces listed, members
//! listed and taken out. Each takes effect at the very next request of every
//! process on the database, since a request reads its token, session, job
//! and memberships there (no process remembers them).

use std::time::Duration;

use shed_store::revocable::{
    MemberChange, NewToken, PersonRemoval, Removed, SpaceRecord, TokenId, TokenRecord,
};

use crate::access::{OPERATOR, last_owner_of_space, last_owner_stays, may_remove_member};
use crate::names::shown;
use crate::secrets::{hash, now, secret};
use crate::texts::is_plain;
use crate::{Caller, Host, HostError, Person, Role};

/// What a new token is called and how long it lasts (by default: no name,
/// never expires).
#[derive(Clone, Copy, Debug, Default)]
pub struct TokenSpec<'a> {
    /// What its person calls it, to tell it from their others when listed
    /// (up to 100 plain characters, trimmed); `None` or blank: unnamed.
    pub name: Option<&'a str>,
    /// How long it lives from when it is made, in whole seconds; `None`:
    /// it never expires.
    pub ttl: Option<Duration>,
}

/// The most characters of a token's name.
const MOST_NAME_CHARS: usize = 100;

/// "no live token 3 — `listed`", `listed` saying where the live ones are
/// listed, as the caller's door does it.
pub(crate) fn no_token(id: TokenId, listed: &str) -> HostError {
    HostError::NotFound(format!("no live token {id} — {listed}"))
}

impl Host {
    /// A new bearer token for the person: `shed_` and 32 hex digits (128
    /// random bits), shown once; only its sha256 is kept.
    pub async fn create_token(
        &self,
        handle: &str,
        spec: TokenSpec<'_>,
    ) -> Result<String, HostError> {
        let person = self.person(handle).await?;
        let name = spec.name.map(str::trim).filter(|n| !n.is_empty());
        if let Some(name) = name
            && (name.chars().count() > MOST_NAME_CHARS || !name.chars().all(is_plain))
        {
            return Err(HostError::BadInput(format!(
                "the token name {} is too long or holds control or bidirectional formatting characters — use up to {MOST_NAME_CHARS} plain characters",
                shown(name)
            )));
        }
        let expires_at = match spec.ttl {
            Some(ttl) => Some(
                i64::try_from(ttl.as_secs())
                    .ok()
                    .and_then(|secs| now().checked_add(secs))
                    .ok_or_else(|| {
                        HostError::BadInput(
                            "that token's life is longer than a clock can count — say fewer days"
                                .to_string(),
                        )
                    })?,
            ),
            None => None,
        };
        let token = format!("shed_{}", secret());
        self.inner
            .store
            .add_token(NewToken {
                person: person.eid,
                hash: hash(&token),
                name: name.map(str::to_string),
                expires_at,
            })
            .await?;
        Ok(token)
    }

    /// The live tokens, of the person `handle` or of everyone — pasted
    /// ones, then the OAuth grants (named by their client): never a secret.
    pub async fn tokens(&self, handle: Option<&str>) -> Result<Vec<TokenRecord>, HostError> {
        let person = match handle {
            Some(handle) => Some(self.person(handle).await?.eid),
            None => None,
        };
        let store = &self.inner.store;
        let mut tokens = store.tokens(person.as_deref(), now()).await?;
        tokens.extend(store.grants(person.as_deref()).await?);
        Ok(tokens)
    }

    /// Revokes the token `id` as `shed token list` shows it (a grant's
    /// `oauth-<n>` ends the grant and every token it gave): refused from
    /// the next request on. Answers the id read.
    pub async fn revoke_token(&self, id: &str) -> Result<TokenId, HostError> {
        let id: TokenId = id
            .trim()
            .parse()
            .map_err(|e: shed_store::revocable::NotATokenId| HostError::BadInput(e.to_string()))?;
        let live = match id {
            TokenId::Pasted(token) => self.inner.store.revoke_token(token, now()).await?,
            TokenId::Grant(grant) => self.inner.store.revoke_grant(grant, now()).await?,
        };
        if live {
            Ok(id)
        } else {
            Err(no_token(
                id,
                &format!("{} shows the live ones", self.shed_command("token list")),
            ))
        }
    }

    /// Everyone who may sign in, by handle.
    pub async fn people(&self) -> Result<Vec<Person>, HostError> {
        Ok(self.inner.store.people().await?)
    }

    /// Removes the person: their tokens, sessions, sign-in links, jobs and
    /// memberships end; what they wrote stays, attributed to them. Refused
    /// while they are the last owner of a space.
    pub async fn remove_person(&self, handle: &str) -> Result<Removed, HostError> {
        let person = self.person(handle).await?;
        // The store makes the last-owner check in the removal's transaction.
        match self.inner.store.remove_person(&person.eid, now()).await? {
            PersonRemoval::Done(removed) => Ok(removed),
            PersonRemoval::LastOwnerOf(spaces) => Err(last_owner_stays(
                &person.handle,
                &crate::names::and_list(&spaces),
                "<space>",
            )),
        }
    }

    /// Every space, with how many members and apps it has.
    pub async fn all_spaces(&self) -> Result<Vec<SpaceRecord>, HostError> {
        Ok(self.inner.store.spaces().await?)
    }

    /// "no space demo — …", where the spaces are listed at this terminal.
    fn no_space(&self, space: &str) -> HostError {
        HostError::NotFound(format!(
            "no space {} — {} shows the spaces",
            shown(space),
            self.shed_command("space list")
        ))
    }

    /// "ed is no member of demo — …", where its members are listed for
    /// `by` (the space's page; at the terminal, `shed member list`).
    fn not_a_member(&self, by: Option<&Caller>, handle: &str, space: &str) -> HostError {
        let space = shown(space);
        let listed = match by {
            Some(_) => "the space's page lists who is".to_string(),
            None => format!(
                "{} shows who is",
                self.shed_command(&format!("member list {space}"))
            ),
        };
        HostError::NotFound(format!("{handle} is no member of {space} — {listed}"))
    }

    /// The members of a space and their roles, owners first.
    pub async fn members(&self, space: &str) -> Result<Vec<(Person, Role)>, HostError> {
        let members = self
            .inner
            .store
            .members(space)
            .await?
            .ok_or_else(|| self.no_space(space))?;
        members
            .into_iter()
            .map(|member| {
                let role = member.role.parse().map_err(|e: crate::NotARole| {
                    HostError::Internal(format!("a stored role: {e}"))
                })?;
                Ok((member.person, role))
            })
            .collect()
    }

    /// Takes the person `handle` out of `space`, as `by` asks (`None`:
    /// whoever runs `shed` on the data folder, who stands as an owner of
    /// every space); answers the role they had. The rule book decides.
    pub async fn remove_member(
        &self,
        by: Option<&Caller>,
        space: &str,
        handle: &str,
    ) -> Result<Role, HostError> {
        let members = self.members(space).await?;
        let standing = match by {
            None => OPERATOR,
            Some(caller) => self.reach(caller).await?.standing(space),
        };
        let person = self.person(handle).await?;
        let Some(role) = members
            .iter()
            .find(|(member, _)| member.eid == person.eid)
            .map(|(_, role)| *role)
        else {
            return Err(self.not_a_member(by, &person.handle, space));
        };
        let roles: Vec<Role> = members.iter().map(|(_, role)| *role).collect();
        may_remove_member(space, standing, &person.handle, role, &roles)?;
        match self.inner.store.remove_member(space, &person.eid).await? {
            MemberChange::Done => Ok(role),
            MemberChange::LastOwner => Err(last_owner_of_space(&person.handle, space)),
            MemberChange::NotAMember => Err(self.not_a_member(by, &person.handle, space)),
        }
    }
}
