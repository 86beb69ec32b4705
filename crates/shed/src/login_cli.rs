//! `shed login <handle>` and `shed logout <handle>`: signing people in and
//! out on the web, run on the server (the data folder is the authority).

use clap::{Args, Subcommand};
use shed_host::sessions::LOGIN_LINK_SECONDS;

#[derive(Subcommand)]
pub enum WebCommand {
    /// Print a one-time link that signs a person in on the web, e.g.
    /// `shed login ada`. Open it in a browser and press "Sign in": it works
    /// once, for ten minutes, and signs them in on every space they belong
    /// to. Opening it alone spends nothing (a link preview does not use it
    /// up). Only its hash is kept.
    Login(LoginArgs),
    /// Sign a person out of the web everywhere: ends every session of theirs
    /// (on every browser) and every sign-in link not used yet.
    Logout(LogoutArgs),
}

#[derive(Args)]
pub struct LoginArgs {
    /// The person's handle (see `shed person add`).
    handle: String,
}

#[derive(Args)]
pub struct LogoutArgs {
    /// The person's handle.
    handle: String,
}

/// Runs `shed login` or `shed logout` on the data in `place`.
pub async fn run(command: WebCommand, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    match command {
        WebCommand::Login(args) => {
            let link = host.login_link(&args.handle).await?;
            println!("{}", link.url);
            eprintln!(
                "a one-time sign-in link for {} (@{}): it works once, for the next {} minutes",
                link.person.name,
                link.person.handle,
                LOGIN_LINK_SECONDS / 60
            );
        }
        WebCommand::Logout(args) => {
            let ended = host.end_sessions(&args.handle).await?;
            let sessions = if ended == 1 { "session" } else { "sessions" };
            println!(
                "signed {} out of the web: ended {ended} {sessions}",
                args.handle
            );
        }
    }
    Ok(())
}
