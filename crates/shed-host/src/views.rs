//! Views: the pages commands name, as resources at `ui://<space>/<app>/<file>`
//! — each listed once however many commands name it — and a view's page,
//! served with `<base href>` at the app's address (for a private app, a keyed
//! address on the app's origin: `view_keys`). Only a page a command names is
//! a resource; any other file of the app is the web's business.

use crate::access::sign_in_first;
use crate::base_href::with_base_href;
use crate::registry::LiveApp;
use crate::{Caller, Host, HostError, ViewPage, ViewResource};

impl Host {
    /// Every page a command of an app in reach names, each once. A signed-out
    /// caller reaches no app, so has none.
    pub async fn views(&self, caller: &Caller) -> Result<Vec<ViewResource>, HostError> {
        if caller.person().is_none() {
            return Ok(Vec::new());
        }
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        Ok(reach
            .apps(&snapshot)
            .into_iter()
            .flat_map(|app| app.views.iter().map(|view| self.resource(app, view)))
            .collect())
    }

    /// A view's page by its resource URI; anything else is `no resource <uri>`.
    pub async fn read_view(&self, caller: &Caller, uri: &str) -> Result<ViewPage, HostError> {
        let Some(person) = caller.person() else {
            return Err(sign_in_first());
        };
        let no_resource =
            || HostError::NotFound(format!("no resource {}", crate::names::shown(uri)));
        let (space, rest) = uri
            .strip_prefix("ui://")
            .and_then(|r| r.split_once('/'))
            .ok_or_else(no_resource)?;
        let (slug, file) = rest.split_once('/').ok_or_else(no_resource)?;
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let app = snapshot
            .app(&format!("{space}/{slug}"))
            .filter(|app| reach.role(&app.space).is_some() && app.views.iter().any(|v| v == file))
            .ok_or_else(no_resource)?;
        reach.reachable(app)?;
        let bytes = self
            .inner
            .store
            .deploy_file(app.deploy, file)
            .await?
            .ok_or_else(no_resource)?;
        let page = String::from_utf8_lossy(&bytes);
        let address = self.view_address(person, app).await?;
        Ok(ViewPage {
            html: with_base_href(&page, &address),
            resource: self.resource(app, file),
        })
    }

    fn resource(&self, app: &LiveApp, file: &str) -> ViewResource {
        ViewResource {
            uri: app.view_uri(file),
            name: format!("{}/{file}", app.name),
            title: format!("{} — {file}", app.title),
            app_origin: self.inner.url.space_origin(&app.space),
            app_address: app.address.clone(),
        }
    }
}
