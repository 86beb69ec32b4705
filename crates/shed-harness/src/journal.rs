//! The run's record of what the model observed: the context label (the join
//! of every observation so far), the `document` referents held for admitted
//! answers, and the observations themselves.

use serde_json::{Value, json};

use crate::labels::{Integrity, Label, Readers};
use crate::policy::TaskSlot;

/// Where a held answer came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The command that answered, as the call named it.
    pub command: String,
    /// Who the host ran it as (`agent:job-3`), or `agent` where the host did
    /// not say; never the run's secret job id.
    pub actor: String,
    /// The app the call named (`loomId`); `None` where it named none.
    pub loom: Option<String>,
    /// The app data version the host's answer reported; `null` where it gave
    /// none.
    pub version: Value,
}

/// The run's record.
#[derive(Clone, Debug)]
pub struct Journal {
    context: Label,
    referents: Vec<Value>,
    observations: Vec<Value>,
}

impl Journal {
    /// A task the person typed starts trusted; any other binding starts
    /// untrusted. Either is readable by anyone until the run observes data.
    pub fn new(slot: TaskSlot) -> Journal {
        let integrity = match slot {
            TaskSlot::DirectCommand => Integrity::Trusted,
            _ => Integrity::Untrusted,
        };
        Journal {
            context: Label {
                readers: Readers::Public,
                integrity,
            },
            referents: Vec::new(),
            observations: Vec::new(),
        }
    }

    /// The label of what the model has seen: the label of its next input.
    pub fn context_label(&self) -> Label {
        self.context.clone()
    }

    /// Holds an admitted answer as a `document` referent; returns its handle.
    pub fn hold(
        &mut self,
        output_id: &str,
        label: &Label,
        provenance: &Provenance,
        entry: &Value,
    ) -> String {
        let handle = format!("doc-{}", self.referents.len() + 1);
        self.referents.push(json!({
            "handle": handle,
            "kind": "document",
            "labelSource": "command",
            "label": label.to_json(),
            "outputId": output_id,
            "provenance": {
                "command": provenance.command,
                "actor": provenance.actor,
                "loom": provenance.loom,
                "version": provenance.version,
            },
            "content": entry,
        }));
        handle
    }

    /// Records one model-context observation: over `channel` — `output`, a
    /// tool's result, or `tools`, the listing the tool definitions carried
    /// before the model listed — of what `tool` shows.
    pub fn observe(&mut self, channel: &str, tool: &str, output_id: &str, label: &Label) {
        self.context = self.context.join(label);
        self.observations.push(json!({
            "channel": channel,
            "tool": tool,
            "outputId": output_id,
            "label": label.to_json(),
        }));
    }

    /// The record as a transcript holds it: `contextLabel`, `referents` and
    /// `observations`.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "contextLabel": self.context.to_json(),
            "referents": self.referents,
            "observations": self.observations,
        })
    }
}
