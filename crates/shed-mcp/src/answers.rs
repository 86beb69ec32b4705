//! Turns what the host answered into a tool result: the text the host says
//! a model reads (its lines, then its data as compact JSON, bounded) as
//! `content`, its data whole as `structuredContent`; a refusal as an
//! `isError` result whose text is the host's sentence.

use rmcp::model::{CallToolResult, ContentBlock};
use shed_host::{Answer, HostError};

use crate::args::ArgumentError;

/// The tool result of an answer.
pub fn answered(answer: Answer) -> CallToolResult {
    let said = answer.said();
    let mut result = CallToolResult::success(vec![ContentBlock::text(said.text)]);
    result.structured_content = Some(said.json);
    result
}

/// The tool result of a refusal: the sentence, marked as an error.
pub fn refused(error: &HostError) -> CallToolResult {
    if let HostError::Internal(detail) = error {
        tracing::error!(%detail, "a tool call failed inside the host");
    }
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

/// The tool result of arguments the door could not read.
pub fn unreadable(error: &ArgumentError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

/// Adds a line at the end of a result's content.
pub fn with_line(mut result: CallToolResult, line: &str) -> CallToolResult {
    result.content.push(ContentBlock::text(line));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shed_host::answer::{Data, Listing};

    #[test]
    fn an_answer_is_text_and_structured_content() {
        let result = answered(Answer {
            text: "leaderboard: 1 rows in demo/runs".into(),
            data: Data::Rows(Listing {
                rows: Vec::new(),
                next: None,
                authors: Vec::new(),
            }),
        });
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(
            wire["content"][0]["text"],
            "leaderboard: 1 rows in demo/runs\n{\"rows\":[]}"
        );
        assert_eq!(wire["structuredContent"], json!({"rows": []}));
        assert_eq!(wire.get("isError"), Some(&json!(false)));
    }

    #[test]
    fn a_refusal_is_an_error_result_with_the_sentence() {
        let result = refused(&HostError::Refused(
            "you can read this app but not change it — its owner can make you an editor".into(),
        ));
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(
            wire["content"][0]["text"],
            "you can read this app but not change it — its owner can make you an editor"
        );
    }
}
