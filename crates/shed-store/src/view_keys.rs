//! View keys: what lets a view, drawn off-origin with no cookie, load its
//! private app's own files (`./style.css`, images) through its `<base href>`.
//! A key is made for one person and one app when the person reads the view;
//! only its sha256 is kept, with an expiry. Plain storage: who may have a
//! key, and what it opens, is decided in shed-host.

/// A view key as kept: the sha256 of its secret, for whom and which app.
#[derive(Clone, Copy, Debug)]
pub struct ViewKey<'a> {
    /// sha256 hex of the key.
    pub hash: &'a str,
    /// The person's eid.
    pub person: &'a str,
    /// The slug of the space the app lives in.
    pub space: &'a str,
    /// The app's slug in that space: the key opens this app's files only.
    pub slug: &'a str,
}
