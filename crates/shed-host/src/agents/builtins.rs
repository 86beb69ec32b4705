//! The platform's built-in commands, beside the apps' own: named with dots,
//! scope `global` or `loom` (an app the call names with `--loom`). Some carry
//! the declarations the protocol knows — `developer`, `actors`,
//! `origins_refused`, `origin`, a consent `grant` — and this command layer
//! enforces them on every call, whoever lists what.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::rows::{CommandRow, Effect, into_map};
use super::run::AgentCall;
use crate::access::{Act, Standing, Subject, may, sign_in_first};
use crate::registry::LiveApp;
use crate::texts::{count, wrote};
use crate::{Access, Answer, Caller, Host, HostError, Role};

/// What a built-in acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Nothing the call names: the caller's own things.
    Global,
    /// The app the call names with `--loom <space/app>`.
    Loom,
}

/// The declarations a row carries about who may run it, and from where.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Declarations {
    /// A developer's tool (deploys); hidden from agents by harnesses.
    developer: bool,
    /// The kinds of caller that run it (`person`, `agent`); any when None.
    actors: Option<&'static [&'static str]>,
    /// Origins a call may not come from.
    origins_refused: &'static [&'static str],
    /// `pattern`: a piece's verb, run through the piece that holds it.
    origin: Option<&'static str>,
    /// Runs only over the person's consent grant, for this purpose.
    grant: Option<&'static str>,
}

pub(crate) struct Builtin {
    pub name: &'static str,
    title: &'static str,
    description: &'static str,
    pub effect: Effect,
    pub scope: Scope,
    input: fn() -> Value,
    outputs: fn() -> Value,
    declarations: Declarations,
}

/// Every built-in, in listing order.
pub(crate) const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "apps.list",
        title: "The apps in your spaces",
        description: "Every app in the spaces you belong to: its name for --loom, title, access, address and your role. Ask for it to find the app a request is about.",
        effect: Effect::Read,
        scope: Scope::Global,
        input: || {
            json!({ "type": "object", "properties": {
                "person": { "type": "string", "x-source": "job.person",
                            "description": "whose apps: filled by the host from the job" } },
                "required": ["person"] })
        },
        outputs: || json!({ "apps": { "type": "array", "description": "at, title, access, address, role, version" } }),
        declarations: Declarations::NONE,
    },
    Builtin {
        name: "graph.query",
        title: "Read an app's rows with a filter line",
        description: "Rows of the app --loom names, read with a filter line such as .jog!&.created!&limit=20. Ask for it when no command of the app reads what you need.",
        effect: Effect::Read,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "filter": { "type": "string", "description": "a filter line: clauses joined by &, like .jog!&.jog.miles>=5" } },
                "required": ["filter"] })
        },
        outputs: || json!({ "rows": { "type": "array" }, "next": { "type": "string" } }),
        declarations: Declarations::NONE,
    },
    Builtin {
        name: "graph.apply",
        title: "Write a bundle to an app",
        description: "Writes one entity bundle, or a list of them, to the app --loom names, all or nothing: {\"entity\": {\"eid\": \"$new\"}, \"doc\": {\"title\": \"…\"}}. Ask for it when no command of the app writes what you need.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "bundle": { "type": ["object", "array"], "description": "a bundle or a list of bundles, as apply() takes them" } },
                "required": ["bundle"] })
        },
        outputs: applied_outputs,
        declarations: Declarations::NONE,
    },
    Builtin {
        name: "app.deploy",
        title: "Deploy an app's drafts",
        description: "Deploys the drafts of the app --loom names as its next version.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "title": { "type": "string", "description": "the app's title, e.g. Run club" },
                "access": { "enum": ["private", "public", "open"] } } })
        },
        outputs: || json!({ "app": {}, "version": {}, "address": {}, "commands": {} }),
        declarations: Declarations {
            developer: true,
            ..Declarations::NONE
        },
    },
    Builtin {
        name: "space.invite",
        title: "Invite a person into a space",
        description: "Makes a person a member of a space you own, with a role.",
        effect: Effect::Write,
        scope: Scope::Global,
        input: || {
            json!({ "type": "object", "properties": {
                "space": { "type": "string" },
                "handle": { "type": "string" },
                "role": { "enum": ["owner", "editor", "viewer"] } },
                "required": ["space", "handle", "role"] })
        },
        outputs: || json!({ "space": {}, "handle": {}, "role": {} }),
        declarations: Declarations {
            actors: Some(&["person"]),
            ..Declarations::NONE
        },
    },
    Builtin {
        name: "app.files",
        title: "Read an app's files",
        description: "Reads files of the next deploy of the app --loom names (tools.json and vocab.json too), or lists them.",
        effect: Effect::Read,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "paths": { "type": "array", "items": { "type": "string" } } } })
        },
        outputs: || json!({ "files": {} }),
        declarations: Declarations {
            origins_refused: &["session"],
            ..Declarations::NONE
        },
    },
    Builtin {
        name: "token.create",
        title: "Make a bearer token",
        description: "Makes a bearer token that signs in as you, shown once.",
        effect: Effect::Write,
        scope: Scope::Global,
        input: || json!({ "type": "object", "properties": {} }),
        outputs: || json!({ "token": {} }),
        declarations: Declarations {
            grant: Some("a token that signs in as you"),
            ..Declarations::NONE
        },
    },
    Builtin {
        name: "doc.comment",
        title: "Comment on an entity",
        description: "Writes a comment on an entity of the app --loom names, from the page that shows it.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "target": { "type": "string", "description": "the eid or alias commented on" },
                "body": { "type": "string" } },
                "required": ["target", "body"] })
        },
        outputs: applied_outputs,
        declarations: Declarations {
            origin: Some("pattern"),
            ..Declarations::NONE
        },
    },
];

