//! shed's web door. So far it holds the page script every app page loads from
//! `/_shed/app.js` (`static/app.js`: the globals `apply(bundle)` and
//! `query(filterLine)`); the door that serves it is yet to be written.

/// The page script the web door serves at `/_shed/app.js`.
pub const APP_JS: &str = include_str!("../static/app.js");

/// The address every app page loads [`APP_JS`] from.
pub const APP_JS_PATH: &str = "/_shed/app.js";

