//! How app data is shown in place — on an entity's page, an app's data
//! page, `shed entity` —: a value cut to [`SHOWN_VALUE_CHARS`] characters,
//! saying its whole length, so a page or a line stays small whatever an
//! app holds; the whole value is read one at a time
//! (`EntityView::whole` of the `entity` module).

/// The most characters of one value an entity's page, an app's data page
/// or `shed entity` shows in place: a line or two of text; past it the
/// value is cut, says its length, and is shown whole on its own
/// (`EntityView::whole` of the `entity` module).
pub const SHOWN_VALUE_CHARS: usize = 300;

/// A text as shown in place: its first [`SHOWN_VALUE_CHARS`] characters,
/// and its whole length in characters when it is longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut<'a> {
    /// What is shown: the text, or its first characters.
    pub shown: &'a str,
    /// The whole text's length in characters, when it was cut.
    pub chars: Option<usize>,
}

/// `text` cut to [`SHOWN_VALUE_CHARS`] characters.
pub fn cut(text: &str) -> Cut<'_> {
    match text.char_indices().nth(SHOWN_VALUE_CHARS) {
        None => Cut {
            shown: text,
            chars: None,
        },
        Some((at, _)) => Cut {
            shown: &text[..at],
            chars: Some(text.chars().count()),
        },
    }
}

impl std::fmt::Display for Cut<'_> {
    /// `aaa… (16384 chars)` when cut, else the text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.chars {
            None => f.write_str(self.shown),
            Some(chars) => write!(f, "{}… ({chars} chars)", self.shown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_and_says_its_length() {
        assert_eq!(cut("short").to_string(), "short");
        let long = "é".repeat(SHOWN_VALUE_CHARS + 5);
        let shown = cut(&long);
        assert_eq!(shown.shown.chars().count(), SHOWN_VALUE_CHARS);
        assert_eq!(shown.chars, Some(SHOWN_VALUE_CHARS + 5));
        assert!(
            shown
                .to_string()
                .ends_with(&format!("… ({} chars)", SHOWN_VALUE_CHARS + 5))
        );
        let exact = "a".repeat(SHOWN_VALUE_CHARS);
        assert_eq!(cut(&exact).chars, None);
    }
}
