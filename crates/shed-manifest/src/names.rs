//! The names a manifest may use — commands, arguments, components, columns —
//! and how a name too long to repeat is shown in a sentence.

/// What a name may be, said the way a refusal says it.
pub(crate) const NAME_RULE: &str =
    "use a-z, 0-9 and _, starting with a letter, at most 40 characters";

/// `[a-z][a-z0-9_]{0,39}`: the shape of every name a manifest declares.
pub(crate) fn is_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() <= 40
        && bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

/// A name as a sentence repeats it: cut at 60 characters, so a refusal of a
/// megabyte-long key stays a sentence.
pub(crate) fn shown(name: &str) -> String {
    const LONGEST: usize = 60;
    match name.char_indices().nth(LONGEST) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        for good in ["a", "log_run", "x9", &"a".repeat(40)] {
            assert!(is_name(good), "{good}");
        }
        for bad in [
            "",
            "9a",
            "_a",
            "Log",
            "log-run",
            "log run",
            "é",
            &"a".repeat(41),
        ] {
            assert!(!is_name(bad), "{bad}");
        }
    }

    #[test]
    fn long_names_are_cut() {
        assert_eq!(shown("jogg"), "jogg");
        let long = "é".repeat(100);
        assert_eq!(shown(&long).chars().count(), 61);
    }
}
