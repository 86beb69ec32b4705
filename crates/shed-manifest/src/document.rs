//! Turns a manifest file's bytes into a JSON value, or into the sentence that
//! says where it stops reading. `tools.yml` is the same document as
//! `tools.json`, spelled in YAML; both come out as the same value, keys in
//! file order.

use serde_json::Value;

/// How a file is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Yaml,
}

/// Reads `bytes` (the file `file`) as `format`. The error is the sentence,
/// naming the line and column where the file stops making sense.
pub(crate) fn parse(file: &str, bytes: &[u8], format: Format) -> Result<Value, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match format {
        Format::Json => serde_json::from_slice(bytes).map_err(|e| {
            let message = without_marks(&e.to_string());
            unreadable(file, "JSON", Some((e.line(), e.column())), &message)
        }),
        Format::Yaml => serde_yaml_ng::from_slice(bytes).map_err(|e| {
            let message = without_marks(&e.to_string());
            let at = e.location().map(|l| (l.line(), l.column()));
            unreadable(file, "YAML", at, &message)
        }),
    }
}

fn unreadable(file: &str, language: &str, at: Option<(usize, usize)>, message: &str) -> String {
    match at {
        Some((line, column)) if line > 0 => format!(
            "{file} is not {language} at line {line}, column {column}: {message} — fix the file there"
        ),
        _ => format!("{file} is not {language}: {message} — fix the file"),
    }
}

/// The parsers' messages end in ` at line 3 column 5` (sometimes twice, or
/// ` at position 12`); the sentence says the place once, so drop them.
fn without_marks(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest
        .find(" at line ")
        .or_else(|| rest.find(" at position "))
    {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let end = after.find(',').unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_yaml_read_the_same_document() {
        let json = br#"{"b": {"x": 1}, "a": [true, "s"]}"#;
        let yaml = b"b:\n  x: 1\na:\n  - true\n  - s\n";
        let from_json = parse("tools.json", json, Format::Json).unwrap();
        let from_yaml = parse("tools.yml", yaml, Format::Yaml).unwrap();
        assert_eq!(from_json, from_yaml);
        let keys: Vec<_> = from_yaml.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"], "file order is kept");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        assert!(parse("tools.json", b"\xEF\xBB\xBF{}", Format::Json).is_ok());
    }

    #[test]
    fn bad_json_names_line_and_column() {
        let err = parse("tools.json", b"{\n  \"a\": 1\n  \"b\": 2\n}", Format::Json).unwrap_err();
        assert_eq!(
            err,
            "tools.json is not JSON at line 3, column 3: expected `,` or `}` — fix the file there"
        );
    }

    #[test]
    fn bad_yaml_names_line_and_column() {
        let err = parse("tools.yml", b"a: 1\n b: [\n", Format::Yaml).unwrap_err();
        assert!(
            err.starts_with("tools.yml is not YAML at line 2, column "),
            "{err}"
        );
        assert!(!err.contains(" at line 2 column"), "{err}");
    }
}
