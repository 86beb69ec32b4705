//! shed-words: the words the manifest (what `vocab.json` may say) and the
//! store (what a table holds) share, so neither restates the other: a
//! column's types, and the column names a component's table keeps for
//! itself, and how a count is spelled in a sentence both write
//! ([`thousands`]). No dependencies, no I/O.

/// The type of a column a component declares in `vocab.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// Text.
    Text,
    /// A number.
    Number,
    /// True or false.
    Bool,
    /// A moment, RFC 3339.
    Time,
    /// A web address.
    Url,
    /// Another entity, by its id.
    Ref,
}

impl ColumnType {
    /// Every column type, in the order a refusal lists them.
    pub const ALL: [ColumnType; 6] = [
        ColumnType::Text,
        ColumnType::Number,
        ColumnType::Bool,
        ColumnType::Time,
        ColumnType::Url,
        ColumnType::Ref,
    ];

    /// The word `vocab.json` spells the type with (`number`, `time`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Number => "number",
            ColumnType::Bool => "bool",
            ColumnType::Time => "time",
            ColumnType::Url => "url",
            ColumnType::Ref => "ref",
        }
    }

    /// The type a word names, if it names one.
    pub fn from_word(word: &str) -> Option<ColumnType> {
        ColumnType::ALL.into_iter().find(|t| t.as_str() == word)
    }

    /// How values of this type are named in the plural (`holds numbers`).
    pub fn plural(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Number => "numbers",
            ColumnType::Bool => "true/false values",
            ColumnType::Time => "times",
            ColumnType::Url => "urls",
            ColumnType::Ref => "refs",
        }
    }
}

/// The columns every component's table has of its own — its key `id`,
/// SQLite's names for that key, and PostgreSQL's system columns — so no
/// component may declare one, on either backend (a folder that deploys on
/// one must deploy on the other, or `shed migrate` could not move it).
pub const STORE_COLUMNS: [&str; 9] = [
    "id", "rowid", "oid", "xmin", "xmax", "cmin", "cmax", "ctid", "tableoid",
];

/// A count as a refusal spells it: `65536` as `65,536`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_204), "1,204");
        assert_eq!(thousands(65_536), "65,536");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn every_type_reads_back_from_its_word() {
        for t in ColumnType::ALL {
            assert_eq!(ColumnType::from_word(t.as_str()), Some(t));
        }
        assert_eq!(ColumnType::from_word("numbr"), None);
    }
}
