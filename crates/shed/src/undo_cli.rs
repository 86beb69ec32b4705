//! `shed undo <write>` and `shed entity <space/app> <eid>`: what agents
//! (and people) did, seen and taken back from the server's terminal. Each
//! acts as the person `--as` names, through the host calls the pages make
//! (`Host::undo`, `Host::entity`), so the rule book decides here too; a
//! refusal prints its one sentence alone on stderr and exits non-zero.

use clap::Args;
use shed_host::{Host, HostError};

/// `shed undo`'s arguments.
#[derive(Args)]
pub struct UndoArgs {
    /// The write, as its activity and its entities' history name it:
    /// <space>/<app>@<version>, e.g. demo/runs@12.
    #[arg(value_name = "SPACE/APP@VERSION")]
    write: String,
    /// The handle of the person undoing it: an owner or editor of the
    /// app's space.
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
}

/// `shed entity`'s arguments.
#[derive(Args)]
pub struct EntityArgs {
    /// The app, as <space>/<app>.
    #[arg(value_name = "SPACE/APP")]
    app: String,
    /// The entity: its eid, or its alias.
    #[arg(value_name = "EID|ALIAS")]
    entity: String,
    /// The handle of the person reading it.
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
}

/// Runs `shed undo` on the data in `place`.
pub async fn undo(args: UndoArgs, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    crate::serve::print_or_refuse(undone(&host, &args).await)
}

/// Runs `shed entity` on the data in `place`.
pub async fn entity(args: EntityArgs, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    crate::serve::print_or_refuse(read(&host, &args).await)
}

async fn undone(host: &Host, args: &UndoArgs) -> Result<String, HostError> {
    let caller = host.caller_at_terminal(&args.handle).await?;
    Ok(host.undo(&caller, &args.write).await?.text)
}

async fn read(host: &Host, args: &EntityArgs) -> Result<String, HostError> {
    let caller = host.caller_at_terminal(&args.handle).await?;
    Ok(host.entity(&caller, &args.app, &args.entity).await?.text)
}
