//! What a caller can reach: the spaces they belong to, with their role in
//! each, and so the apps whose commands they see. A `public` or `open` app in a
//! space they are not in is reached on the web, not through commands: a slug
//! resolves only among the caller's own spaces, while `space/app` names any
//! app (and the access table then decides). An app in the trash is reached
//! by nobody: it is left out of every listing, and naming it is refused with
//! the rule book's sentence (`access::reachable`) — here, so no door holds
//! the rule.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::access::{Standing, reachable, sign_in_first};
use crate::names::{AppName, and_list};
use crate::registry::{LiveApp, Snapshot};
use crate::suggest::Suggest;
use crate::{Caller, Door, Host, HostError, Person, Role};
use shed_store::platform::Membership;

/// A signed-in caller's spaces and roles, and where their suggestions must
/// work.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    pub person: Person,
    /// space slug → role
    pub roles: BTreeMap<String, Role>,
    /// The door the caller came in by.
    pub door: Door,
    /// The platform's public URL, for a page a sentence points to.
    pub home: String,
}

impl Reach {
    /// The apps of the caller's spaces out of the trash, in listing order.
    pub(crate) fn apps<'s>(&self, snapshot: &'s Snapshot) -> Vec<&'s Arc<LiveApp>> {
        self.apps_and_trashed(snapshot)
            .into_iter()
            .filter(|app| app.trashed.is_none())
            .collect()
    }

    /// The apps of the caller's spaces, those in the trash too.
    pub(crate) fn apps_and_trashed<'s>(&self, snapshot: &'s Snapshot) -> Vec<&'s Arc<LiveApp>> {
        snapshot
            .apps
            .iter()
            .filter(|app| self.roles.contains_key(&app.space))
            .collect()
    }

    /// What to suggest to this caller, as their door does it.
    pub(crate) fn suggest(&self) -> Suggest<'_> {
        Suggest {
            door: &self.door,
            handle: &self.person.handle,
            home: &self.home,
        }
    }

    /// Refused with the trash's sentence when `app`, of the caller's
    /// spaces, is in the trash.
    pub(crate) fn reachable(&self, app: &LiveApp) -> Result<(), HostError> {
        reachable(
            app.subject(),
            self.standing(&app.space),
            app.trashed.is_some(),
            Some(&self.suggest().restore(&app.name)),
        )
    }

    /// The app a call names (`runs` or `jeff/runs`) among the caller's
    /// spaces; one in the trash is refused with its sentence.
    pub(crate) fn resolve(
        &self,
        snapshot: &Snapshot,
        name: &str,
    ) -> Result<Arc<LiveApp>, HostError> {
        let wanted = AppName::parse(name)?;
        let named: Vec<&Arc<LiveApp>> = self
            .apps_and_trashed(snapshot)
            .into_iter()
            .filter(|app| match wanted {
                AppName::Full { .. } => app.name == name,
                AppName::Slug(slug) => app.slug == slug,
            })
            .collect();
        let found: Vec<&Arc<LiveApp>> = named
            .iter()
            .copied()
            .filter(|app| app.trashed.is_none())
            .collect();
        match found.as_slice() {
            [one] => Ok((*one).clone()),
            // Named, but only in the trash: its sentence.
            [] => Err(named
                .first()
                .and_then(|trashed| self.reachable(trashed).err())
                .unwrap_or_else(|| self.no_app(snapshot, name))),
            many => {
                let names: Vec<String> = many.iter().map(|app| app.name.clone()).collect();
                Err(HostError::BadInput(format!(
                    "{name} is an app in {} — say which: {}",
                    and_list(&many.iter().map(|app| app.space.clone()).collect::<Vec<_>>()),
                    names.join(" or ")
                )))
            }
        }
    }

    /// "no app jeff/x in your spaces — the apps here are …"
    pub(crate) fn no_app(&self, snapshot: &Snapshot, name: &str) -> HostError {
        let here: Vec<String> = self
            .apps(snapshot)
            .iter()
            .map(|app| app.name.clone())
            .collect();
        if here.is_empty() {
            HostError::NotFound(format!(
                "no app {name} in your spaces — they have no apps yet; app_deploy makes one"
            ))
        } else {
            HostError::NotFound(format!(
                "no app {name} in your spaces — the apps here are {}",
                crate::texts::bounded_list(&here)
            ))
        }
    }

    /// A person's reach from their memberships; a role word this build does
    /// not know is logged and left out.
    fn of(person: Person, memberships: Vec<Membership>, door: Door, home: String) -> Reach {
        let roles = memberships
            .into_iter()
            .filter_map(|m| match m.role.parse::<Role>() {
                Ok(role) => Some((m.space, role)),
                Err(_) => {
                    tracing::warn!(space = %m.space, role = %m.role, "unknown role word; ignoring the membership");
                    None
                }
            })
            .collect();
        Reach {
            person,
            roles,
            door,
            home,
        }
    }

    /// The caller's role in a space, if they belong to it.
    pub(crate) fn role(&self, space: &str) -> Option<Role> {
        self.roles.get(space).copied()
    }

    /// Where the (signed-in) caller stands in a space, as the rule book
    /// asks it.
    pub(crate) fn standing(&self, space: &str) -> Standing {
        Standing::of(true, self.role(space))
    }
}

