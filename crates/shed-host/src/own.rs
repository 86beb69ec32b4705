//! What a signed-in person manages of their own, as the platform's pages ask
//! it: their tokens and connected clients, their agents' jobs, and the
//! members of their spaces. Each takes the [`Caller`] and checks that the
//! thing is theirs (or, for a space, asks the rule book); the CLI's
//! operator functions (`shed token revoke`, `shed job end`, `shed member
//! add`) do the acts themselves, so both doors say the same sentences.

/// A token as [`Host::own_tokens`] lists it, and its id — the store's
/// shapes, named here so a door need not depend on the store.
pub use shed_store::revocable::{TokenId, TokenRecord};

use crate::access::{Act, Subject, may, may_remove_member, sign_in_first};
use crate::agents::Job;
use crate::names::shown;
use crate::sessions::LoginLink;
use crate::take_back::TokenSpec;
use crate::{Caller, Host, HostError, Person, Role};

/// A member made or changed by an owner: for a handle that was new (and so
/// a person just added), the one-time sign-in link to send them. A person
/// who was here before gets none: a link signs in as them, and only they
/// (or the operator, `shed login`) may ask for one.
#[derive(Clone, Debug)]
pub struct Invitation {
    /// The member's handle as the host read it: trimmed, without its `@`.
    pub handle: String,
    /// The sign-in link to send a person just added; `None` for one who was
    /// here before.
    pub link: Option<LoginLink>,
}

/// A space's members as one of them sees them: their own role, whether the
/// rule book lets them invite, change roles and remove, and the members,
/// owners first.
#[derive(Clone, Debug)]
pub struct SpaceMembers {
    /// The caller's own role in the space.
    pub role: Role,
    /// The rule book lets the caller both invite and remove members (an
    /// owner): the page shows its forms to manage them.
    pub may_manage: bool,
    /// Every member of the space, owners first.
    pub members: Vec<SpaceMember>,
}

/// A member of a space, and whether the rule book lets the caller remove
/// them or change their role (never the last owner's).
#[derive(Clone, Debug)]
pub struct SpaceMember {
    /// Who the member is: their eid, handle and display name.
    pub person: Person,
    /// Their role in the space.
    pub role: Role,
    /// The caller may remove this member or change their role: they are
    /// an owner, and this is not the space's last owner.
    pub may_change: bool,
}

/// What a person outside `space` reads when they ask for it, the same
/// whether it exists or not: its members, its activity.
pub(crate) fn not_a_space_of_yours(space: &str) -> HostError {
    HostError::NotFound(format!(
        "{} is not a space you belong to — your spaces are on your home page, and an \
         owner of a space can add you",
        shown(space)
    ))
}

/// The person calling, or "sign in first".
fn signed_in(caller: &Caller) -> Result<&Person, HostError> {
    caller.person().ok_or_else(sign_in_first)
}

impl Host {
    /// The caller's live tokens and OAuth grants.
    pub async fn own_tokens(&self, caller: &Caller) -> Result<Vec<TokenRecord>, HostError> {
        self.tokens(Some(&signed_in(caller)?.handle)).await
    }

    /// A new token for the caller, named `name`: its secret, shown once.
    pub async fn make_own_token(&self, caller: &Caller, name: &str) -> Result<String, HostError> {
        let person = signed_in(caller)?;
        if name.trim().is_empty() {
            return Err(HostError::BadInput(
                "a token needs a name, to tell it from the others when you revoke one — \
                 name it after the client it is for"
                    .to_string(),
            ));
        }
        self.create_token(
            &person.handle,
            TokenSpec {
                name: Some(name),
                ttl: None,
            },
        )
        .await
    }

    /// Revokes one of the caller's own tokens or grants, by its id as
    /// listed (`12`, `oauth-3`); another person's is "no live token".
    pub async fn revoke_own_token(&self, caller: &Caller, id: &str) -> Result<TokenId, HostError> {
        let theirs = self.own_tokens(caller).await?;
        let id: TokenId = id
            .trim()
            .parse()
            .map_err(|e: shed_store::revocable::NotATokenId| HostError::BadInput(e.to_string()))?;
        if !theirs.iter().any(|token| token.id == id) {
            return Err(crate::take_back::no_token(
                id,
                "your account page lists yours",
            ));
        }
        self.revoke_token(&id.to_string()).await
    }

    /// The jobs of the caller's agents, oldest first.
    pub async fn own_jobs(&self, caller: &Caller) -> Result<Vec<Job>, HostError> {
        self.jobs_of(signed_in(caller)?).await
    }

