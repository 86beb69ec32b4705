//! `shed app list|versions|rollback|trash|restore|purge|set`: an app's versions,
//! its place in the trash and its settings, from the server's terminal. Each acts as the
//! person `--as` names, through the same host calls the platform's pages
//! make, so the rule book decides here too; a refusal prints its one
//! sentence alone on stderr and exits non-zero.

use clap::{Args, Subcommand};
use shed_host::answer::AppList;
use shed_host::{Host, HostError};

/// An app's versions, roll back, trash, restore and purge.
#[derive(Subcommand)]
pub enum AppCommand {
    /// List apps: with --as, those of the person's spaces and their role;
    /// without, every app on the data folder. Each with its title, access,
    /// version, last deploy and by whom, its commands, and whether it is in
    /// the trash.
    List {
        /// The handle of the person whose apps to list.
        #[arg(long = "as", value_name = "HANDLE")]
        handle: Option<String>,
    },
    /// List an app's versions, newest first: who deployed each and when,
    /// and the commands each added and removed against the one before.
    Versions {
        /// The app, as <space>/<app>, e.g. demo/runs.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        #[command(flatten)]
        acting: Acting,
    },
    /// Deploy an earlier version's files again, as the app's next version
    /// (made by the person --as names: an owner or editor of the space).
    /// Its commands and pages are that version's; MCP clients' tool list
    /// does not move.
    ///
    /// Example: shed app rollback demo/runs 2 --as ada
    Rollback {
        /// The app, as <space>/<app>.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        /// The version to bring back: 2, or v2.
        #[arg(value_parser = parse_version)]
        version: i64,
        #[command(flatten)]
        acting: Acting,
    },
    /// Put an app in the trash: its commands, pages, views and data are out
    /// of reach through every door (MCP, the web, `shed command`), and its
    /// name stays taken, until it is restored or purged. Its data is kept.
    /// Owners and editors of the space may.
    Trash {
        /// The app, as <space>/<app>.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        #[command(flatten)]
        acting: Acting,
    },
    /// Change an app's settings (an owner of the space may).
    ///
    /// Example: shed app set demo/runs --agent-writes-need-approval on --as ada
    Set {
        /// The app, as <space>/<app>.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        /// on: every write an agent asks (an MCP client, a job) waits for
        /// its person's approval; off: only commands that say confirm do.
        #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
        agent_writes_need_approval: String,
        #[command(flatten)]
        acting: Acting,
    },
    /// Take an app out of the trash: all of it answers again.
    Restore {
        /// The app, as <space>/<app>.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        #[command(flatten)]
        acting: Acting,
    },
    /// Delete an app in the trash for good — every version and all its data
    /// — and free its name. Only an owner of the space may, and only by
    /// typing the app's name again after --confirm.
    ///
    /// Example: shed app purge demo/old --confirm demo/old --as ada
    Purge {
        /// The app, as <space>/<app>.
        #[arg(value_name = "SPACE/APP")]
        app: String,
        /// The app's name again, exactly, to say you mean it.
        #[arg(long, value_name = "SPACE/APP")]
        confirm: String,
        #[command(flatten)]
        acting: Acting,
    },
}

/// Who acts.
#[derive(Args)]
pub struct Acting {
    /// The handle of the person acting.
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
}

/// `shed app list`: a row per app, with the person's role when `--as`
/// names one.
fn app_table(list: &AppList, with_role: bool) -> String {
    let mut headers = vec!["APP", "TITLE", "ACCESS", "VERSION", "DEPLOYED", "BY"];
    if with_role {
        headers.push("ROLE");
    }
    headers.extend(["TRASH", "COMMANDS"]);
    let rows: Vec<Vec<String>> = list
        .apps
        .iter()
        .map(|mine| {
            let app = &mine.app;
            let mut row = vec![
                app.at.clone(),
                app.title.clone(),
                app.access.to_string(),
                format!("v{}", app.version),
                crate::table::time(&app.last_deploy.at),
                app.last_deploy.handle.clone(),
            ];
            if with_role {
                row.push(mine.role.unwrap_or("-").to_string());
            }
            row.push(app.trashed.as_ref().map_or_else(
                || "-".to_string(),
                |at| format!("since {} by {}", crate::table::time(&at.at), at.handle),
            ));
            row.push(if app.commands.is_empty() {
                "-".to_string()
            } else {
                app.commands.join(", ")
            });
            row
        })
        .collect();
    let none = if with_role {
        "no apps in their spaces yet — `shed deploy <folder> --to <space>/<app> --as <handle>` makes one"
    } else {
        "no apps yet — `shed deploy <folder> --to <space>/<app> --as <handle>` makes one"
    };
    crate::table::table(&headers, &rows, none)
}

/// `2` or `v2`, as the host reads a version.
fn parse_version(word: &str) -> Result<i64, String> {
    shed_host::parse_version(word).map_err(|refused| refused.to_string())
}

/// Runs one `shed app` command on the data in `place`.
pub async fn run(command: AppCommand, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    // Titles and commands are what an app's deployer chose: escaped.
    let printed = act(&host, command).await;
    crate::serve::print_or_refuse(printed.map(|text| shed_host::app_data::plain(&text, true)))
}

/// What the command prints, or the host's sentence.
async fn act(host: &Host, command: AppCommand) -> Result<String, HostError> {
    Ok(match command {
        AppCommand::List { handle: None } => app_table(&host.all_apps().await?.data, false),
        AppCommand::List {
            handle: Some(handle),
        } => {
            let caller = host.caller_at_terminal(&handle).await?;
            app_table(&host.apps(&caller).await?.data, true)
        }
        AppCommand::Versions { app, acting } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            host.app_versions(&caller, &app).await?.text
        }
        AppCommand::Rollback {
            app,
            version,
            acting,
        } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            host.app_rollback(&caller, &app, version).await?.text
        }
        AppCommand::Trash { app, acting } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            host.app_trash(&caller, &app).await?.text
        }
        AppCommand::Set {
            app,
            agent_writes_need_approval,
            acting,
        } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            let on = agent_writes_need_approval == "on";
            host.set_agent_writes_need_approval(&caller, &app, on)
                .await?
        }
        AppCommand::Restore { app, acting } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            host.app_restore(&caller, &app).await?.text
        }
        AppCommand::Purge {
            app,
            confirm,
            acting,
        } => {
            let caller = host.caller_at_terminal(&acting.handle).await?;
            host.app_purge(&caller, &app, &confirm).await?.text
        }
    })
}
