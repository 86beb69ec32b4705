//! A host outcome (`{ ok, id, code, mayHaveLanded, completed, body, ifc,
//! version, message, actor? }`) and the small summary the model reads of it.

use serde_json::{Map, Value, json};

/// An identifier's length: the longest text kept in a summary.
pub const SUMMARY_TEXT_CHARS: usize = 64;
/// The most `completed` operation ids a summary keeps.
pub const SUMMARY_COMPLETED_IDS: usize = 32;
/// The longest string kept inside an admitted answer's `entry`.
pub const ENTRY_STRING_CHARS: usize = 2048;

/// The host's answer to one `command run`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOutcome {
    /// The command ran and answered: the host's literal `ok: true`; false
    /// when it was refused or failed (`code` says which).
    pub ok: bool,
    /// The host's id of this run (shed's: 32 hex digits); empty where the
    /// host gave none.
    pub id: String,
    /// What the run came to, as the host's word (`ok`, `bad-args`,
    /// `forbidden`, `refused`, …); empty where the host gave none.
    pub code: String,
    /// The host's `mayHaveLanded`, as given (shed's is true when a write was
    /// committed, or may have been); `null` where absent.
    pub may_have_landed: Value,
    /// The operations the run committed (shed's: the eids a write wrote),
    /// each as text; empty where absent.
    pub completed: Vec<String>,
    /// The command's answer, its structured data; `null` where absent (as
    /// for a refusal).
    pub body: Value,
    /// The answer's own label as the host wrote it, read by
    /// [`crate::labels::Label::from_json`] when measured; `None` where absent
    /// or `null`, and the run's context label stands in.
    pub ifc: Option<Value>,
    /// The app's data version after the call, as given; `null` where absent.
    pub version: Value,
    /// The host's text: its sentence on the first line, then its data as
    /// JSON, or the sentence of a refusal; empty where absent.
    pub message: String,
    /// Who the host ran the command as (`agent:job-3`), where it says.
    pub actor: Option<String>,
}

/// How much of a summary a result keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryForm {
    /// A call alone: `completed` cut to 32 ids.
    Full,
    /// A batch's call: `completed` replaced by its count.
    Compact,
    /// A batch's call past the bound: only `ok`, `code`, `bodyBytes`.
    Minimal,
}

