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
//! [`VIEW_KEY_SECONDS`].

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

fn key_stale() -> HostError {
    HostError::SignIn(
        "this view's address has expired or was never made — open the view again from your \
         agent, which reads it anew"
            .to_string(),
    )
}

impl Host {
    /// The address a view of `app` read by `person` takes as its `<base
    /// href>`: a fresh keyed address for a private app, else the app's own.
    pub(crate) async fn view_address(
        &self,
        person: &Person,
        app: &LiveApp,
    ) -> Result<String, HostError> {
        if access::public(app.access) {
            return Ok(app.address.clone());
        }
        let key = secret();
        let at = now();
        self.inner
            .store
            .add_view_key(
                ViewKey {
                    hash: &hash(&key),
                    person: &person.eid,
                    space: &app.space,
                    slug: &app.slug,
                },
                at + VIEW_KEY_SECONDS,
                at,
            )
            .await?;
        Ok(format!(
            "{}{VIEW_KEY_PATH}{key}/{}/",
            self.space_origin(&app.space),
            app.slug
        ))
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
        Ok(Caller::Person {
            person,
            token: None,
        })
    }
}
