//! The host's one error type: every refusal is a sentence a door shows as it is.

/// What went wrong, as the sentence a person (or their agent) reads.
///
/// The variant says which kind of "no" it is, so a door can map it to its own
/// protocol's codes; the text is the same whichever door says it.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The call needs a person and has none: "sign in first — …how…".
    #[error("{0}")]
    SignIn(String),
    /// The caller is known and may not do this (e.g. the viewer sentence).
    #[error("{0}")]
    Refused(String),
    /// Bad arguments, a bad filter line, a bad manifest: the sentence naming it.
    #[error("{0}")]
    BadInput(String),
    /// No such command, app, person, space or resource.
    #[error("{0}")]
    NotFound(String),
    /// A `was` / expected version did not match.
    #[error("{0}")]
    Conflict(String),
    /// An undo refused because an entity changed since (a conflict too):
    /// the sentence, and the later write's moment, for a page to show its
    /// exact time on hover.
    #[error("{}", .0.sentence)]
    ChangedSince(Box<ChangedSinceRefusal>),
    /// The caller asks too much at once; asked again later, it may be
    /// answered (HTTP's 429).
    #[error("{0}")]
    Busy(String),
    /// Something broke that is not the caller's doing.
    #[error("the host failed: {0}")]
    Internal(String),
    /// Not a refusal: the call was kept for its person's approval, and
    /// nothing ran yet; the sentence says what waits and where the person
    /// approves it (the MCP door answers it as a result, not an error).
    #[error("{}", .0.text)]
    Waiting(crate::answer::Answer<crate::answer::ApprovalState>),
}

/// An undo's refusal because an entity changed since: `cannot undo
/// jeff/runs@12: "Run by Ada" changed since — @bob wrote it 2 minutes ago
/// (jeff/runs@14); undo that first`.
#[derive(Debug)]
pub struct ChangedSinceRefusal {
    /// The whole sentence.
    pub sentence: String,
    /// How the sentence says when the later write was ("2 minutes ago").
    pub when: String,
    /// When it was (RFC 3339).
    pub at: String,
}

impl From<shed_store::StoreError> for HostError {
    fn from(error: shed_store::StoreError) -> Self {
        use shed_store::StoreError;
        match error {
            StoreError::Refused(sentence) => HostError::BadInput(sentence),
            StoreError::NotFound(sentence) => HostError::NotFound(sentence),
            StoreError::Conflict(sentence) => HostError::Conflict(sentence),
            StoreError::ChangedSince(changed) => HostError::Conflict(changed.to_string()),
            StoreError::Internal(why) => HostError::Internal(why),
            StoreError::Database(detail) => {
                tracing::error!(%detail, "the database failed");
                HostError::Internal(DATABASE_FAILED.to_string())
            }
        }
    }
}

/// What a caller reads when the database failed: its own words go to the
/// server's log, never into an answer.
pub(crate) const DATABASE_FAILED: &str =
    "the database could not do this — nothing was changed; the server's log says why";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_s_own_words_never_reach_the_caller() {
        let said = "column name \"xmin\" conflicts with a system column name";
        let error = HostError::from(shed_store::StoreError::Database(said.into()));
        assert_eq!(
            error.to_string(),
            format!("the host failed: {DATABASE_FAILED}")
        );
    }
}
