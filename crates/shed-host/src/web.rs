//! The web door's questions to the host: which space a request's host name
//! is, which file of an app's current deploy a web address names, and
//! whether the caller may have it. The web serves what this module allows
//! and nothing else; it decides nothing of its own.
//!
//! The rule for an app's files on the web:
//! - its inside (`tools.json`, `tools.yml`, `vocab.json`, `worker.js` at the
//!   app's root) is never served: it answers like a file that is not there;
//! - every other file — pages, styles, scripts, images, data files — is read
//!   under the app's access, like its data: a private app's files need a
//!   member, and somebody else reads what they would for an app nobody made.
//!   A private app's view loads its files through a keyed address made for
//!   the member who read it (`view_keys`).

use crate::access::{self, Act, Standing, may};
use crate::answer::SpaceApp;
use crate::names::{INDEX_PAGE, check_path, is_slug, shown};
use crate::{Caller, Host, HostError, Role};

/// The files of an app the web never serves (at the app's root).
pub const INSIDE_FILES: [&str; 4] = ["tools.json", "tools.yml", "vocab.json", "worker.js"];

/// A file of an app's current deploy the caller may have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebFile {
    /// `space/slug`
    pub app: String,
    /// The deploy whose file it is (platform-wide id; only grows).
    pub deploy: i64,
    /// The file's path in the deploy: `index.html`, `img/logo.png`.
    pub path: String,
    /// The app's address, the `<base href>` of its pages.
    pub address: String,
    /// An HTML page (`.html` or `.htm`).
    pub page: bool,
    /// Only some may read it (a private app's): answered `Cache-Control:
    /// private`, never kept by a shared cache.
    pub private: bool,
}

/// What a space's root shows the caller: the apps of the space they may read.
#[derive(Clone, Debug)]
pub struct SpaceFront {
    /// The caller's role in the space, if they belong to it.
    pub role: Option<Role>,
    /// Its apps out of the trash that the caller may read, in the order
    /// they were made.
    pub apps: Vec<SpaceApp>,
}

/// "no file x in jeff/runs" — the same for a file that is not there, one of
/// the app's inside, and a path that is not one.
fn no_file(path: &str, app: &str) -> HostError {
    HostError::NotFound(format!("no file {} in {app}", shown(path)))
}

impl Host {
    /// The space a request's host name is on this platform: `demo` for
    /// `demo.localhost:7700` under `http://localhost:7700`; `None` for the
    /// platform's own host, or any other.
    pub fn space_of_host(&self, host: &str) -> Option<String> {
        let authority = self
            .public_url()
            .split_once("://")
            .map_or("", |(_, rest)| rest);
        let host = host.to_ascii_lowercase();
        let space = host
            .strip_suffix(&authority.to_ascii_lowercase())?
            .strip_suffix('.')?;
        is_slug(space).then(|| space.to_string())
    }

    /// The apps of `space` the caller may read, for the space's root on the
    /// web: a member's every app, anybody else's those the access table lets
    /// them read (public and open ones). A space the caller neither belongs
    /// to nor may read an app of answers "no space …", as one nobody made
    /// does: its root tells an outsider nothing.
    pub async fn space_front(&self, caller: &Caller, space: &str) -> Result<SpaceFront, HostError> {
        let (role, snapshot) = match caller.person() {
            Some(_) => {
                let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
                (reach.role(space), snapshot)
            }
            None => (None, self.snapshot().await?),
        };
        let standing = Standing::of(caller.person().is_some(), role);
        let apps: Vec<SpaceApp> = snapshot
            .apps_in(space)
            .into_iter()
            .filter(|app| may(app.subject(), standing, Act::Read).is_ok())
            .map(|app| SpaceApp::of(app))
            .collect();
        if role.is_none() && apps.is_empty() {
            return Err(HostError::NotFound(format!(
                "no space {} you may read",
                shown(space)
            )));
        }
        Ok(SpaceFront { role, apps })
    }

    /// Where a space lives on the web: `http://jeff.localhost:7700`.
    pub fn space_origin(&self, space: &str) -> String {
        self.inner.url.space_origin(space)
    }

    /// The file a web address names in app `slug` of `space`: `path` is what
    /// follows `/<slug>/`, percent-decoded (empty, or ending in `/`, names
    /// the folder's `index.html`). Refuses as the access table says for
    /// reading the app; answers "no file …" for the app's inside and for a
    /// path that is not one.
    pub async fn web_file(
        &self,
        caller: &Caller,
        space: &str,
        slug: &str,
        path: &str,
    ) -> Result<WebFile, HostError> {
        let name = format!("{space}/{slug}");
        if !is_slug(space) || !is_slug(slug) {
            return Err(HostError::NotFound(format!("no app {}", shown(&name))));
        }
        let (app, standing) = self.named_app(caller, &name).await?;
        let path = if path.is_empty() || path.ends_with('/') {
            format!("{path}{INDEX_PAGE}")
        } else {
            path.to_string()
        };
        may(app.subject(), standing, Act::Read)?;
        let lower = path.to_ascii_lowercase();
        let page = lower.ends_with(".html") || lower.ends_with(".htm");
        if check_path(&path).is_err() || INSIDE_FILES.contains(&path.as_str()) {
            return Err(no_file(&path, &app.name));
        }
        Ok(WebFile {
            app: app.name.clone(),
            deploy: app.deploy,
            address: app.address.clone(),
            page,
            private: !access::public(app.access),
            path,
        })
    }

