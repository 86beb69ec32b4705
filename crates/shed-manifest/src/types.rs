//! The words a manifest types things with: a component's column types and a
//! command argument's types.

pub use shed_words::ColumnType;

/// The type of a command's argument: the five words `input` may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
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
}

impl ArgType {
    /// The argument type a generated command takes a column of type `ty`
    /// as: a `ref` is given as the eid or alias of the entity it points at,
    /// so as text.
    pub fn of_column(ty: ColumnType) -> ArgType {
        match ty {
            ColumnType::Text | ColumnType::Ref => ArgType::Text,
            ColumnType::Number => ArgType::Number,
            ColumnType::Bool => ArgType::Bool,
            ColumnType::Time => ArgType::Time,
            ColumnType::Url => ArgType::Url,
        }
    }

    /// Every argument type, in the order a refusal lists them.
    pub const ALL: [ArgType; 5] = [
        ArgType::Text,
        ArgType::Number,
        ArgType::Bool,
        ArgType::Time,
        ArgType::Url,
    ];

    /// The word `input` spells the type with.
    pub fn as_str(&self) -> &'static str {
        match self {
            ArgType::Text => "text",
            ArgType::Number => "number",
            ArgType::Bool => "bool",
            ArgType::Time => "time",
            ArgType::Url => "url",
        }
    }

    /// The type a word names, if it names one.
    pub fn from_word(word: &str) -> Option<ArgType> {
        ArgType::ALL.into_iter().find(|t| t.as_str() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for t in ArgType::ALL {
            assert_eq!(ArgType::from_word(t.as_str()), Some(t));
        }
        assert_eq!(ArgType::from_word("ref"), None);
    }
}
