//! An app's views as MCP resources (MCP Apps, `io.modelcontextprotocol/ui`):
//! `ui://<space>/<app>/<page>` served as `text/html;profile=mcp-app`, with
//! the app's origin in the CSP metadata so its `<base href>` and relative
//! files load — on the `resources/list` entry and on the content item.

use rmcp::model::{MetaObject, ReadResourceResult, Resource, ResourceContents};
use serde_json::json;
use shed_host::{ViewPage, ViewResource};

/// The MIME type of an MCP Apps view.
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// `_meta.ui` of a view: its CSP names the app's origin for the page's
/// files and for its `<base href>`.
fn ui_meta(view: &ViewResource) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.0.insert(
        "ui".to_string(),
        json!({
            "csp": {
                "resourceDomains": [view.app_origin],
                "baseUriDomains": [view.app_origin],
            }
        }),
    );
    meta
}

/// The `resources/list` entry of a view.
pub fn listed(view: &ViewResource) -> Resource {
    Resource::new(&view.uri, &view.name)
        .with_title(&view.title)
        .with_description(format!(
            "A page of the app at {} that a command's answer draws itself in.",
            view.app_address
        ))
        .with_mime_type(VIEW_MIME_TYPE)
        .with_meta(ui_meta(view))
}

/// The `resources/read` answer of a view: its html, with the same metadata.
pub fn read(page: ViewPage) -> ReadResourceResult {
    let meta = ui_meta(&page.resource);
    ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
        uri: page.resource.uri,
        mime_type: Some(VIEW_MIME_TYPE.to_string()),
        text: page.html,
        meta: Some(meta),
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> ViewResource {
        ViewResource {
            uri: "ui://jeff/runs/leaderboard.html".into(),
            name: "leaderboard.html".into(),
            title: "Run club — leaderboard.html".into(),
            app_origin: "http://jeff.localhost:7700".into(),
            app_address: "http://jeff.localhost:7700/runs/".into(),
        }
    }

    #[test]
    fn a_listed_view_carries_its_mime_type_and_csp() {
        let wire = serde_json::to_value(listed(&view())).unwrap();
        assert_eq!(wire["uri"], "ui://jeff/runs/leaderboard.html");
        assert_eq!(wire["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(
            wire["_meta"]["ui"]["csp"]["resourceDomains"][0],
            "http://jeff.localhost:7700"
        );
        assert_eq!(
            wire["_meta"]["ui"]["csp"]["baseUriDomains"][0],
            "http://jeff.localhost:7700"
        );
    }

    #[test]
    fn a_read_view_carries_the_html_and_the_csp_on_its_content() {
        let wire = serde_json::to_value(read(ViewPage {
            resource: view(),
            html: "<base href=\"http://jeff.localhost:7700/runs/\"><ol></ol>".into(),
        }))
        .unwrap();
        let item = &wire["contents"][0];
        assert_eq!(item["mimeType"], "text/html;profile=mcp-app");
        assert!(item["text"].as_str().unwrap().starts_with("<base href="));
        assert_eq!(
            item["_meta"]["ui"]["csp"]["baseUriDomains"][0],
            "http://jeff.localhost:7700"
        );
    }
}
