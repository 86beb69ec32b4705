//! shed's web door: the pages of every app at `http://<space>.<public host>/<app>/`,
//! the page api a page calls (`./api/apply`, `./api/query`, `./api/watch`), the page script
//! at `/_shed/app.js`, signing in with a one-time link or a passkey, and the OAuth 2.1
//! endpoints MCP clients sign in through (consent page included).
//!
//! Requests are told apart by their host name: `<space>.<public host>` is a
//! space's web door; any other host (the bare public host) gets the
//! platform's own routes — the sign-in pages here and whatever the caller
//! merges in (the MCP door at `/mcp`). Every decision about who may see or
//! change what is a call of [`shed_host::Host`]; the door translates HTTP and
//! holds no rule of its own.

mod api;
mod app_page;
mod browser;
mod caller;
mod client_address;
mod door;
mod files;
mod kinds;
mod oauth;
mod operator;
mod page;
mod pages;
mod passkeys;
mod path;
mod platform;
mod reply;
mod space;
mod streams;
mod watch;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use shed_host::Host;
use tower::ServiceExt;

pub use oauth::{
    AUTHORIZE_PATH, REGISTER_PATH, REVOKE_PATH, ROOT_RESOURCE_METADATA_PATH, SERVER_METADATA_PATH,
    TOKEN_PATH,
};
pub use operator::{
    MOST_WELL_KNOWN_FILE_BYTES, Operator, OperatorError, PageAddress, WellKnownFile,
};
pub use page::{content_security_policy, inline_script_hashes};
pub use path::{AppPath, split_app_path};
pub use streams::{MOST_WATCHES, MOST_WATCHES_PER_ADDRESS, MOST_WATCHES_PER_PERSON};
pub use watch::{HEARTBEAT, WATCH_RECHECK};

/// The page script the web door serves at `/_shed/app.js`.
pub const APP_JS: &str = include_str!("../static/app.js");

/// The address every app page loads [`APP_JS`] from, on every host.
pub const APP_JS_PATH: &str = "/_shed/app.js";

/// The script of the person's pages (copy buttons), on the platform's host.
pub const PAGES_JS_PATH: &str = "/_shed/pages.js";

/// The script of the person's pages: copy buttons.
const PAGES_JS: &str = include_str!("../static/pages.js");

/// Where the passkeys' script is served, on the platform's host.
pub const PASSKEYS_JS_PATH: &str = "/_shed/passkeys.js";

/// The passkeys' script: adding one, signing in with one.
const PASSKEYS_JS: &str = include_str!("../static/passkeys.js");

/// Where a browser asks for a site's icon, on every host.
pub const FAVICON_PATH: &str = "/favicon.ico";

/// shed's icon (32 px, a PNG in an ICO), answered at [`FAVICON_PATH`] on the
/// platform's host and every space's (an app lives under `/<app>/`, so the
/// root's icon is never an app's own; an app's page may name its own).
const FAVICON: &[u8] = include_bytes!("../static/favicon.ico");

/// The platform's page that says how to sign in.
pub const SIGN_IN_PATH: &str = "/_shed/signin";

/// Where a sign-in's hop first reaches a space's host (which binds its code
/// to the browser), and where it comes back to the platform's host to be
/// vouched for.
pub const HOP_PATH: &str = "/_shed/hop";

/// Where a space's host trades a vouched-for hop for its session cookie.
pub const HOP_END_PATH: &str = "/_shed/hop/end";

/// The whole HTTP server: requests for `<space>.<public host>` reach the web
/// door; every other request reaches the platform's sign-in pages, the
/// files `operator` publishes under `/.well-known/`, then `platform` (e.g.
/// the MCP door's router).
pub fn router(host: Host, platform: Router, operator: Operator) -> Router {
    let well_known = operator.router();
    let door = Arc::new(door::Door::new(host, operator));
    let spaces = space::router(door.clone());
    let platform = platform::router(door.clone())
        .merge(oauth::router(door.clone()))
        .merge(pages::router(door.clone()))
        .merge(app_page::router(door.clone()))
        .merge(passkeys::router(door.clone()))
        .merge(well_known)
        .merge(platform)
        .fallback(platform::not_found)
        .layer(axum::middleware::from_fn_with_state(
            door.clone(),
            pages::notice::dropped_once_shown,
        ));
    Router::new().fallback(move |request: Request| {
        let (to, browser_at_mcp) = match door.space_of(request.headers(), request.uri()) {
            Some(_) => (spaces.clone(), None),
            None => (platform.clone(), platform::browser_at_mcp(&door, &request)),
        };
        async move {
            if let Some(page) = browser_at_mcp {
                return page;
            }
            let answered: Result<Response, std::convert::Infallible> = to.oneshot(request).await;
            match answered {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }
    })
}
