//! A client that listed the tools under an older release's list hears
//! `notifications/tools/list_changed` and reads a line on its next reply,
//! until it lists them again. Runs the door in process, over a pipe, with
//! rmcp's own client.

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::NotificationContext,
};
use shed_host::{Host, HostConfig};
use shed_mcp::{Door, TOOLS_CHANGED_LINE};
use tokio::sync::Notify;

/// A client that remembers hearing tools/list_changed.
#[derive(Clone, Default)]
struct Listener {
    tools_changed: Arc<Notify>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}

fn last_line(result: &CallToolResult) -> String {
    result
        .content
        .last()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_caller_who_listed_an_older_list_is_told_to_list_again() -> anyhow::Result<()> {
    let data = tempfile::tempdir()?;
    let host = Host::open(HostConfig {
        data_dir: data.path().to_path_buf(),
        public_url: "http://localhost:7700".into(),
        database: None,
    })
    .await?;
    host.add_person("ada", Some("Ada")).await?;
    host.add_space("ada", "ada").await?;
    let ada = host.caller_for_handle("ada").await?;
    host.record_listed_tools(&ada, "the list of an older release")
        .await?;

    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let door = Door::as_caller(host, ada);
    tokio::spawn(async move {
        if let Ok(running) = door.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let listener = Listener::default();
    let client = listener.clone().serve(client_end).await?;

    let stale = client
        .call_tool(CallToolRequestParams::new("spaces"))
        .await?;
    assert_eq!(stale.is_error, Some(false));
    assert_eq!(last_line(&stale), TOOLS_CHANGED_LINE);
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        listener.tools_changed.notified(),
    )
    .await?;

    let again = client
        .call_tool(CallToolRequestParams::new("spaces"))
        .await?;
    assert_eq!(last_line(&again), TOOLS_CHANGED_LINE, "told until it lists");

    let tools = client.list_tools(None).await?;
    assert_eq!(tools.tools.len(), 7);
    let current = client
        .call_tool(CallToolRequestParams::new("spaces"))
        .await?;
    assert_eq!(current.content.len(), 1);
    assert_ne!(last_line(&current), TOOLS_CHANGED_LINE);

    client.cancel().await?;
    Ok(())
}
