//! The shared wording of answers: counts ("1 row", "12 rows"), what a write
//! wrote, and lists bounded so a sentence stays a sentence.

use shed_store::Applied;

/// A person as a sentence names them, once: `Ada (@ada)`, or the handle
/// alone when the name is the handle (`@you`, not `You (@you)`).
pub fn person_named(person: &shed_store::Person) -> String {
    if person.name.eq_ignore_ascii_case(&person.handle) {
        format!("@{}", person.handle)
    } else {
        format!("{} (@{})", person.name, person.handle)
    }
}

/// What a space with no app says, in `spaces` and the tour.
pub(crate) const NO_APPS_YET: &str = "no apps yet — app_deploy makes one";

/// How many names a sentence lists before it says "and N more".
const LISTED: usize = 12;

/// Whether a character of a name a caller chose may be shown as it is, on
/// a page or a terminal: not a control character, and not one of Unicode's
/// bidirectional formatting characters (which reorder the text around
/// them, so what a person reads is not what the name holds).
pub(crate) fn is_plain(c: char) -> bool {
    !c.is_control()
        && !matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `1 entity`, `2 entities`; `1 row`, `12 rows`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// (`1 entity`, `: $run=<eid>, <eid>`): how many were written, and after a
/// colon each `$name` with the eid it became, then the eid of each entity
/// written by name (the second is empty when there is nothing to name).
pub(crate) fn wrote(applied: &Applied) -> (String, String) {
    let mut ids: Vec<String> = applied
        .aliases
        .iter()
        .map(|(name, eid)| format!("{name}={eid}"))
        .collect();
    ids.extend(
        applied
            .entities
            .iter()
            .filter(|eid| !applied.aliases.values().any(|minted| minted == *eid))
            .cloned(),
    );
    let ids = if ids.is_empty() {
        String::new()
    } else {
        format!(": {}", ids.join(", "))
    };
    (count(applied.entities.len(), "entity", "entities"), ids)
}

/// `a, b, c` — at most [`LISTED`] of them, then `and N more`.
pub(crate) fn bounded_list(items: &[String]) -> String {
    if items.len() <= LISTED {
        return items.join(", ");
    }
    let (shown, rest) = items.split_at(LISTED);
    format!("{} and {} more", shown.join(", "), rest.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_names_the_aliases_first_and_the_patched_entities_after() {
        let applied = Applied {
            entities: vec!["a1".into(), "b2".into()],
            aliases: [("$run".to_string(), "a1".to_string())].into(),
            version: 3,
        };
        assert_eq!(
            wrote(&applied),
            ("2 entities".into(), ": $run=a1, b2".into())
        );
    }

    #[test]
    fn long_lists_are_cut() {
        let items: Vec<String> = (0..15).map(|i| i.to_string()).collect();
        assert!(bounded_list(&items).ends_with("11 and 3 more"));
    }
}
