//! What the database keeps of a secret — a token, a sign-in link, a hop, a
//! session, a view key, a job's secret: its sha256 in hex, never the secret.
//! The host hashes every secret it makes with [`secret_hash`], and the
//! migration that stopped keeping job secrets whole hashes the ones kept
//! before with the same function. A kept hash is compared with a sent one
//! in constant time ([`same_hash`]), on every backend.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A secret's sha256, in lowercase hex: what is kept of it.
pub fn secret_hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Whether a kept hash is that of the secret a browser sent (none is never
/// anything), compared in constant time.
pub(crate) fn same_hash(kept: Option<&str>, sent: Option<&str>) -> bool {
    match (kept, sent) {
        (Some(kept), Some(sent)) => bool::from(kept.as_bytes().ct_eq(sent.as_bytes())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_secret_is_kept_as_its_sha256_in_hex() {
        assert_eq!(
            super::secret_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
