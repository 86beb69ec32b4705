//! What every router test starts from: a host on a fresh data directory
//! (SQLite there, or a database of its own on `SHED_TEST_DATABASE`'s
//! server), the web door's whole router over it, and a way to ask it.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use shed_host::{Host, HostConfig};
use tower::ServiceExt;

/// The platform's address in these tests; a space's host is
/// `<space>.localhost:7700`.
pub const URL: &str = "http://localhost:7700";

/// The platform host's name, as a browser sends it in `Host`.
pub const PLATFORM: &str = "localhost:7700";

pub struct World {
    pub host: Host,
    pub router: Router,
    _dir: tempfile::TempDir,
}

pub async fn world() -> World {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let host = Host::open(HostConfig {
        data_dir: dir.path().to_path_buf(),
        public_url: URL.into(),
        database: shed_test_database::for_folder(dir.path()),
    })
    .await
    .expect("the host opens");
    let router = shed_web::router(host.clone(), Router::new(), shed_web::Operator::default());
    World {
        host,
        router,
        _dir: dir,
    }
}

/// An answer: its status, headers and body as text.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    /// The value of the cookie `name` this answer sets, if it sets it.
    pub fn sets_cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| value.split(';').next())
            .filter_map(|pair| pair.split_once('='))
            .find(|(cookie, _)| *cookie == name)
            .map(|(_, value)| value.to_string())
    }
}

impl World {
    /// Sends `request` through the router, as a connection would.
    pub async fn ask(&self, request: Request<Body>) -> Answer {
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers");
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .expect("the body reads");
        Answer {
            status: parts.status,
            headers: parts.headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// Posts a form as a browser does with `cookie` (the `Cookie` header):
    /// a `303` is followed to its page, with the notice it set; any other
    /// answer is the answer.
    pub async fn submit(&self, path: &str, cookie: &str, body: &str) -> Answer {
        let posted = self.ask(form(path, Some(cookie), Some(URL), body)).await;
        if posted.status != StatusCode::SEE_OTHER {
            return posted;
        }
        let to = posted.headers["location"]
            .to_str()
            .expect("a location")
            .to_string();
        let cookie = match posted.sets_cookie("shed_notice") {
            Some(notice) => format!("{cookie}; shed_notice={notice}"),
            None => cookie.to_string(),
        };
        self.ask(get(PLATFORM, &to, Some(&cookie))).await
    }

    /// A new person `handle` signed in on the platform's host: their
    /// session cookie's value.
    pub async fn signed_in(&self, handle: &str) -> String {
        self.host
            .add_person(handle, Some(handle))
            .await
            .expect("a new person");
        let link = self.host.login_link(handle).await.expect("a sign-in link");
        let key = link
            .url
            .split_once("key=")
            .map(|(_, key)| key.to_string())
            .expect("the link carries its key");
        self.host
            .sign_in_with_link(&key, None)
            .await
            .expect("the link signs in")
            .session
    }

    /// How many tokens the person `handle` has.
    pub async fn tokens(&self, handle: &str) -> usize {
        let person = self.host.caller_for_handle(handle).await.expect("a person");
        self.host
            .own_tokens(&person)
            .await
            .expect("their tokens")
            .len()
    }
}

/// A form posted to the platform's host at `path`, with `cookie` (the
/// whole `Cookie` header) and `origin` when given.
pub fn form(path: &str, cookie: Option<&str>, origin: Option<&str>, body: &str) -> Request<Body> {
    let mut request = Request::post(path)
        .header("host", PLATFORM)
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request
        .body(Body::from(body.to_string()))
        .expect("a request")
}

/// A GET of `path` on `host` (a `Host` header), with `cookie` when given.
pub fn get(host: &str, path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut request = Request::get(path).header("host", host);
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.body(Body::empty()).expect("a request")
}
