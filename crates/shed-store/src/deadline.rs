//! How long a read may run, on every backend, and the sentence a read
//! stopped at that deadline answers.

use std::time::Duration;

use crate::error::StoreError;

/// The longest a read runs before it is stopped and answered with a
/// sentence: thousands of times a listing's cost (well under a millisecond at
/// 100,000 entities), and short enough for a person to wait for the answer.
pub const READ_DEADLINE: Duration = Duration::from_secs(2);

/// The sentence a read stopped at [`READ_DEADLINE`] answers, on every backend.
pub(crate) fn too_long() -> StoreError {
    StoreError::refused(format!(
        "this query took longer than {} s and was stopped — narrow it: compare a column (= < >) rather than search with ~, or search a shorter piece of text",
        READ_DEADLINE.as_secs()
    ))
}
