//! The administration commands of `shed`: people, spaces, members, tokens and
//! deploys. Each opens the host on the data folder (safe while a server runs
//! on it: SQLite in WAL mode, with a busy timeout) and prints what it did; a
//! refusal prints its one sentence alone on stderr and exits non-zero.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use shed_host::take_back::TokenSpec;
use shed_host::{Access, Caller, Host, HostError, Role};
use walkdir::WalkDir;

use crate::table::{count, table};

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Add, list and remove people who can sign in and belong to spaces.
    #[command(subcommand)]
    Person(PersonCommand),
    /// Make and list spaces: a space holds apps and has members.
    #[command(subcommand)]
    Space(SpaceCommand),
    /// Give people a role in a space, list them, take them out.
    #[command(subcommand)]
    Member(MemberCommand),
    /// Make, list and revoke bearer tokens that sign a person in over MCP.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Deploy a folder (index.html, vocab.json, tools.json, …) as an app of a
    /// space; each deploy is its next version (v1, v2, …).
    ///
    /// The manifest is checked whole first: if anything is wrong, the one
    /// sentence naming every problem is printed, nothing changes, and the
    /// app's previous version keeps answering.
    ///
    /// Example: shed deploy ./run-club --to jeff/runs --as jeff --title "Run club"
    Deploy(DeployArgs),
}

#[derive(Subcommand)]
pub enum PersonCommand {
    /// Add a person by handle, e.g. `shed person add ada --name "Ada Lovelace"`.
    Add {
        /// Their handle: a-z, 0-9 and -, starting with a letter (at most 40).
        handle: String,
        /// The name shown beside what they write. Default: the handle.
        #[arg(long)]
        name: Option<String>,
    },
    /// List everyone who may sign in.
    List,
    /// Remove a person: their tokens, OAuth grants, sessions, sign-in links,
    /// jobs and memberships end at once; what they wrote stays, attributed
    /// to them, and their handle is not given out again. Refused while they
    /// are the last owner of a space.
    Remove {
        /// Their handle.
        handle: String,
    },
}

#[derive(Subcommand)]
pub enum SpaceCommand {
    /// Make a space owned by a person, e.g. `shed space add jeff --owner jeff`.
    /// The space lives at http://<slug>.<host>/.
    Add {
        /// The space's slug: a-z, 0-9 and -, starting with a letter.
        slug: String,
        /// The handle of the person who owns it (see `shed person add`).
        #[arg(long, value_name = "HANDLE")]
        owner: String,
    },
    /// List every space, with how many members and apps it has.
    List,
}