fn applied_outputs() -> Value {
    json!({ "entities": { "type": "array" }, "aliases": { "type": "object" }, "version": { "type": "integer" } })
}

impl Declarations {
    const NONE: Declarations = Declarations {
        developer: false,
        actors: None,
        origins_refused: &[],
        origin: None,
        grant: None,
    };

    fn write_into(&self, row: &mut Map<String, Value>) {
        if self.developer {
            row.insert("developer".into(), json!(true));
        }
        if let Some(actors) = self.actors {
            row.insert("actors".into(), json!(actors));
        }
        if !self.origins_refused.is_empty() {
            row.insert("origins_refused".into(), json!(self.origins_refused));
        }
        if let Some(origin) = self.origin {
            row.insert("origin".into(), json!(origin));
        }
        if let Some(purpose) = self.grant {
            row.insert(
                "grant".into(),
                json!({ "kind": "consent", "purpose": purpose }),
            );
        }
    }

    /// Refuses a call its declarations do not admit.
    fn admit(&self, name: &str, caller: &Caller, call: &AgentCall) -> Result<(), HostError> {
        let person = caller.person().ok_or_else(sign_in_first)?;
        let actor = match caller {
            Caller::Agent { .. } => "agent",
            _ => "person",
        };
        if let Some(actors) = self.actors
            && !actors.contains(&actor)
        {
            return Err(HostError::Refused(format!(
                "{name} is run by a person, not by an agent acting for them — offer it to {} to run themselves",
                person.handle
            )));
        }
        let origin = call.origin.as_str();
        if self.origins_refused.contains(&origin) {
            return Err(HostError::Refused(format!(
                "{name} does not run from a {origin} — {} runs it where they work on the app",
                person.handle
            )));
        }
        if let Some(wanted) = self.origin
            && wanted != origin
        {
            return Err(HostError::Refused(format!(
                "{name} is a piece's verb — it runs through the {wanted} that holds it, not from a {origin}"
            )));
        }
        if let Some(purpose) = self.grant
            && !call.consented.iter().any(|c| c == name)
        {
            return Err(HostError::Refused(format!(
                "{name} runs only over {}'s consent grant ({purpose}) — offer it to them rather than run it",
                person.handle
            )));
        }
        Ok(())
    }
}

