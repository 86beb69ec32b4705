//! `shed up`: the first run. A data folder that is a file, or one another
//! shed already serves, is refused first, naming that one, before anything
//! is printed. It takes its port next (a port already taken changes
//! nothing). On a data folder — or database — with nobody in it
//! yet, it makes the person `you`, the space `demo` and the run club app,
//! creates a token and a one-time sign-in link, and prints how to connect
//! an MCP client and a browser; then it serves. On one set up earlier it
//! prints the commands that make a token and a sign-in link, one line each,
//! and the configuration for the address it serves at, and serves.

use std::path::Path;

use anyhow::Context;
use serde_json::json;
use shed_host::sessions::LOGIN_LINK_SECONDS;
use shed_host::{Host, terminal_command};

use crate::{ServeArgs, example, serve};

/// `shed up`.
pub async fn up(place: &serve::Place, args: &ServeArgs) -> anyhow::Result<()> {
    serve::refuse_a_file(place)?;
    serve::refuse_if_served(place).await;
    let data = place.data.as_path();
    let operator = args.operator()?;
    let socket = serve::bind(args, place.public_url.as_deref())?;
    let host = serve::open_server(place, args).await?;
    // Fresh is a folder or database with nobody in it: a first run, or one
    // a command made before this shed refused to make folders.
    if host.people().await?.is_empty() {
        let welcome = set_up(&host, data).await?;
        say(&welcome);
    } else {
        say(&again(&host, data, &serve::terminal_flags(place)).await);
    }
    serve::run_server(host, data, args, socket, operator).await
}

/// Prints `text` on stdout. A reader that has gone (`shed up | head -1`)
/// is no reason to stop serving, so what could not be written is let go.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// The name of the token `shed up` makes, as `shed token list` and the
/// account page show it.
const TOKEN_NAME: &str = "shed up";

/// What `shed up` prints on a data folder set up earlier: the MCP address,
/// the commands that print a new token and a sign-in link (one line each,
/// carrying `flags`, so each runs as pasted into this shell), and a
/// configuration for the address it serves at now.
async fn again(host: &Host, data: &Path, flags: &str) -> String {
    let mcp_url = format!("{}{}", host.public_url(), shed_mcp::MCP_PATH);
    // The person `shed up` made, if still there; else any person's handle.
    let handle = match host.caller_for_handle("you").await {
        Ok(_) => "you",
        Err(_) => "<handle>",
    };
    format!(
        "shed is serving {data} at {mcp_url} (set up earlier).\n\
         \n\
         A token:        {token}  (prints a new one, for the configuration below)\n\
         A sign-in link: {login}  (prints a one-time link to {url}/, while shed serves)\n\
         \n\
         Paste this into your MCP client's configuration, with the token:\n\
         {http}\n\
         \n\
         A hosted chat client takes {mcp_url} and signs in through the browser.\n\
         {vocab}\n",
        data = data.display(),
        token = terminal_command(&format!("token create {handle}"), flags),
        login = terminal_command(&format!("login {handle}"), flags),
        url = host.public_url(),
        http = pretty(&http_config(&mcp_url, "<token>")),
        vocab = GENERATED_COMMANDS,
    )
}

/// Where the run club's generated commands come from, as `shed up` says it.
const GENERATED_COMMANDS: &str = "add_jog and find_jog are made from the kind jog in the run \
     club's vocab.json (every kind gets add_<kind> and find_<kind>; its other commands are its \
     tools.json's) — docs/apps.md shows how to write an app of your own.";

/// An MCP client's configuration for the Streamable HTTP door at
/// `mcp_url` with a bearer token.
fn http_config(mcp_url: &str, token: &str) -> serde_json::Value {
    json!({
        "mcpServers": {
            "shed": {
                "type": "http",
                "url": mcp_url,
                "headers": { "Authorization": format!("Bearer {token}") }
            }
        }
    })
}

/// JSON as a person pastes it.
fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
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
    let spec = shed_host::take_back::TokenSpec {
        name: Some(TOKEN_NAME),
        ttl: None,
    };
    let token = host.create_token("you", spec).await?;
    let sign_in = host.login_link("you").await?;
    Ok(welcome(host, data, &deployed.text, &token, &sign_in.url))
}

/// What `shed up` prints on a new data folder.
fn welcome(host: &Host, data: &Path, deployed: &str, token: &str, sign_in: &str) -> String {
    let mcp_url = format!("{}{}", host.public_url(), shed_mcp::MCP_PATH);
    let data_dir = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
    let http_client = http_config(&mcp_url, token);
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
    format!(
        "shed is set up in {data}: the person `you`, the space `demo`, and its run club app.\n\
         \n\
         {deployed}\n\
         \n\
         MCP address: {mcp_url}\n\
         Token:       {token}\n\
         (shown once; `shed token create you` makes another)\n\
         Sign in:     {sign_in}\n\
         (one time, to your home page {url}/: open it in a browser and press \"Sign in\";\n\
         it works for {minutes} minutes — `shed login you` prints another)\n\
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
         `command` with log_run.\n\
         {vocab}\n",
        data = data.display(),
        url = host.public_url(),
        minutes = LOGIN_LINK_SECONDS / 60,
        app = host.app_address("demo", "runs"),
        http = pretty(&http_client),
        stdio = pretty(&stdio_client),
        vocab = GENERATED_COMMANDS,
    )
}
