//! The shapes of names the store accepts: eids, aliases, handles, component
//! and column names, `$name`s, app names. Only names checked here ever reach
//! an SQL identifier.

/// A new person with a fresh eid, once the handle and the name are checked
/// (every backend adds people through it); the name trimmed.
pub(crate) fn new_person(handle: &str, name: &str) -> Result<crate::Person, crate::StoreError> {
    if !is_handle(handle) {
        return Err(crate::StoreError::refused(format!(
            "{handle} is not a handle — use a-z, 0-9 and -, starting with a letter, up to 40 characters"
        )));
    }
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(crate::StoreError::refused(format!(
            "{handle} needs a name of 1 to 100 characters"
        )));
    }
    Ok(crate::Person {
        eid: new_eid(),
        handle: handle.to_string(),
        name: name.to_string(),
    })
}

/// The refusal of a handle somebody has.
pub(crate) fn handle_taken(handle: &str) -> crate::StoreError {
    crate::StoreError::refused(format!("the handle {handle} is taken — choose another"))
}

/// A new random eid: 32 lowercase hex digits, 128 random bits.
pub(crate) fn new_eid() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// 32 lowercase hex digits.
pub(crate) fn is_eid(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` is 1 to `longest` bytes, the first of them `first` and every
/// one `any`: the shape of aliases, handles, words and `$name`s.
fn shaped(s: &str, longest: usize, first: fn(u8) -> bool, any: fn(u8) -> bool) -> bool {
    s.as_bytes().first().is_some_and(|b| first(*b)) && s.len() <= longest && s.bytes().all(any)
}

/// `[a-z0-9-]`: a byte of a handle or an alias.
fn handle_byte(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'
}

/// `[a-z0-9][a-z0-9-]{0,63}` and not shaped like an eid.
pub(crate) fn is_alias(s: &str) -> bool {
    let first = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    shaped(s, 64, first, handle_byte) && !is_eid(s)
}

/// A handle: `[a-z][a-z0-9-]{0,39}`.
pub(crate) fn is_handle(s: &str) -> bool {
    shaped(s, 40, |c| c.is_ascii_lowercase(), handle_byte)
}

/// A component, column or edge name: `[a-z][a-z0-9_]{0,39}`.
pub(crate) fn is_word(s: &str) -> bool {
    let any = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_';
    shaped(s, 40, |c| c.is_ascii_lowercase(), any)
}

/// A `$name` of an apply: `$` then 1–64 of `[A-Za-z0-9_-]`.
pub(crate) fn is_dollar_name(s: &str) -> bool {
    let any = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    s.strip_prefix('$')
        .is_some_and(|rest| shaped(rest, 64, any, any))
}

/// An app name: `<space>/<slug>`, each like a handle.
pub(crate) fn is_app_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((space, slug)) => is_handle(space) && is_handle(slug),
        None => false,
    }
}

/// Words the wire or the store uses itself, which no component may take.
pub(crate) const RESERVED: &[&str] = &[
    "entity",
    "edges",
    "tombstone",
    "was",
    "created",
    "updated",
    "kind",
    "eid",
    "num",
    "version",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(is_eid(&new_eid()));
        assert!(!is_eid("4F3C0000000000000000000000000000"));
        assert!(is_alias("tuesday"));
        assert!(is_alias("9-k"));
        assert!(!is_alias("-x"));
        assert!(!is_alias(&new_eid()));
        assert!(is_handle("ada-l"));
        assert!(!is_handle("1ada"));
        assert!(is_word("miles_2"));
        assert!(!is_word("Miles"));
        assert!(is_dollar_name("$run"));
        assert!(!is_dollar_name("$"));
        assert!(is_app_name("jeff/runs"));
        assert!(!is_app_name("jeff"));
    }
}