impl Builtin {
    pub(crate) fn row(&self) -> CommandRow {
        let mut row = into_map(json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": (self.input)(),
            "outputs": (self.outputs)(),
            "effect": self.effect.as_str(),
            "scope": match self.scope { Scope::Global => "global", Scope::Loom => "loom" },
        }));
        self.declarations.write_into(&mut row);
        CommandRow {
            name: self.name.to_string(),
            effect: self.effect,
            row,
        }
    }
}

/// A call's arguments, read by name.
struct Args<'a> {
    command: &'a str,
    fields: Map<String, Value>,
}

impl<'a> Args<'a> {
    fn read(command: &'a str, args: Value) -> Result<Args<'a>, HostError> {
        match args {
            Value::Null => Ok(Args {
                command,
                fields: Map::new(),
            }),
            Value::Object(fields) => Ok(Args { command, fields }),
            _ => Err(HostError::BadInput(format!(
                "args is an object of {command}'s arguments"
            ))),
        }
    }

    fn text(&self, name: &str) -> Result<Option<String>, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(HostError::BadInput(format!("{name} is text"))),
        }
    }

    fn required_text(&self, name: &str) -> Result<String, HostError> {
        self.text(name)?.ok_or_else(|| {
            HostError::BadInput(format!("{name} is required — {} needs it", self.command))
        })
    }

    fn required(&self, name: &str) -> Result<Value, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Err(HostError::BadInput(format!(
                "{name} is required — {} needs it",
                self.command
            ))),
            Some(value) => Ok(value.clone()),
        }
    }

    fn texts(&self, name: &str) -> Result<Vec<String>, HostError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| HostError::BadInput(format!("{name} is a list of text")))
                })
                .collect(),
            Some(_) => Err(HostError::BadInput(format!("{name} is a list of text"))),
        }
    }
}

fn internal(e: serde_json::Error) -> HostError {
    HostError::Internal(e.to_string())
}

impl Host {
    /// Runs a built-in for the caller on `app` (the `--loom` app, for a
    /// built-in of scope loom), after its declarations admit the call.
    pub(crate) async fn run_builtin(
        &self,
        builtin: &Builtin,
        caller: &Caller,
        call: &AgentCall,
        app: Option<&LiveApp>,
    ) -> Result<Answer, HostError> {
        builtin.declarations.admit(builtin.name, caller, call)?;
        let args = Args::read(builtin.name, call.args.clone())?;
        let loom = || {
            app.ok_or_else(|| {
                HostError::BadInput(format!(
                    "{} acts on an app — name it with --loom <space/app>",
                    builtin.name
                ))
            })
        };
        match builtin.name {
            "apps.list" => self.apps_list(caller, &args.required_text("person")?).await,
            "graph.query" => {
                self.graph_query(caller, &loom()?.name, &args.required_text("filter")?)
                    .await
            }
            "graph.apply" => {
                self.write_as(
                    caller,
                    loom()?,
                    args.required("bundle")?,
                    call.expect,
                    "graph.apply",
                )
                .await
            }
            "app.deploy" => {
                let access = args
                    .text("access")?
                    .map(|word| {
                        word.parse::<Access>()
                            .map_err(|e| HostError::BadInput(e.to_string()))
                    })
                    .transpose()?;
                self.app_deploy(caller, &loom()?.name, args.text("title")?, access)
                    .await
            }
            "space.invite" => {
                let role = args
                    .required_text("role")?
                    .parse::<Role>()
                    .map_err(|e| HostError::BadInput(e.to_string()))?;
                self.invite(
                    caller,
                    &args.required_text("space")?,
                    &args.required_text("handle")?,
                    role,
                )
                .await
            }
            "app.files" => {
                self.app_files(caller, &loom()?.name, BTreeMap::new(), args.texts("paths")?)
                    .await
            }
            "token.create" => {
                let person = caller.person().ok_or_else(sign_in_first)?;
                let token = self.create_token(&person.handle).await?;
                Ok(Answer {
                    text: format!(
                        "token.create: a new token for {} (shown once)",
                        person.handle
                    ),
                    data: json!({ "token": token }),
                })
            }
            "doc.comment" => {
                let bundle = json!({
                    "entity": { "eid": "$comment" },
                    "doc": { "body": args.required_text("body")? },
                    "comment": { "target": args.required_text("target")? },
                });
                self.write_as(caller, loom()?, bundle, call.expect, "doc.comment")
                    .await
            }
            other => Err(HostError::Internal(format!(
                "the built-in {other} has no body"
            ))),
        }
    }

