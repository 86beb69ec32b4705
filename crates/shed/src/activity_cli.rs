//! What agents (and people) did, seen and taken back from the server's
//! terminal: `shed activity` (the writes and refused calls a person's
//! activity page lists), `shed entity <space/app> <eid>` and `shed undo
//! <write>`. Each acts as the person `--as` names, through the host calls
//! the pages make (`Host::activity`, `Host::entity`, `Host::undo`), so the
//! rule book decides here too; a refusal prints its one sentence alone on
//! stderr and exits non-zero. App data reaches the terminal escaped
//! (`shed_host::app_data::plain`: no control or bidirectional formatting
//! character raw); `shed entity` shows each value cut, and one whole with
//! `--whole <field> [--version N]`.

use clap::Args;
use shed_host::activity::{ActivityNarrow, ActivityPage, ActivityScope, Through};
use shed_host::app_data::plain;
use shed_host::entity::{Whole, version_line, whole_before, whole_text};
use shed_host::{Host, HostError};

use crate::table::{count, table, time};

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
    /// One value whole (a value is cut past 300 characters): a field now,
    /// as <component>.<column>, or with --version what that version
    /// changed of a field it names.
    #[arg(long, value_name = "FIELD")]
    whole: Option<String>,
    /// One version alone (its line), or the version --whole reads.
    #[arg(long, value_name = "N")]
    version: Option<u64>,
}

/// `shed activity`'s arguments.
#[derive(Args)]
pub struct ActivityArgs {
    /// The handle of the person whose activity it is: the writes to the
    /// apps they may read, in the spaces they belong to.
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
    /// Only this space's.
    #[arg(long, value_name = "SPACE")]
    space: Option<String>,
    /// Only this app's: <space>/<app>, or an app's name in any space.
    #[arg(long, value_name = "APP")]
    app: Option<String>,
    /// Only what this person wrote (or their agents, for them).
    #[arg(long, value_name = "HANDLE")]
    person: Option<String>,
    /// Only what this agent job wrote, e.g. job-3.
    #[arg(long, value_name = "JOB")]
    job: Option<String>,
    /// Only the writes through this command or tool, e.g. log_run.
    #[arg(long, value_name = "COMMAND")]
    command: Option<String>,
    /// Older writes: the number the last page ended with.
    #[arg(long, value_name = "N")]
    before: Option<i64>,
}

/// Runs `shed activity` on the data in `place`.
pub async fn activity(args: ActivityArgs, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    crate::serve::print_or_refuse(listed(&host, &args).await.map(|text| plain(&text, true)))
}

async fn listed(host: &Host, args: &ActivityArgs) -> Result<String, HostError> {
    let caller = host.caller_at_terminal(&args.handle).await?;
    let scope = match (&args.space, &args.app) {
        (_, Some(app)) if app.contains('/') => ActivityScope::App(app),
        (Some(space), _) => ActivityScope::Space(space),
        (None, _) => ActivityScope::Everything,
    };
    let narrow = ActivityNarrow {
        person: args.person.clone(),
        job: args.job.clone(),
        app: args.app.clone(),
        command: args.command.clone(),
    };
    let page = host
        .activity(&caller, scope, &narrow, args.before)
        .await?
        .data;
    Ok(activity_text(&page))
}

/// The page as the terminal shows it: the writes in a table (each named
/// `<app>@<version>`, what `shed undo` and `shed entity` take), the
/// refused calls in another, and how to see older writes.
fn activity_text(page: &ActivityPage) -> String {
    let writes: Vec<Vec<String>> = page
        .writes
        .iter()
        .map(|w| {
            let agent = w.via.clone().or_else(|| w.through.client.clone());
            vec![
                time(&w.at),
                format!("{}@{}", w.app, w.version),
                format!("@{}", w.by.handle),
                agent.unwrap_or_else(|| "-".into()),
                through(&w.through),
                w.entities.join(" "),
            ]
        })
        .collect();
    let mut text = table(
        &["WHEN", "WRITE", "BY", "VIA", "THROUGH", "ENTITIES"],
        &writes,
        "no writes to show",
    );
    if let Some(older) = page.older {
        text.push_str(&format!("\nolder writes: the same with --before {older}"));
    }
    if !page.refusals.is_empty() {
        let refused: Vec<Vec<String>> = page
            .refusals
            .iter()
            .map(|r| {
                vec![
                    time(&r.at),
                    r.app.clone(),
                    format!("@{}", r.by.handle),
                    r.via.clone().unwrap_or_else(|| "-".into()),
                    through(&r.through),
                    r.sentence.clone(),
                ]
            })
            .collect();
        text.push_str(&format!(
            "\n\n{} refused:\n{}",
            count(refused.len(), "call", "calls"),
            table(
                &["WHEN", "APP", "BY", "VIA", "THROUGH", "SENTENCE"],
                &refused,
                ""
            )
        ));
    }
    text
}

/// The THROUGH cell: the door and the command (`mcp log_run`), `-` for
/// no command.
fn through(through: &Through) -> String {
    let command = through.command.as_deref().unwrap_or("-");
    format!("{} {command}", through.door)
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

/// The entity as the terminal shows it: its text (its versions' lines), one
/// version's line, or one value whole — escaped ([`plain`]).
async fn read(host: &Host, args: &EntityArgs) -> Result<String, HostError> {
    let caller = host.caller_at_terminal(&args.handle).await?;
    let answer = host.entity(&caller, &args.app, &args.entity).await?;
    let view = &answer.data;
    let shown = match (&args.whole, args.version) {
        (None, None) => answer.text.clone(),
        (None, Some(version)) => view
            .versions(Some(version))?
            .iter()
            .map(version_line)
            .collect::<Vec<_>>()
            .join("\n"),
        (Some(field), version) => match view.whole(field, version)? {
            Whole::Now(value) => whole_text(value),
            Whole::Changed(changed) => format!(
                "before:\n{}\nafter:\n{}",
                whole_before(changed),
                whole_text(&changed.after)
            ),
        },
    };
    Ok(plain(&shown, true))
}