impl Host {
    /// The caller's spaces and roles; a signed-out caller is asked to sign in.
    pub(crate) async fn reach(&self, caller: &Caller) -> Result<Reach, HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?.clone();
        let memberships = match caller.take_read_with_credential() {
            Some((memberships, _)) => memberships,
            None => self.inner.store.memberships(&person.eid).await?,
        };
        Ok(self.reach_of(caller, person, memberships))
    }

    /// [`Host::reach`] and the registry's snapshot, from one read of the
    /// database.
    pub(crate) async fn reach_and_snapshot(
        &self,
        caller: &Caller,
    ) -> Result<(Reach, Arc<Snapshot>), HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?.clone();
        let (memberships, generation) = match caller.take_read_with_credential() {
            Some(read) => read,
            None => {
                self.inner
                    .store
                    .memberships_and_generation(&person.eid)
                    .await?
            }
        };
        let snapshot = self
            .inner
            .registry
            .snapshot_at(&self.inner.store, &self.inner.url, generation)
            .await?;
        Ok((self.reach_of(caller, person, memberships), snapshot))
    }

    fn reach_of(&self, caller: &Caller, person: Person, memberships: Vec<Membership>) -> Reach {
        let door = caller.door().cloned().unwrap_or(Door::Mcp);
        Reach::of(person, memberships, door, self.public_url().to_string())
    }

    /// The app a graph or files call names, and where the caller stands to it.
    /// `space/app` names any app (the access table decides what follows); a
    /// slug alone resolves among the caller's spaces.
    pub(crate) async fn named_app(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<(Arc<LiveApp>, Standing), HostError> {
        // One read for the caller's spaces and the registry, when signed in.
        let (reach, snapshot) = match caller.person() {
            Some(_) => {
                let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
                (Some(reach), snapshot)
            }
            None => (None, self.snapshot().await?),
        };
        match AppName::parse(name)? {
            AppName::Full { space, .. } => {
                let standing =
                    Standing::of(reach.is_some(), reach.as_ref().and_then(|r| r.role(space)));
                // Somebody outside a private app's space reads the same
                // sentence as for a name nobody used, and nobody signed in is
                // asked to sign in for both: neither learns the app exists.
                let app = snapshot.app(name).cloned().ok_or_else(|| match &reach {
                    Some(_) => HostError::NotFound(format!("no app {name}")),
                    None => sign_in_first(),
                })?;
                let restore = reach
                    .as_ref()
                    .map(|reach| reach.suggest().restore(&app.name));
                reachable(
                    app.subject(),
                    standing,
                    app.trashed.is_some(),
                    restore.as_deref(),
                )?;
                Ok((app, standing))
            }
            AppName::Slug(_) => {
                let reach = reach.ok_or_else(sign_in_first)?;
                let app = reach.resolve(&snapshot, name)?;
                let standing = reach.standing(&app.space);
                Ok((app, standing))
            }
        }
    }
}