#[derive(Subcommand)]
pub enum MemberCommand {
    /// Make a person a member of a space, or change their role, e.g.
    /// `shed member add jeff ada --role editor`.
    ///
    /// Owners and editors change the space's apps and deploy them; viewers
    /// read them. Every app of every space a person belongs to is in their
    /// agent's `commands`.
    Add {
        /// The space's slug.
        space: String,
        /// The person's handle.
        handle: String,
        /// owner, editor or viewer.
        #[arg(long, value_parser = parse_role)]
        role: Role,
    },
    /// List a space's members and their roles, owners first.
    List {
        /// The space's slug.
        space: String,
    },
    /// Take a person out of a space, from their very next request on. A
    /// space keeps at least one owner: make another owner before removing
    /// the last.
    Remove {
        /// The space's slug.
        space: String,
        /// The person's handle.
        handle: String,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Make a bearer token for a person and print it, once: shed keeps only
    /// its hash. An MCP client sends it as `Authorization: Bearer <token>`.
    Create {
        /// The person's handle.
        handle: String,
        /// What the token is for, shown by `shed token list`, e.g. "laptop".
        #[arg(long)]
        name: Option<String>,
        /// How long it lasts: 90s, 30m, 2h, 30d, … Default: until revoked.
        #[arg(long)]
        ttl: Option<String>,
    },
    /// List the live tokens (id, name, person, created, last used, expires),
    /// of one person or of everyone — never a secret. Apps signed in with
    /// OAuth are listed as `oauth-<n>`, named by the app.
    List {
        /// Only this person's.
        handle: Option<String>,
    },
    /// Revoke a token by the id `shed token list` shows: refused from its
    /// very next request on, in every process. An app's sign-in (`oauth-<n>`)
    /// ends whole: the app must ask the person again.
    Revoke {
        /// The token's id: a number, or oauth-<number>.
        id: String,
    },
}

#[derive(Args)]
pub struct DeployArgs {
    /// The folder to deploy. Files and folders whose name starts with a dot
    /// are left out. Links are followed inside the folder; a link to anything
    /// outside it is refused (copy the file in instead).
    dir: PathBuf,
    /// The app, as <space>/<app>, e.g. jeff/runs. Made on its first deploy.
    #[arg(long, visible_alias = "app", value_name = "SPACE/APP")]
    to: String,
    /// The handle of the person deploying: an owner or editor of the space.
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
    /// The app's title, what people call it, e.g. "Run club". Default: as
    /// before (the slug on a first deploy).
    #[arg(long)]
    title: Option<String>,
    /// private (members read; owners and editors write), public (anyone
    /// reads; owners and editors write) or open (anyone who can reach it
    /// writes). Default: as before (private on a first deploy).
    #[arg(long, value_parser = parse_access)]
    access: Option<Access>,
}

fn parse_role(word: &str) -> Result<Role, String> {
    word.parse().map_err(|e: shed_host::NotARole| e.to_string())
}

fn parse_access(word: &str) -> Result<Access, String> {
    word.parse()
        .map_err(|e: shed_host::NotAnAccess| e.to_string())
}

/// Runs one administration command on the data folder `data`.
pub async fn run(command: AdminCommand, place: &crate::serve::Place) -> anyhow::Result<()> {
    let host = crate::serve::open_for_cli(place).await?;
    crate::serve::print_or_refuse(administer(&host, command).await)
}

/// What the command prints, or the host's sentence.
async fn administer(host: &Host, command: AdminCommand) -> Result<String, HostError> {
    match command {
        AdminCommand::Person(PersonCommand::Add { handle, name }) => {
            let person = host.add_person(&handle, name.as_deref()).await?;
            Ok(format!("added {} ({})", person.handle, person.name))
        }
        AdminCommand::Space(SpaceCommand::Add { slug, owner }) => {
            host.add_space(&slug, &owner).await?;
            Ok(format!("made space {slug}, owned by {owner}"))
        }
        AdminCommand::Member(MemberCommand::Add {
            space,
            handle,
            role,
        }) => {
            host.add_member(&space, &handle, role).await?;
            Ok(format!(
                "{handle} is now {} of {space}",
                role.with_article()
            ))
        }
        AdminCommand::Person(PersonCommand::List) => {
            let rows: Vec<Vec<String>> = host
                .people()
                .await?
                .into_iter()
                .map(|person| vec![person.handle, person.name])
                .collect();
            Ok(table(
                &["HANDLE", "NAME"],
                &rows,
                "no people yet — `shed person add <handle>` adds one",
            ))
        }
        AdminCommand::Person(PersonCommand::Remove { handle }) => {
            let removed = host.remove_person(&handle).await?;
            Ok(format!(
                "removed {handle}: {} revoked, {} and {} ended, out of {}; what they wrote stays theirs",
                count(removed.tokens, "token", "tokens"),
                count(removed.sessions, "session", "sessions"),
                count(removed.jobs, "job", "jobs"),
                count(removed.memberships, "space", "spaces")
            ))
        }
        AdminCommand::Space(SpaceCommand::List) => {
            let rows: Vec<Vec<String>> = host
                .all_spaces()
                .await?
                .into_iter()
                .map(|space| {
                    vec![
                        space.slug,
                        space.members.to_string(),
                        space.apps.to_string(),
                    ]
                })
                .collect();
            Ok(table(
                &["SPACE", "MEMBERS", "APPS"],
                &rows,
                "no spaces yet — `shed space add <slug> --owner <handle>` makes one",
            ))
        }
        AdminCommand::Member(MemberCommand::List { space }) => {
            let rows: Vec<Vec<String>> = host
                .members(&space)
                .await?
                .into_iter()
                .map(|(person, role)| vec![person.handle, role.to_string(), person.name])
                .collect();
            Ok(table(&["HANDLE", "ROLE", "NAME"], &rows, "no members"))
        }
        AdminCommand::Member(MemberCommand::Remove { space, handle }) => {
            let role = host.remove_member(None, &space, &handle).await?;
            Ok(format!(
                "{handle} ({}) is no longer a member of {space}",
                role.as_str()
            ))
        }
        AdminCommand::Token(TokenCommand::Create { handle, name, ttl }) => {
            let ttl = match ttl {
                Some(ttl) => Some(
                    shed_broker::jobs::parse_ttl(&ttl)
                        .map_err(|e| HostError::BadInput(e.to_string()))?,
                ),
                None => None,
            };
            host.create_token(
                &handle,
                TokenSpec {
                    name: name.as_deref(),
                    ttl,
                },
            )
            .await
        }
        AdminCommand::Token(TokenCommand::List { handle }) => {
            let rows: Vec<Vec<String>> = host
                .tokens(handle.as_deref())
                .await?
                .into_iter()
                .map(|token| {
                    vec![
                        token.id.to_string(),
                        token.name.unwrap_or_else(|| "-".to_string()),
                        token.person.handle,
                        crate::table::time(&token.created_at),
                        crate::table::seconds(token.last_used_at, "never"),
                        crate::table::seconds(token.expires_at, "never"),
                    ]
                })
                .collect();
            Ok(table(
                &["ID", "NAME", "PERSON", "CREATED", "LAST USED", "EXPIRES"],
                &rows,
                "no live tokens",
            ))
        }
        AdminCommand::Token(TokenCommand::Revoke { id }) => {
            let id = host.revoke_token(&id).await?;
            Ok(format!("revoked token {id}"))
        }
        AdminCommand::Deploy(args) => {
            let caller: Caller = host.caller_at_terminal(&args.handle).await?;
            let files = read_folder(&args.dir)?;
            let answer = host
                .deploy_folder(&caller, &args.to, files, args.title, args.access)
                .await?;
            Ok(answer.text)
        }
    }
}

/// Every file under `dir` (path relative to it, `/`-separated → bytes),
/// leaving out names that start with a dot. A link is followed, to a file or
/// a folder, while what it points at is inside `dir`; a link out of `dir`, or
/// to a folder it is itself in (which would go on forever), refuses the
/// deploy with a sentence naming it, and nothing is deployed.
fn read_folder(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, HostError> {
    let unreadable = |path: &Path, e: &dyn std::fmt::Display| {
        HostError::BadInput(format!("{} cannot be read: {e}", path.display()))
    };
    if !dir.is_dir() {
        return Err(HostError::BadInput(format!(
            "{} is not a folder — deploy the folder holding index.html",
            dir.display()
        )));
    }
    let root = dir.canonicalize().map_err(|e| unreadable(dir, &e))?;
    // The name a path is deployed under, for the sentences.
    let relative = |path: &Path| path.strip_prefix(dir).unwrap_or(path).display().to_string();
    let link = |path: &Path| {
        std::fs::read_link(path).map_or_else(|e| e.to_string(), |to| to.display().to_string())
    };
    let mut files = BTreeMap::new();
    let walk = WalkDir::new(dir)
        .follow_links(true)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| !left_out(entry.depth(), entry.path()));
    for entry in walk {
        let entry = match entry {
            Ok(entry) => entry,
            // A link followed before its dot name was seen: left out as well.
            Err(e) if e.path().is_some_and(|path| left_out(e.depth(), path)) => continue,
            Err(e) => {
                let path = e.path().unwrap_or(dir);
                return Err(match e.loop_ancestor() {
                    Some(_) => HostError::BadInput(format!(
                        "{} links to {}, a folder it is in, so it would go on forever — remove the link",
                        relative(path),
                        link(path)
                    )),
                    None => match e.io_error() {
                        Some(io) => unreadable(path, io),
                        None => unreadable(path, &e),
                    },
                });
            }
        };
        let path = entry.path();
        if entry.path_is_symlink() {
            let target = path.canonicalize().map_err(|e| unreadable(path, &e))?;
            if !target.starts_with(&root) {
                return Err(HostError::BadInput(format!(
                    "{} links to {}, outside the app's folder — copy the file in, or remove the link",
                    relative(path),
                    link(path)
                )));
            }
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(name) = path.strip_prefix(dir).ok().and_then(Path::to_str) else {
            return Err(HostError::BadInput(format!(
                "{} is not a UTF-8 file name — rename it",
                path.display()
            )));
        };
        files.insert(
            name.to_string(),
            std::fs::read(path).map_err(|e| unreadable(path, &e))?,
        );
    }
    Ok(files)
}

/// Whether a deploy leaves `path` out: a name under the folder (`depth` 1
/// or more) that starts with a dot.
fn left_out(depth: usize, path: &Path) -> bool {
    depth > 0
        && path
            .file_name()
            .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."))
}
