//! The wire between `shed command …` and the broker: one JSON request per
//! connection, then one JSON answer. A listing answers `{ "commands": […] }`,
//! a run answers an [`Outcome`](crate::Outcome), and a refused listing an
//! outcome too.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most bytes a request may hold (a call's args are far smaller).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// A request to the broker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    /// `shed command list`.
    List {
        /// The job's secret, whose commands are asked for.
        #[serde(default)]
        job: Option<String>,
    },
    /// `shed command run`.
    Run(Box<RunRequest>),
}

/// `shed command run <command> --args-json - [--loom] [--expect] [--read-only]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRequest {
    /// The job's secret, the run is made under.
    #[serde(default)]
    pub job: Option<String>,
    /// The command: `<space>/<app>.<command>` or a built-in.
    pub command: String,
    /// The command's arguments, a JSON object.
    #[serde(default)]
    pub args: Value,
    /// The app a built-in acts on, `<space>/<app>`.
    #[serde(default)]
    pub loom: Option<String>,
    /// Refused as a conflict unless the app's data version is this.
    #[serde(default)]
    pub expect: Option<u64>,
    /// `--read-only`: run only if the job's read-only grant covers the command.
    #[serde(default)]
    pub read_only: bool,
    /// Whatever actor a request names. The broker never acts as it: every run
    /// is the job's agent for the job's person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Value>,
}

/// Reads a request, or says what is wrong with it.
pub fn read_request(bytes: &[u8]) -> Result<Request, String> {
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "the request holds {} bytes and the broker reads at most {MAX_REQUEST_BYTES} — send smaller args",
            bytes.len()
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "the broker could not read the request ({e}) — send one JSON object with op list or run"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_request_reads_back_as_written() {
        let request = Request::Run(Box::new(RunRequest {
            job: Some("j".into()),
            command: "demo/runs.log_run".into(),
            args: json!({"who": "Ada"}),
            loom: None,
            expect: Some(3),
            read_only: true,
            actor: None,
        }));
        let bytes = serde_json::to_vec(&request).unwrap();
        assert_eq!(read_request(&bytes).unwrap(), request);
        assert_eq!(
            read_request(br#"{"op":"list"}"#).unwrap(),
            Request::List { job: None }
        );
        assert!(read_request(br#"{"op":"drop"}"#).is_err());
        assert!(read_request(b"").is_err());
    }

    proptest::proptest! {
        #[test]
        fn reading_any_bytes_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = read_request(&bytes);
        }

        #[test]
        fn reading_json_shaped_text_never_panics(text in r#"\{"op":"(run|list)"(,"[a-zA-Z]{1,8}":("[^"]{0,8}"|[0-9]{1,20}|true|null|\{\}))*\}"#) {
            let _ = read_request(text.as_bytes());
        }
    }
}
