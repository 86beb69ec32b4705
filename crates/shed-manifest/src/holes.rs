//! `{{arg}}` holes in a template string: finding them, and telling a string
//! that is nothing but one hole (which keeps the argument's type) from a hole
//! inside a sentence (which is spliced in as text).

/// One piece of a template string: literal text, or a hole naming an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Hole(&'a str),
}

/// The pieces of `template`, in order. A hole is `{{` up to the next `}}`, its
/// name trimmed of spaces; a `{{` with no `}}` after it is plain text.
pub(crate) fn pieces(template: &str) -> Pieces<'_> {
    Pieces { rest: template }
}

/// Iterator over the [`Piece`]s of a template string.
pub(crate) struct Pieces<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        match find_hole(self.rest) {
            Some((0, name, end)) => {
                self.rest = &self.rest[end..];
                Some(Piece::Hole(name))
            }
            Some((start, _, _)) => {
                let text = &self.rest[..start];
                self.rest = &self.rest[start..];
                Some(Piece::Text(text))
            }
            None => {
                let text = self.rest;
                self.rest = "";
                Some(Piece::Text(text))
            }
        }
    }
}

/// The first hole in `s`: where it starts, its name, and where it ends.
fn find_hole(s: &str) -> Option<(usize, &str, usize)> {
    let start = find_pair(s, b'{', 0)?;
    let inner = start + 2;
    let close = find_pair(s, b'}', inner)?;
    Some((start, s.get(inner..close)?.trim(), close + 2))
}

/// Where `cc` (a doubled ASCII byte) first occurs in `s` at or after `from`.
/// A byte scan: far cheaper than a substring search for two bytes.
fn find_pair(s: &str, c: u8, from: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut at = from;
    loop {
        at += bytes.get(at..)?.iter().position(|b| *b == c)?;
        if bytes.get(at + 1) == Some(&c) {
            return Some(at);
        }
        at += 1;
    }
}

/// The argument a string names when the string is nothing but one hole.
pub(crate) fn whole_hole(template: &str) -> Option<&str> {
    let mut all = pieces(template);
    match (all.next(), all.next()) {
        (Some(Piece::Hole(name)), None) => Some(name),
        _ => None,
    }
}

/// Whether a string holds any hole at all.
pub(crate) fn has_hole(template: &str) -> bool {
    find_hole(template).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_splits_into_text_and_holes() {
        let got: Vec<_> = pieces("Run by {{who}}, {{ miles }} miles").collect();
        assert_eq!(
            got,
            [
                Piece::Text("Run by "),
                Piece::Hole("who"),
                Piece::Text(", "),
                Piece::Hole("miles"),
                Piece::Text(" miles"),
            ]
        );
    }

    #[test]
    fn an_unclosed_hole_is_text() {
        let got: Vec<_> = pieces("a {{who").collect();
        assert_eq!(got, [Piece::Text("a {{who")]);
        assert!(!has_hole("a {{who"));
    }

    #[test]
    fn braces_that_are_not_doubled_are_text() {
        let got: Vec<_> = pieces("{a} {{b} }} {{c}}}").collect();
        assert_eq!(
            got,
            [
                Piece::Text("{a} "),
                Piece::Hole("b}"),
                Piece::Text(" "),
                Piece::Hole("c"),
                Piece::Text("}")
            ]
        );
    }

    #[test]
    fn only_a_lone_hole_is_whole() {
        assert_eq!(whole_hole("{{miles}}"), Some("miles"));
        assert_eq!(whole_hole(" {{miles}}"), None);
        assert_eq!(whole_hole("{{a}}{{b}}"), None);
        assert_eq!(whole_hole("miles"), None);
        assert_eq!(whole_hole(""), None);
    }
}
