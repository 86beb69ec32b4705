//! View keys. A view is drawn off-origin with no session cookie, yet the spec
//! promises its `./style.css` and images load through its `<base href>`,
//! while a private app's files are read under its access like its pages.
//! So a private app's view, read by a person who may read the app, gets a
//! `<base href>` on the app's own origin that carries a key made for that
//! person and that app: `http://jeff.localhost:7700/_shed/view/<key>/runs/`.
//! A request there is read as that person would read the file, at the time
//! of the request (removed from the space, they read nothing), and opens
//! nothing but the app's files: never its page api, never another app.
//! A public or open app's view keeps the app's plain address.
//!
//! The key is 128 random bits; only its sha256 is kept, for
//! [`VIEW_KEY_SECONDS`]. A person's every read of a view would otherwise
//! mint a key (an MCP client reads a view as often as it likes), so the
//! process remembers the keys it handed out (`Handed`, in memory: the
//! database never holds a key itself) and hands one out again while it has
//! more than [`VIEW_KEY_REUSE_SECONDS`] to live and the store still keeps
//! it for that person and app — so a read mints nothing new, and each
//! (person, app) holds a key or two per server at a time.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use shed_store::ViewKey;

use crate::registry::LiveApp;
use crate::secrets::{hash, now, secret};
use crate::{Caller, Host, HostError, Person, access};

/// Where the keyed addresses live on a space's host.
pub const VIEW_KEY_PATH: &str = "/_shed/view/";

/// How long a view key opens its app's files: a day, so a view left open in
/// a conversation keeps its style while the person works, and a copied
/// address stops working soon after.
pub const VIEW_KEY_SECONDS: i64 = 24 * 60 * 60;

/// How long a key handed out must still live to be handed out again: half
/// its life, so a view is always drawn with a key good for twelve hours.
pub const VIEW_KEY_REUSE_SECONDS: i64 = VIEW_KEY_SECONDS / 2;

/// The most keys remembered to hand out again: one per person and private
/// app read in the last half day, far more than a shed's people read. Past
/// it the key nearest its end is forgotten.
pub const MOST_HANDED_VIEW_KEYS: usize = 4096;

/// Whose a view key is: (person eid, space, app slug).
type Owner = (String, String, String);

/// The view keys handed out, by owner: the key and when it expires.
#[derive(Default)]
pub(crate) struct Handed(Mutex<HashMap<Owner, (String, i64)>>);

impl Handed {
    /// A key for `owner` with more than [`VIEW_KEY_REUSE_SECONDS`] left at `now`.
    fn reusable(&self, owner: &Owner, now: i64) -> Option<String> {
        let handed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        handed
            .get(owner)
            .filter(|(_, expires_at)| expires_at - now > VIEW_KEY_REUSE_SECONDS)
            .map(|(key, _)| key.clone())
    }

    /// Remembers `key`, expiring at `expires_at`, for `owner`; forgets the
    /// keys too near their end to be handed out again and, at
    /// [`MOST_HANDED_VIEW_KEYS`], the one nearest its end.
    fn remember(&self, owner: Owner, key: String, expires_at: i64, now: i64) {
        let mut handed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        handed.retain(|_, (_, expires)| *expires - now > VIEW_KEY_REUSE_SECONDS);
        if handed.len() >= MOST_HANDED_VIEW_KEYS
            && let Some(nearest) = handed
                .iter()
                .min_by_key(|(_, (_, expires))| *expires)
                .map(|(owner, _)| owner.clone())
        {
            handed.remove(&nearest);
        }
        handed.insert(owner, (key, expires_at));
    }
}

fn key_stale() -> HostError {
    HostError::SignIn(
        "this view's address has expired or was never made — open the view again from your \
         agent, which reads it anew"
            .to_string(),
    )
}

impl Host {
    /// The address a view of `app` read by `person` takes as its `<base
    /// href>`: a keyed address for a private app — the key handed out
    /// before, while it lives long enough, else a new one — else the app's
    /// own.
    pub(crate) async fn view_address(
        &self,
        person: &Person,
        app: &LiveApp,
    ) -> Result<String, HostError> {
        if access::public(app.access) {
            return Ok(app.address.clone());
        }
        let key = self.view_key(person, app).await?;
        Ok(format!(
            "{}{VIEW_KEY_PATH}{key}/{}/",
            self.space_origin(&app.space),
            app.slug
        ))
    }

    /// A key to `app`'s files for `person`: one handed out before that
    /// lives more than [`VIEW_KEY_REUSE_SECONDS`] yet and the store still
    /// keeps for them, else a new one, kept.
    async fn view_key(&self, person: &Person, app: &LiveApp) -> Result<String, HostError> {
        let store = &self.inner.store;
        let handed = &self.inner.view_keys;
        let owner = (person.eid.clone(), app.space.clone(), app.slug.clone());
        let at = now();
        if let Some(key) = handed.reusable(&owner, at) {
            let kept = store
                .view_key_person(&hash(&key), &app.space, &app.slug, at)
                .await?;
            if kept.as_deref() == Some(person.eid.as_str()) {
                return Ok(key);
            }
        }
        let key = secret();
        let expires_at = at + VIEW_KEY_SECONDS;
        store
            .add_view_key(
                ViewKey {
                    hash: &hash(&key),
                    person: &person.eid,
                    space: &app.space,
                    slug: &app.slug,
                },
                expires_at,
                at,
            )
            .await?;
        handed.remember(owner, key.clone(), expires_at, at);
        Ok(key)
    }

    /// The caller a view key stands for on app `slug` of `space`: the
    /// person it was made for. An expired or unknown key, or one made for
    /// another app, is a sentence asking to open the view again.
    pub async fn caller_for_view_key(
        &self,
        key: &str,
        space: &str,
        slug: &str,
    ) -> Result<Caller, HostError> {
        let store = &self.inner.store;
        let eid = store
            .view_key_person(&hash(key), space, slug, now())
            .await?
            .ok_or_else(key_stale)?;
        let person = store.person_by_eid(&eid).await?.ok_or_else(key_stale)?;
        Ok(Caller::signed_in(person, None, crate::Door::Web))
    }
}