    /// Ends one of the caller's agents' jobs, by its name (`job-3`).
    pub async fn end_own_job(&self, caller: &Caller, name: &str) -> Result<Job, HostError> {
        let person = signed_in(caller)?;
        match self.job_named(name.trim()).await? {
            Some(job) if job.person.eid == person.eid => self.end_job(&job.name).await,
            _ => Err(crate::agents::no_job(
                name.trim(),
                "your agents' page lists yours",
            )),
        }
    }

    /// The members of a space the caller belongs to, as they see them.
    pub async fn space_members(
        &self,
        caller: &Caller,
        space: &str,
    ) -> Result<SpaceMembers, HostError> {
        signed_in(caller)?;
        let reach = self.reach(caller).await?;
        let Some(role) = reach.role(space) else {
            return Err(not_a_space_of_yours(space));
        };
        let standing = reach.standing(space);
        let members = self.members(space).await?;
        let roles: Vec<Role> = members.iter().map(|(_, role)| *role).collect();
        let members = members
            .into_iter()
            .map(|(person, role)| SpaceMember {
                may_change: may_remove_member(space, standing, &person.handle, role, &roles)
                    .is_ok(),
                person,
                role,
            })
            .collect();
        Ok(SpaceMembers {
            role,
            may_manage: may(Subject::space(space), standing, Act::Invite).is_ok()
                && may(Subject::space(space), standing, Act::RemoveMember).is_ok(),
            members,
        })
    }

    /// An owner of `space` makes the person `handle` a member of it with
    /// `role`, or changes the role they have — never leaving the space
    /// without an owner. The rule book decides.
    pub async fn invite(
        &self,
        caller: &Caller,
        space: &str,
        handle: &str,
        role: Role,
    ) -> Result<(), HostError> {
        let reach = self.reach(caller).await?;
        may(Subject::space(space), reach.standing(space), Act::Invite)?;
        self.add_member(space, handle, role).await
    }

    /// [`Host::invite`], adding the person first when `handle` is new, with
    /// a one-time sign-in link for them to be sent.
    pub async fn invite_with_link(
        &self,
        caller: &Caller,
        space: &str,
        handle: &str,
        role: Role,
    ) -> Result<Invitation, HostError> {
        let reach = self.reach(caller).await?;
        may(Subject::space(space), reach.standing(space), Act::Invite)?;
        let handle = handle.trim().trim_start_matches('@');
        let added = match self.inner.store.present_person(handle).await? {
            Some(_) => false,
            None => {
                self.add_person(handle, None).await?;
                true
            }
        };
        self.add_member(space, handle, role).await?;
        let link = match added {
            true => Some(self.login_link(handle).await?),
            false => None,
        };
        Ok(Invitation {
            handle: handle.to_string(),
            link,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Caller, Role};

    #[tokio::test]
    async fn an_invitation_names_the_handle_as_read_and_links_only_a_new_person() {
        let (_dir, host) = crate::test_host("http://localhost:7700").await;
        host.add_person("ada", Some("Ada")).await.unwrap();
        host.add_space("demo", "ada").await.unwrap();
        let ada = host.caller_for_handle("ada").await.unwrap();
        let new = host
            .invite_with_link(&ada, "demo", " @bob ", Role::Editor)
            .await
            .unwrap();
        assert_eq!(new.handle, "bob");
        assert!(new.link.is_some(), "bob was new: a sign-in link for him");
        let again = host
            .invite_with_link(&ada, "demo", "@bob", Role::Viewer)
            .await
            .unwrap();
        assert_eq!(again.handle, "bob");
        assert!(
            again.link.is_none(),
            "bob is here: no link to sign in as him"
        );
    }

    #[tokio::test]
    async fn a_person_lists_and_ends_their_own_jobs_only() {
        let (_dir, host) = crate::test_host("http://localhost:7700").await;
        host.add_person("ada", Some("Ada")).await.unwrap();
        host.add_person("bob", None).await.unwrap();
        let job = |handle: &'static str| {
            let host = host.clone();
            async move {
                let made = host.create_job(handle, vec!["*".into()], vec![], None);
                made.await.unwrap().job.name
            }
        };
        let (adas, bobs, adas_too) = (job("ada").await, job("bob").await, job("ada").await);
        let ada = host.caller_for_handle("ada").await.unwrap();

        let listed = host.own_jobs(&ada).await.unwrap();
        let names: Vec<&str> = listed.iter().map(|job| job.name.as_str()).collect();
        assert_eq!(names, [adas.as_str(), adas_too.as_str()]);
        assert!(listed.iter().all(|job| job.person.name == "Ada"));
        assert!(host.own_jobs(&Caller::Nobody).await.is_err());

        let refused = host.end_own_job(&ada, &bobs).await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("no job {bobs} — your agents' page lists yours")
        );
        assert!(
            host.end_own_job(&ada, &adas)
                .await
                .unwrap()
                .ended_at
                .is_some()
        );
    }
}