    /// Writes a bundle to an app as the caller, under the app's access.
    async fn write_as(
        &self,
        caller: &Caller,
        app: &LiveApp,
        bundle: Value,
        expect: Option<u64>,
        command: &str,
    ) -> Result<Answer, HostError> {
        let reach = self.reach(caller).await?;
        let standing = Standing::of(true, reach.role(&app.space));
        may(app.subject(), standing, Act::Write)?;
        let actor = caller.actor().ok_or_else(sign_in_first)?;
        let applied = self
            .inner
            .store
            .apply(&app.name, &actor, bundle, expect)
            .await?;
        let (how_many, ids) = wrote(&applied);
        Ok(Answer {
            text: format!("{command}: wrote {how_many} in {}{ids}", app.name),
            data: serde_json::to_value(&applied).map_err(internal)?,
        })
    }

    /// `apps.list`: the apps of the caller's spaces, for the person the job
    /// acts for only.
    async fn apps_list(&self, caller: &Caller, person: &str) -> Result<Answer, HostError> {
        let me = caller.person().ok_or_else(sign_in_first)?;
        if person.trim_start_matches('@') != me.handle {
            return Err(HostError::Refused(format!(
                "apps.list lists your own apps, {}'s — not {}'s",
                me.handle,
                crate::names::shown(person)
            )));
        }
        let spaces = self.spaces(caller).await?;
        let mut apps = Vec::new();
        for space in spaces
            .data
            .get("spaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for app in space
                .get("apps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut app = app.clone();
                if let (Some(fields), Some(role)) = (app.as_object_mut(), space.get("role")) {
                    fields.insert("role".into(), role.clone());
                }
                apps.push(app);
            }
        }
        let lines: Vec<String> = apps
            .iter()
            .map(|app| {
                let field = |key: &str| {
                    app.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                format!(
                    "{} — {}, {}, you are {}",
                    field("at"),
                    field("title"),
                    field("access"),
                    field("role")
                )
            })
            .collect();
        let mut text = format!(
            "apps.list: {} in your spaces",
            count(apps.len(), "app", "apps")
        );
        for line in lines {
            text.push('\n');
            text.push_str(&line);
        }
        Ok(Answer {
            text,
            data: json!({ "apps": apps }),
        })
    }

    /// `space.invite`: an owner of the space makes a person a member of it.
    async fn invite(
        &self,
        caller: &Caller,
        space: &str,
        handle: &str,
        role: Role,
    ) -> Result<Answer, HostError> {
        let reach = self.reach(caller).await?;
        may(
            Subject::space(space),
            Standing::of(true, reach.role(space)),
            Act::Invite,
        )?;
        self.add_member(space, handle, role).await?;
        Ok(Answer {
            text: format!(
                "space.invite: {handle} is now {} of {space}",
                role.with_article()
            ),
            data: json!({ "space": space, "handle": handle, "role": role.as_str() }),
        })
    }
}

/// The built-in of this name.
pub(crate) fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_schema_object_and_a_body() {
        for builtin in BUILTINS {
            let row = builtin.row().row;
            assert_eq!(row["inputSchema"]["type"], "object", "{}", builtin.name);
            assert!(row["outputs"].is_object(), "{}", builtin.name);
        }
    }
}
