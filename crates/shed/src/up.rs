//! `shed up`: the first run. On a new data folder it makes the person `you`,
//! the space `demo` and the run club app, creates a token and prints how to
//! connect an MCP client; then it serves. On an existing folder it serves.

use std::path::Path;

use anyhow::Context;
use serde_json::json;
use shed_host::Host;

use crate::{ServeArgs, example, serve};

/// `shed up`.
pub async fn up(place: &serve::Place, args: &ServeArgs) -> anyhow::Result<()> {
    let data = place.data.as_path();
    let file_was_there = data.join(shed_host::DATABASE_FILE).exists();
    let host = serve::open_server(place, args).await?;
    // On a database server, fresh is a database where `you` is not made yet.
    let fresh = match place.database {
        None => !file_was_there,
        Some(_) => host.caller_for_handle("you").await.is_err(),
    };
    if fresh {
        let welcome = set_up(&host, data).await?;
        println!("{welcome}");
    } else {
        println!(
            "shed is serving {data} at {url}{mcp} (made earlier; `shed token create <handle>` prints a new token; \
             a hosted chat client takes {url}{mcp} and signs in through the browser)",
            data = data.display(),
            url = host.public_url(),
            mcp = shed_mcp::MCP_PATH,
        );
    }
    serve::run_server(host, data, args).await
}

/// Makes the first person, space and app, and says how to connect.
async fn set_up(host: &Host, data: &Path) -> anyhow::Result<String> {
    host.add_person("you", Some("You")).await?;
    host.add_space("demo", "you").await?;
    let you = host.caller_for_handle("you").await?;
    let deployed = host
        .deploy_folder(
            &you,
            "demo/runs",
            example::run_club(),
            Some("Run club".to_string()),
            None,
        )
        .await
        .context("could not deploy the run club example")?;
    let token = host.create_token("you", Default::default()).await?;
    Ok(welcome(host, data, &deployed.text, &token))
}

/// What `shed up` prints on a new data folder.
fn welcome(host: &Host, data: &Path, deployed: &str, token: &str) -> String {
    let mcp_url = format!("{}{}", host.public_url(), shed_mcp::MCP_PATH);
    let data_dir = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
    let http_client = json!({
        "mcpServers": {
            "shed": {
                "type": "http",
                "url": mcp_url,
                "headers": { "Authorization": format!("Bearer {token}") }
            }
        }
    });
    let shed = std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| "shed".to_string());
    let stdio_client = json!({
        "mcpServers": {
            "shed": {
                "command": shed,
                "args": ["mcp", "--as", "you", "--data", data_dir.display().to_string()]
            }
        }
    });
    let pretty =
        |value: &serde_json::Value| serde_json::to_string_pretty(value).unwrap_or_default();
    format!(
        "shed is set up in {data}: the person `you`, the space `demo`, and its run club app.\n\
         \n\
         {deployed}\n\
         \n\
         MCP address: {mcp_url}\n\
         Token:       {token}\n\
         (shown once; `shed token create you` makes another)\n\
         The app:     {app}\n\
         \n\
         Paste this into your MCP client's configuration:\n\
         {http}\n\
         \n\
         or, for a client that starts its servers as commands (no token needed):\n\
         {stdio}\n\
         \n\
         or, in a hosted chat client that adds a remote MCP server by its URL and signs in\n\
         through the browser (OAuth), give it {mcp_url} — it must reach that address, so\n\
         serve behind HTTPS with --public-url https://…; sign in with a `shed login you` link.\n\
         \n\
         Then ask your agent to \"log a 5 mile run for Ada\" — it calls `commands`, then\n\
         `command` with log_run.\n",
        data = data.display(),
        app = host.app_address("demo", "runs"),
        http = pretty(&http_client),
        stdio = pretty(&stdio_client),
    )
}
