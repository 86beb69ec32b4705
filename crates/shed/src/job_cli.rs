//! `shed job create|end|list`: the jobs an agent runs under. A job is for
//! one person, scoped by globs over command names, and ends when ended or
//! when its time is up. Its secret (printed alone on stdout by `create`) is
//! what a harness passes as `LOOM_COMMAND_JOB_ID`; its public name
//! (`job-3`, which `create` says on stderr) is what `list`, rows, answers
//! and logs show.

use clap::{Args, Subcommand};
use shed_broker::jobs::{self, DEFAULT_TTL};

/// Jobs: what an agent may run, for whom, and until when.
#[derive(Subcommand)]
pub enum JobCommand {
    /// Make a job for a person and print its secret alone (keep it: only
    /// its hash is stored; the job's public name is said on stderr).
    Create(CreateArgs),
    /// End a job now: its agent runs nothing more.
    End(EndArgs),
    /// List the jobs: name, person, state, until when, scope.
    List(ListArgs),
}

#[derive(Args)]
pub struct CreateArgs {
    /// The handle of the person the agent acts for.
    #[arg(long, value_name = "HANDLE")]
    person: String,
    /// A glob of the commands the job may list and run, e.g. 'demo/runs.*' or
    /// graph.query (repeat for more). With no --allow and no --read-only,
    /// every command the person reaches.
    #[arg(long, value_name = "GLOB")]
    allow: Vec<String>,
    /// A glob of read commands the job may run read-only (repeat for more):
    /// they are stamped readOnlyGranted in the listing.
    #[arg(long = "read-only", value_name = "GLOB")]
    read_only: Vec<String>,
    /// How long the job lasts: 90s, 30m, 2h, 1h30m, 7d.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TTL)]
    ttl: String,
}

#[derive(Args)]
pub struct EndArgs {
    /// The job's name, as `shed job list` shows it (job-3), or its secret,
    /// as `shed job create` printed it.
    job: String,
}

#[derive(Args)]
pub struct ListArgs {
    /// Print a JSON list instead of lines.
    #[arg(long)]
    json: bool,
}

/// Runs `shed job …` on the data folder.
pub async fn run(command: JobCommand, place: &crate::serve::Place) -> anyhow::Result<()> {
    let open = || crate::serve::open_for_cli(place);
    match command {
        JobCommand::Create(args) => {
            let ttl = jobs::parse_ttl(&args.ttl)?;
            let host = open().await?;
            let made = jobs::create(&host, &args.person, args.allow, args.read_only, ttl).await?;
            println!("{}", made.secret);
            eprintln!(
                "made {} for {} — the line above is its secret, shown this once (only its hash is kept); rows and `shed job list` name the job {}",
                made.job.name, made.job.person.handle, made.job.name
            );
        }
        JobCommand::End(args) => {
            let job = open().await?.end_job(args.job.trim()).await?;
            println!("{}", jobs::line(&job));
        }
        JobCommand::List(args) => {
            let all = open().await?.jobs().await?;
            if args.json {
                let list: Vec<serde_json::Value> = all.iter().map(jobs::to_json).collect();
                println!("{}", serde_json::Value::Array(list));
            } else if all.is_empty() {
                println!("no jobs yet — `shed job create --person <handle>` makes one");
            } else {
                for job in &all {
                    println!("{}", jobs::line(job));
                }
            }
        }
    }
    Ok(())
}