    /// The bytes of a file [`Host::web_file`] allowed; "no file …" when the
    /// deploy does not hold it.
    pub async fn web_file_bytes(&self, file: &WebFile) -> Result<Vec<u8>, HostError> {
        self.inner
            .store
            .deploy_file(file.deploy, &file.path)
            .await?
            .ok_or_else(|| no_file(&file.path, &file.app))
    }

    /// Whether the deploy holds `<path>/index.html`: a folder, addressed
    /// without its trailing slash.
    pub async fn web_is_folder(&self, file: &WebFile) -> Result<bool, HostError> {
        Ok(self
            .inner
            .store
            .deploy_file(file.deploy, &format!("{}/{INDEX_PAGE}", file.path))
            .await?
            .is_some())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{Access, Role};

    async fn host_with(access: Access) -> (tempfile::TempDir, Host) {
        let (dir, host) = crate::test_host("http://localhost:7700").await;
        for handle in ["ada", "vic", "sam"] {
            host.add_person(handle, None).await.unwrap();
        }
        host.add_space("demo", "ada").await.unwrap();
        host.add_member("demo", "vic", Role::Viewer).await.unwrap();
        let files: BTreeMap<String, Vec<u8>> = [
            ("index.html", "<!doctype html><p>hi"),
            ("style.css", "p{}"),
            ("vocab.json", r#"{"jog": {"who": "text"}}"#),
        ]
        .into_iter()
        .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
        .collect();
        let ada = host.caller_for_handle("ada").await.unwrap();
        host.deploy_folder(&ada, "demo/runs", files, None, Some(access))
            .await
            .unwrap();
        (dir, host)
    }

    async fn outcome(host: &Host, who: Option<&str>, path: &str) -> String {
        let caller = match who {
            Some(handle) => host.caller_for_handle(handle).await.unwrap(),
            None => Caller::Nobody,
        };
        match host.web_file(&caller, "demo", "runs", path).await {
            Ok(file) => match host.web_file_bytes(&file).await {
                Ok(bytes) => format!("ok {} {}", file.path, bytes.len()),
                Err(e) => format!("bytes: {e}"),
            },
            Err(HostError::SignIn(_)) => "sign-in".to_string(),
            Err(HostError::NotFound(s)) => format!("not-found: {s}"),
            Err(other) => format!("other: {other}"),
        }
    }

    #[test]
    fn a_space_is_the_subdomain_of_the_public_host() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (_dir, host) = runtime.block_on(host_with(Access::Private));
        assert_eq!(
            host.space_of_host("demo.localhost:7700").as_deref(),
            Some("demo")
        );
        assert_eq!(
            host.space_of_host("DEMO.Localhost:7700").as_deref(),
            Some("demo")
        );
        for other in [
            "localhost:7700",
            "demo.localhost:7701",
            "a.b.localhost:7700",
            ".localhost:7700",
            "evil.com",
            "",
        ] {
            assert_eq!(host.space_of_host(other), None, "{other}");
        }
        assert_eq!(host.space_origin("demo"), "http://demo.localhost:7700");
    }

    #[tokio::test]
    async fn every_file_of_a_private_app_needs_a_member() {
        let (_dir, host) = host_with(Access::Private).await;
        assert_eq!(outcome(&host, None, "").await, "sign-in");
        assert_eq!(outcome(&host, None, "index.html").await, "sign-in");
        assert!(
            outcome(&host, Some("sam"), "")
                .await
                .starts_with("not-found: no app demo/runs")
        );
        assert_eq!(outcome(&host, Some("vic"), "").await, "ok index.html 20");
        assert_eq!(outcome(&host, None, "style.css").await, "sign-in");
        assert_eq!(outcome(&host, None, "nothing.css").await, "sign-in");
        assert!(
            outcome(&host, Some("sam"), "style.css")
                .await
                .starts_with("not-found: no app demo/runs")
        );
        assert_eq!(
            outcome(&host, Some("vic"), "style.css").await,
            "ok style.css 3"
        );
    }

    #[tokio::test]
    async fn a_public_apps_pages_are_anyones() {
        let (_dir, host) = host_with(Access::Public).await;
        assert_eq!(outcome(&host, None, "").await, "ok index.html 20");
        assert_eq!(
            outcome(&host, Some("sam"), "index.html").await,
            "ok index.html 20"
        );
    }

    #[tokio::test]
    async fn the_inside_and_paths_outside_the_app_are_no_file() {
        let (_dir, host) = host_with(Access::Open).await;
        for path in [
            "vocab.json",
            "tools.json",
            "tools.yml",
            "worker.js",
            "../demo/runs/style.css",
            "a/../style.css",
            "/etc/passwd",
            "a//b",
            "a\\b",
            "missing.css",
        ] {
            let said = outcome(&host, Some("ada"), path).await;
            assert!(
                said.starts_with("not-found: no file ") || said.starts_with("bytes: no file "),
                "{path}: {said}"
            );
        }
        assert!(
            outcome(&host, None, "x")
                .await
                .contains("no file x in demo/runs")
        );
    }
}
