//! View keys (the shape: `src/view_keys.rs`), written once for both
//! backends ([`Records`]): kept as their sha256 until their expiry, the
//! expired forgotten as a new one is kept.

use super::Statement;
use crate::txn::{Records, Txn, args};
use crate::{StoreError, ViewKey};

impl<B: Records> super::ViewKeys for B {
    async fn add_view_key(
        &self,
        key: ViewKey<'_>,
        expires_at: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let key = [key.hash, key.person, key.space, key.slug].map(str::to_string);
        self.write_records(async move |t| {
            let [hash, person, space, slug] = &key;
            t.execute("DELETE FROM view_keys WHERE expires_at <= $1", args![now])
                .await?;
            t.execute(
                "INSERT INTO view_keys(hash, person, space, slug, expires_at)
                 VALUES($1, $2, $3, $4, $5)",
                args![hash, person, space, slug, expires_at],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn view_key_person(
        &self,
        hash: &str,
        space: &str,
        slug: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        self.read_optional(
            "SELECT person FROM view_keys
             WHERE hash = $1 AND space = $2 AND slug = $3 AND expires_at > $4",
            args![hash, space, slug, now],
        )
        .await
    }
}
