//! A built-in's row: what the protocol lists of it, and the declarations
//! (who may run it, and from where) that the command layer enforces on
//! every call.

use serde_json::{Map, Value, json};

use crate::access::sign_in_first;
use crate::agents::command::{AgentCall, CommandRow, Effect, Scope, into_map};
use crate::{Caller, HostError};

/// What a built-in's type says of itself.
pub(super) struct BuiltinRow {
    pub(super) name: &'static str,
    pub(super) title: &'static str,
    pub(super) description: &'static str,
    pub(super) effect: Effect,
    pub(super) scope: Scope,
    pub(super) input: fn() -> Value,
    pub(super) outputs: fn() -> Value,
    pub(super) declarations: Declarations,
    /// The inputs the host fills with the job's person, whatever a call
    /// says (listed as `x-source: "job.person"`).
    pub(super) job_person: &'static [&'static str],
}

impl BuiltinRow {
    /// The row as the protocol lists it.
    pub(super) fn command_row(&self) -> CommandRow {
        let mut input = (self.input)();
        for name in self.job_person {
            if let Some(schema) = input
                .get_mut("properties")
                .and_then(|properties| properties.get_mut(*name))
                .and_then(Value::as_object_mut)
            {
                schema.insert("x-source".into(), json!("job.person"));
            }
        }
        let mut row = into_map(json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input,
            "outputs": (self.outputs)(),
            "effect": self.effect.as_str(),
            "scope": self.scope.as_str(),
        }));
        self.declarations.write_into(&mut row);
        CommandRow {
            name: self.name.to_string(),
            effect: self.effect,
            job_person: self.job_person,
            row,
        }
    }
}

/// The outputs of a built-in that writes a bundle (`graph.apply`,
/// `doc.comment`).
pub(super) fn applied_outputs() -> Value {
    json!({ "entities": { "type": "array" }, "aliases": { "type": "object" }, "version": { "type": "integer" } })
}

/// The declarations a row carries about who may run it, and from where.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Declarations {
    /// A developer's tool (deploys); hidden from agents by harnesses.
    pub(super) developer: bool,
    /// The kinds of caller that run it (`person`, `agent`); any when None.
    pub(super) actors: Option<&'static [&'static str]>,
    /// Origins a call may not come from.
    pub(super) origins_refused: &'static [&'static str],
    /// `pattern`: a piece's verb, run through the piece that holds it.
    pub(super) origin: Option<&'static str>,
    /// Runs only over the person's consent grant, for this purpose.
    pub(super) grant: Option<&'static str>,
}

impl Declarations {
    pub(super) const NONE: Declarations = Declarations {
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
    pub(super) fn admit(
        &self,
        name: &str,
        caller: &Caller,
        call: &AgentCall,
    ) -> Result<(), HostError> {
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