impl HostOutcome {
    /// Reads an outcome leniently: a missing field reads as empty.
    pub fn from_json(value: &Value) -> HostOutcome {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        HostOutcome {
            ok: value.get("ok") == Some(&Value::Bool(true)),
            id: text("id"),
            code: text("code"),
            may_have_landed: value.get("mayHaveLanded").cloned().unwrap_or(Value::Null),
            completed: value
                .get("completed")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|item| match item {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            body: value.get("body").cloned().unwrap_or(Value::Null),
            ifc: value.get("ifc").filter(|v| !v.is_null()).cloned(),
            version: value.get("version").cloned().unwrap_or(Value::Null),
            message: text("message"),
            actor: value
                .get("actor")
                .and_then(Value::as_str)
                .map(str::to_string),
        }
    }

    /// A refusal by the broker (`forbidden`) or the command layer (`refused`).
    pub fn not_granted(&self) -> bool {
        matches!(self.code.as_str(), "forbidden" | "refused")
    }

    /// The summary's `code`: `not_granted` for a refusal, else the host's.
    pub fn model_code(&self) -> String {
        if self.not_granted() {
            "not_granted".to_string()
        } else {
            cut(&self.code, SUMMARY_TEXT_CHARS)
        }
    }

    /// The size of `body` as compact JSON, in bytes: the summary's
    /// `bodyBytes`.
    fn body_bytes(&self) -> usize {
        serde_json::to_vec(&self.body).map(|b| b.len()).unwrap_or(0)
    }

    /// The `outcome` object of a result.
    pub fn summary(&self, form: SummaryForm) -> Value {
        let mut out = Map::new();
        out.insert("ok".into(), json!(self.ok));
        if form != SummaryForm::Minimal {
            out.insert("id".into(), json!(cut(&self.id, SUMMARY_TEXT_CHARS)));
        }
        out.insert("code".into(), json!(self.model_code()));
        if form != SummaryForm::Minimal && self.not_granted() {
            out.insert(
                "hostCode".into(),
                json!(cut(&self.code, SUMMARY_TEXT_CHARS)),
            );
        }
        match form {
            SummaryForm::Full => {
                out.insert("mayHaveLanded".into(), self.may_have_landed.clone());
                let ids: Vec<String> = self
                    .completed
                    .iter()
                    .take(SUMMARY_COMPLETED_IDS)
                    .map(|id| cut(id, SUMMARY_TEXT_CHARS))
                    .collect();
                out.insert("completed".into(), json!(ids));
            }
            SummaryForm::Compact => {
                out.insert("mayHaveLanded".into(), self.may_have_landed.clone());
                out.insert("completedOmitted".into(), json!(self.completed.len()));
            }
            SummaryForm::Minimal => {}
        }
        out.insert("bodyBytes".into(), json!(self.body_bytes()));
        if form == SummaryForm::Minimal {
            out.insert("summaryOmitted".into(), Value::Bool(true));
        }
        Value::Object(out)
    }

    /// The `outcome` of an answer the run's observation ceiling withheld: the
    /// call was delivered, and nothing else. Every other field — `ok`,
    /// `code`, `id`, `bodyBytes`, `completed`, `mayHaveLanded`, a version or
    /// a message — can differ with the answer's content (comparing sizes
    /// across prefix searches spelled out a withheld word), so none is kept;
    /// whether a write landed is therefore unknown to the model.
    pub fn withheld_summary() -> Value {
        json!({"delivered": true, "landed": "unknown"})
    }

    /// The admitted answer as the model sees it, its strings bounded: the
    /// host's data as `body`, beside the first line of the host's text —
    /// the sentence; the lines after it are that data again, as JSON.
    pub fn admitted_entry(&self) -> Value {
        let mut out = Map::new();
        out.insert("status".into(), json!("admitted"));
        out.insert("body".into(), bound_strings(&self.body, ENTRY_STRING_CHARS));
        let sentence = self.message.lines().next().unwrap_or_default();
        if !sentence.is_empty() {
            out.insert("message".into(), json!(cut(sentence, ENTRY_STRING_CHARS)));
        }
        self.with_version(out)
    }

    /// The admitted answer as the host's own text — its sentence, its data
    /// as JSON with only the first rows, each whole, where the data passed
    /// the host's bound, and a line saying how many more and how to read
    /// them: what `shed command run` prints. Shown in place of an entry
    /// whose data passes the run's bound; none when the host's text is its
    /// sentence alone.
    pub fn said_entry(&self) -> Option<Value> {
        // A text of one line is the sentence alone: nothing to show.
        self.message.lines().nth(1)?;
        let mut out = Map::new();
        out.insert("status".into(), json!("admitted"));
        out.insert("text".into(), json!(self.message));
        Some(self.with_version(out))
    }

    fn with_version(&self, mut out: Map<String, Value>) -> Value {
        if !self.version.is_null() {
            out.insert(
                "version".into(),
                bound_strings(&self.version, SUMMARY_TEXT_CHARS),
            );
        }
        Value::Object(out)
    }
}

/// Cuts a text to `max` characters, marking the cut with `…`.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Cuts every string inside `value` (keys included) to `max` characters.
pub fn bound_strings(value: &Value, max: usize) -> Value {
    match value {
        Value::String(s) => Value::String(cut(s, max)),
        Value::Array(list) => Value::Array(list.iter().map(|v| bound_strings(v, max)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (cut(k, max), bound_strings(v, max)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_cut_texts_and_completed() {
        let completed: Vec<String> = (0..40).map(|i| format!("op-{i}")).collect();
        let outcome = HostOutcome::from_json(&json!({
            "ok": true, "id": "i".repeat(100), "code": "ok", "mayHaveLanded": true,
            "completed": completed, "body": {"a": 1}, "version": 4
        }));
        let full = outcome.summary(SummaryForm::Full);
        assert_eq!(full["id"].as_str().unwrap().chars().count(), 64);
        assert_eq!(full["completed"].as_array().unwrap().len(), 32);
        assert_eq!(full["bodyBytes"], 7);
        let compact = outcome.summary(SummaryForm::Compact);
        assert_eq!(compact["completedOmitted"], 40);
        assert!(compact.get("completed").is_none());
        assert_eq!(
            outcome.summary(SummaryForm::Minimal),
            json!({"ok": true, "code": "ok", "bodyBytes": 7, "summaryOmitted": true})
        );
    }

    #[test]
    fn refusals_read_not_granted_with_the_host_code() {
        for code in ["forbidden", "refused"] {
            let s = HostOutcome::from_json(&json!({"ok": false, "code": code}))
                .summary(SummaryForm::Full);
            assert_eq!(s["code"], "not_granted");
            assert_eq!(s["hostCode"], code);
        }
    }
}
