//! The platform's secrets — tokens, sign-in links, hops, sessions, view
//! keys, jobs — are 128 random bits from the thread's CSPRNG, shown once; only
//! their sha256 is kept, so the database never holds one a reader could use.

use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh secret: 32 hex digits.
pub(crate) fn secret() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// What is kept of a secret: its sha256, in hex (the store's
/// [`shed_store::secret_hash`], which its migrations use too).
pub(crate) fn hash(secret: &str) -> String {
    shed_store::secret_hash(secret)
}

/// Now, in Unix seconds: the clock secrets expire by.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
