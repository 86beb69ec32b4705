//! The filter line, DESIGN's read grammar: clauses joined by `&`, each value
//! percent-decoded after the split (`%XX` only; `+` is a plus). Parsing needs
//! no catalog and is backend-free; names and values are checked against the
//! app when the line is run. Safe on any input: a line gives clauses or a
//! sentence. A line is bounded — in clauses, in the length of a value, and in
//! the characters its `~` clauses search for — so what reaches the database is
//! well inside SQLite's own limits and no single row costs long to test.

use crate::StoreError;
use crate::names::is_word;

/// A parsed filter line, clauses in the order written.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterLine {
    /// The clauses, one per `&`-separated piece of the line (empty pieces
    /// skipped), values already percent-decoded.
    pub(crate) clauses: Vec<Clause>,
}

/// What `.C`, `.C?` and `.C!` ask of a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wear {
    /// `.C`: the entity must wear it; not carried.
    Require,
    /// `.C?`: carried where worn.
    Carry,
    /// `.C!`: must wear it, and it is carried.
    RequireAndCarry,
}

/// A comparison of a clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `=`: equal to the value.
    Eq,
    /// `!=`: not equal to the value.
    Ne,
    /// `>`: greater than the value (later, for a time).
    Gt,
    /// `>=`: greater than or equal to the value.
    Ge,
    /// `<`: less than the value (earlier, for a time).
    Lt,
    /// `<=`: less than or equal to the value.
    Le,
    /// `~`: text contains, case-insensitive.
    Contains,
}

impl Op {
    /// The operator as a line writes it.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Contains => "~",
        }
    }

    /// The operator a line writes as `text`.
    fn named(text: &str) -> Option<Op> {
        [Op::Eq, Op::Ne, Op::Gt, Op::Ge, Op::Lt, Op::Le, Op::Contains]
            .into_iter()
            .find(|op| op.text() == text)
    }
}

/// The store's own stamps: `created` and `updated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    /// `created`: when, by whom and through which agent the entity was
    /// first written.
    Created,
    /// `updated`: when, by whom and through which agent the entity was last
    /// written.
    Updated,
}

impl Stamp {
    /// The word a line names the stamp with (`created`, `updated`).
    pub(crate) fn word(self) -> &'static str {
        match self {
            Stamp::Created => "created",
            Stamp::Updated => "updated",
        }
    }

    /// The stamp a line names by `word`.
    fn named(word: &str) -> Option<Stamp> {
        [Stamp::Created, Stamp::Updated]
            .into_iter()
            .find(|s| s.word() == word)
    }
}

/// A field of a stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StampField {
    /// `at`: when the write was made, compared as a time (`2026-09-01` or
    /// `2026-09-01T10:00:00Z`).
    At,
    /// `by`: the person who wrote, named by eid, `@handle` or handle.
    By,
    /// `via`: the agent that wrote for the person (e.g. `agent:<job>`),
    /// compared as text.
    Via,
}

impl StampField {
    /// The word a line names the field with (`at`, `by`, `via`).
    pub(crate) fn word(self) -> &'static str {
        match self {
            StampField::At => "at",
            StampField::By => "by",
            StampField::Via => "via",
        }
    }

    /// The field a line names by `word`.
    fn named(word: &str) -> Option<StampField> {
        [StampField::At, StampField::By, StampField::Via]
            .into_iter()
            .find(|f| f.word() == word)
    }
}

/// What a line sorts by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OrderKey {
    /// `order=.C.col`: a column of a component.
    Column {
        /// The component's name (`C`).
        component: String,
        /// The column's name within that component (`col`).
        column: String,
    },
    /// `order=.created.at` or `order=.updated.at`: the time of that stamp.
    Stamp(Stamp),
}

/// One clause of a line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Clause {
    /// `.C`, `.C?`, `.C!`
    Component {
        /// The component's name (`C`), checked against the app when run.
        name: String,
        /// Whether the entity must wear it, and whether it is carried.
        wear: Wear,
    },
    /// `.C.col<op>value`
    Compare {
        /// The component's name (`C`); the entity must wear it.
        component: String,
        /// The column's name within that component (`col`).
        column: String,
        /// How the column is compared with the value.
        op: Op,
        /// The value as written, decoded; read under the column's type
        /// when the line is run.
        value: String,
    },
    /// `.created!`, `.updated?`, …: the stamp carried (or merely required, which always holds).
    Stamp {
        /// Which stamp.
        stamp: Stamp,
        /// Whether it is carried (`?`, `!`); bare, the clause asks nothing.
        wear: Wear,
    },
    /// `.created.at>=…`, `.created.by=<person>`, `.created.via=agent:…`
    StampCompare {
        /// Which stamp.
        stamp: Stamp,
        /// Which of its fields is compared.
        field: StampField,
        /// How the field is compared with the value.
        op: Op,
        /// The value as written, decoded: a time, a person or an agent,
        /// as the field says.
        value: String,
    },
    /// `.edges.<rel>=<eid or alias>`
    EdgeTo {
        /// The edge's relation name (`rel`).
        rel: String,
        /// The entity the edge points to: an eid, or an alias of this app.
        to: String,
    },
    /// `.edges?`: carry the edges.
    Edges,
    /// `q=words`
    Words(String),
    /// `eid=<eid or alias>`
    Eid(String),
    /// `order=.C.col`, `order=-.C.col`
    Order {
        /// What the rows are sorted by.
        key: OrderKey,
        /// Whether largest (or latest) comes first: the line wrote `-`.
        descending: bool,
    },
    /// `limit=N`
    Limit(u32),
    /// `after=<cursor>`
    After(String),
}

/// The most clauses a line holds: a line a person writes has a handful, and
/// this keeps a query well under SQLite's 64 tables in a join and its
/// expression depth of 1,000.
pub const MAX_CLAUSES: usize = 32;

/// The longest value of a clause, in characters (`after` excepted: a cursor
/// carries the sort value it stops at): far longer than a name, an eid or a
/// few search words, and far under SQLite's 50,000-byte LIKE pattern bound.
pub const MAX_VALUE_CHARS: usize = 1_000;

/// The most characters the `~` (contains) clauses of one line search for, in
/// all: testing a row costs about these characters times the text's length
/// (300,000 characters: ~45 ms), since SQLite cannot stop a test midway.
pub const MAX_CONTAINS_CHARS: usize = 100;

/// The forms a clause may take, for the sentence about one that can't be read.
pub const CLAUSE_FORMS: &str = ".C! .C? .C .C.col=value (or != > >= < <= ~) .created! .created.at>=time .created.by=person (likewise updated) .edges.rel=eid .edges? q=words eid=eid-or-alias order=.C.col order=-.C.col limit=N after=cursor";

impl Clause {
    /// The value the clause compares with or searches for; `None` for a
    /// clause without one, and for `after`, whose cursor is as long as the
    /// sort value it carries.
    fn value(&self) -> Option<&str> {
        match self {
            Clause::Compare { value, .. }
            | Clause::StampCompare { value, .. }
            | Clause::EdgeTo { to: value, .. }
            | Clause::Words(value)
            | Clause::Eid(value) => Some(value),
            Clause::Component { .. }
            | Clause::Stamp { .. }
            | Clause::Edges
            | Clause::Order { .. }
            | Clause::Limit(_)
            | Clause::After(_) => None,
        }
    }

    /// The clause without its value, as a refusal names it: `.jog.who~`, `q=`.
    fn label(&self) -> String {
        match self {
            Clause::Compare {
                component,
                column,
                op: o,
                ..
            } => format!(".{component}.{column}{}", o.text()),
            Clause::StampCompare {
                stamp,
                field,
                op: o,
                ..
            } => format!(".{}.{}{}", stamp.word(), field.word(), o.text()),
            Clause::EdgeTo { rel, .. } => format!(".edges.{rel}="),
            Clause::Words(_) => "q=".into(),
            Clause::Eid(_) => "eid=".into(),
            _ => String::new(),
        }
    }

    /// The text a `~` (contains) clause searches for.
    fn contains_value(&self) -> Option<&str> {
        match self {
            Clause::Compare {
                op: Op::Contains, ..
            }
            | Clause::StampCompare {
                op: Op::Contains, ..
            } => self.value(),
            _ => None,
        }
    }
}

impl FilterLine {
    /// Whether running the line may read more rows than it answers: a `~`
    /// search, a comparison of a stamp, an order by a stamp (none of them is
    /// served by an index). Such a line runs away from the caller's thread.
    pub fn may_scan(&self) -> bool {
        self.clauses.iter().any(|c| {
            matches!(
                c,
                Clause::StampCompare { .. }
                    | Clause::Order {
                        key: OrderKey::Stamp(_),
                        ..
                    }
            ) || c.contains_value().is_some()
        })
    }
}

fn bad_clause(raw: &str) -> StoreError {
    StoreError::refused(format!(
        "can't read the clause {raw} — a clause is one of {CLAUSE_FORMS}"
    ))
}

/// Reads a filter line.
pub fn parse(line: &str) -> Result<FilterLine, StoreError> {
    let mut clauses = Vec::new();
    let mut contains = 0;
    for raw in line.split('&').filter(|c| !c.is_empty()) {
        if clauses.len() == MAX_CLAUSES {
            return Err(StoreError::refused(format!(
                "this line has more than {MAX_CLAUSES} clauses — say what you want in at most {MAX_CLAUSES}"
            )));
        }
        let clause = parse_clause(raw)?;
        if let Some(value) = clause.contains_value() {
            contains += value.chars().count();
            if contains > MAX_CONTAINS_CHARS {
                return Err(StoreError::refused(format!(
                    "the ~ (contains) clauses of this line search for {contains} characters — at most {MAX_CONTAINS_CHARS} in one line; search for a shorter piece of the text, or for its words with q="
                )));
            }
        }
        if let Some(value) = clause.value() {
            let chars = value.chars().count();
            if chars > MAX_VALUE_CHARS {
                return Err(StoreError::refused(format!(
                    "the value of {} is {chars} characters — a clause's value is at most {MAX_VALUE_CHARS}; shorten it",
                    clause.label()
                )));
            }
        }
        let once = |c: &Clause| match c {
            Clause::Order { .. } => Some("order"),
            Clause::Limit(_) => Some("limit"),
            Clause::After(_) => Some("after"),
            Clause::Eid(_) => Some("eid"),
            Clause::Words(_) => Some("q"),
            _ => None,
        };
        if let Some(word) = once(&clause)
            && clauses.iter().any(|c| once(c) == Some(word))
        {
            return Err(StoreError::refused(format!(
                "{word} is said twice in this line — say it once"
            )));
        }
        clauses.push(clause);
    }
    Ok(FilterLine { clauses })
}

/// `%XX` decoding of a clause's value.
fn decode(raw: &str, whole: &str) -> Result<String, StoreError> {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| {
            StoreError::refused(format!(
                "the clause {whole} decodes to something that is not UTF-8 text — encode the value as UTF-8"
            ))
        })
}

/// Splits off a leading `[a-z0-9_]*`.
fn take_word(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(s.len());
    s.split_at(end)
}

/// One character of an operator, as written or percent-encoded: a browser
/// encodes `<` and `>` in a query string, so `.created.at%3E=2026-09-01`
/// reads as `.created.at>=2026-09-01`.
fn take_op_char(s: &str) -> Option<(char, &str)> {
    let is_op = |c: char| matches!(c, '!' | '=' | '<' | '>' | '~');
    let first = s.chars().next()?;
    if is_op(first) {
        return Some((first, &s[first.len_utf8()..]));
    }
    let hex = s.strip_prefix('%')?.get(..2)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let c = char::from(u8::from_str_radix(hex, 16).ok()?);
    is_op(c).then(|| (c, &s[3..]))
}

/// The operator at the start of `s`, two characters (`!=`, `>=`, `<=`)
/// before one.
fn take_op(s: &str) -> Option<(Op, &str)> {
    let (first, after_first) = take_op_char(s)?;
    let two = take_op_char(after_first)
        .and_then(|(second, rest)| Some((Op::named(&format!("{first}{second}"))?, rest)));
    two.or_else(|| Some((Op::named(&first.to_string())?, after_first)))
}

fn wear(suffix: &str) -> Option<Wear> {
    match suffix {
        "" => Some(Wear::Require),
        "?" => Some(Wear::Carry),
        "!" => Some(Wear::RequireAndCarry),
        _ => None,
    }
}

fn parse_clause(raw: &str) -> Result<Clause, StoreError> {
    let Some(path) = raw.strip_prefix('.') else {
        let (key, value) = raw.split_once('=').ok_or_else(|| bad_clause(raw))?;
        let value = decode(value, raw)?;
        return match key {
            "q" => Ok(Clause::Words(value)),
            "eid" => Ok(Clause::Eid(value)),
            "after" => Ok(Clause::After(value)),
            "limit" => match value.parse::<u32>() {
                Ok(n) if (1..=1000).contains(&n) => Ok(Clause::Limit(n)),
                _ => Err(StoreError::refused("limit is a whole number from 1 to 1000")),
            },
            "order" => parse_order(&value).ok_or_else(|| {
                StoreError::refused(format!(
                    "can't read order={value} — order is .C.col or -.C.col (newest first when not said)"
                ))
            }),
            _ => Err(bad_clause(raw)),
        };
    };
    let (first, rest) = take_word(path);
    if !is_word(first) {
        return Err(bad_clause(raw));
    }
    if let Some(w) = wear(rest) {
        return Ok(if first == "edges" {
            match w {
                Wear::Carry => Clause::Edges,
                _ => return Err(bad_clause(raw)),
            }
        } else if let Some(stamp) = Stamp::named(first) {
            Clause::Stamp { stamp, wear: w }
        } else {
            Clause::Component {
                name: first.to_string(),
                wear: w,
            }
        });
    }
    let rest = rest.strip_prefix('.').ok_or_else(|| bad_clause(raw))?;
    let (second, rest) = take_word(rest);
    if !is_word(second) {
        return Err(bad_clause(raw));
    }
    if first == "edges" {
        let to = rest.strip_prefix('=').ok_or_else(|| bad_clause(raw))?;
        return Ok(Clause::EdgeTo {
            rel: second.to_string(),
            to: decode(to, raw)?,
        });
    }
    let (op, value) = take_op(rest).ok_or_else(|| bad_clause(raw))?;
    let value = decode(value, raw)?;
    let Some(stamp) = Stamp::named(first) else {
        return Ok(Clause::Compare {
            component: first.to_string(),
            column: second.to_string(),
            op,
            value,
        });
    };
    let Some(field) = StampField::named(second) else {
        return Err(StoreError::refused(format!(
            "{first} has no field {second} — it has at, by, via"
        )));
    };
    if field != StampField::At
        && !matches!(op, Op::Eq | Op::Ne)
        && !(field == StampField::Via && op == Op::Contains)
    {
        return Err(StoreError::refused(format!(
            "{first}.{second} compares with = or != — give a person's @handle or eid"
        )));
    }
    if field == StampField::At && op == Op::Contains {
        return Err(StoreError::refused(format!(
            "{first}.at is a time — compare it with = != > >= < <="
        )));
    }
    Ok(Clause::StampCompare {
        stamp,
        field,
        op,
        value,
    })
}

fn parse_order(value: &str) -> Option<Clause> {
    let (descending, path) = match value.strip_prefix('-') {
        Some(p) => (true, p),
        None => (false, value),
    };
    let (component, column) = path.strip_prefix('.')?.split_once('.')?;
    if !is_word(component) || !is_word(column) {
        return None;
    }
    let key = match (Stamp::named(component), column) {
        (Some(s), "at") => OrderKey::Stamp(s),
        (Some(_), _) => return None,
        (None, _) => OrderKey::Column {
            component: component.to_string(),
            column: column.to_string(),
        },
    };
    Some(Clause::Order { key, descending })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(line: &str) -> Clause {
        parse(line).unwrap().clauses.remove(0)
    }

    #[test]
    fn every_form_reads() {
        assert_eq!(
            one(".jog!"),
            Clause::Component {
                name: "jog".into(),
                wear: Wear::RequireAndCarry
            }
        );
        assert_eq!(
            one(".jog?"),
            Clause::Component {
                name: "jog".into(),
                wear: Wear::Carry
            }
        );
        assert_eq!(
            one(".jog"),
            Clause::Component {
                name: "jog".into(),
                wear: Wear::Require
            }
        );
        for (text, op) in [
            ("=", Op::Eq),
            ("!=", Op::Ne),
            (">", Op::Gt),
            (">=", Op::Ge),
            ("<", Op::Lt),
            ("<=", Op::Le),
            ("~", Op::Contains),
        ] {
            assert_eq!(
                one(&format!(".jog.who{text}A%26B+C")),
                Clause::Compare {
                    component: "jog".into(),
                    column: "who".into(),
                    op,
                    value: "A&B+C".into()
                }
            );
        }
        assert_eq!(
            one(".created!"),
            Clause::Stamp {
                stamp: Stamp::Created,
                wear: Wear::RequireAndCarry
            }
        );
        assert_eq!(
            one(".updated.at>=2026-09-01"),
            Clause::StampCompare {
                stamp: Stamp::Updated,
                field: StampField::At,
                op: Op::Ge,
                value: "2026-09-01".into()
            }
        );
        assert_eq!(
            one(".edges.follows=tuesday"),
            Clause::EdgeTo {
                rel: "follows".into(),
                to: "tuesday".into()
            }
        );
        assert_eq!(one(".edges?"), Clause::Edges);
        assert_eq!(one("q=hello%20wor"), Clause::Words("hello wor".into()));
        assert_eq!(one("eid=tuesday"), Clause::Eid("tuesday".into()));
        assert_eq!(
            one("order=-.jog.miles"),
            Clause::Order {
                key: OrderKey::Column {
                    component: "jog".into(),
                    column: "miles".into()
                },
                descending: true
            }
        );
        assert_eq!(
            one("order=.created.at"),
            Clause::Order {
                key: OrderKey::Stamp(Stamp::Created),
                descending: false
            }
        );
        assert_eq!(one("limit=1000"), Clause::Limit(1000));
        assert_eq!(one("after=abc"), Clause::After("abc".into()));
    }

    #[test]
    fn an_operator_reads_the_same_percent_encoded() {
        for (encoded, written) in [
            (".created.at%3E=2026-09-01", ".created.at>=2026-09-01"),
            (".created.at%3e%3D2026-09-01", ".created.at>=2026-09-01"),
            (".jog.miles%3C5", ".jog.miles<5"),
            (".jog.miles%3C=5", ".jog.miles<=5"),
            (".jog.who%21=Ada", ".jog.who!=Ada"),
            (".jog.who%7Eada", ".jog.who~ada"),
            (".jog.who%3DA%26B", ".jog.who=A%26B"),
        ] {
            assert_eq!(
                parse(encoded).unwrap(),
                parse(written).unwrap(),
                "{encoded}"
            );
        }
        // A value may still start with an encoded operator character.
        assert_eq!(
            one(".jog.who=%3Cb%3E"),
            Clause::Compare {
                component: "jog".into(),
                column: "who".into(),
                op: Op::Eq,
                value: "<b>".into()
            }
        );
        // An encoded character that is not an operator is no operator.
        assert!(parse(".jog.who%41x").is_err());
        assert!(parse(".jog.who%+3x").is_err());
    }

    #[test]
    fn refusals_are_sentences() {
        let e = |l: &str| parse(l).unwrap_err().to_string();
        assert_eq!(e("limit=0"), "limit is a whole number from 1 to 1000");
        assert_eq!(e("limit=1001"), "limit is a whole number from 1 to 1000");
        assert_eq!(e("limit=ten"), "limit is a whole number from 1 to 1000");
        assert_eq!(
            e("jog"),
            format!("can't read the clause jog — a clause is one of {CLAUSE_FORMS}")
        );
        assert!(
            e(".jog.miles").starts_with("can't read the clause .jog.miles — a clause is one of")
        );
        assert!(e("color=red").starts_with("can't read the clause color=red"));
        assert!(e(".Jog!").starts_with("can't read the clause .Jog!"));
        assert_eq!(
            e("limit=5&limit=6"),
            "limit is said twice in this line — say it once"
        );
        assert!(e("order=miles").starts_with("can't read order=miles"));
        assert_eq!(
            e(".created.when=1"),
            "created has no field when — it has at, by, via"
        );
    }

    #[test]
    fn a_line_is_bounded_in_clauses_and_values() {
        let e = |l: &str| parse(l).unwrap_err().to_string();
        let clauses = |n: usize| vec![".jog"; n].join("&");
        assert_eq!(parse(&clauses(MAX_CLAUSES)).unwrap().clauses.len(), 32);
        assert_eq!(
            e(&clauses(MAX_CLAUSES + 1)),
            "this line has more than 32 clauses — say what you want in at most 32"
        );
        assert_eq!(
            e(&clauses(1000)),
            "this line has more than 32 clauses — say what you want in at most 32"
        );
        let a = |n: usize| "a".repeat(n);
        assert!(parse(&format!(".jog.who={}", a(MAX_VALUE_CHARS))).is_ok());
        assert_eq!(
            e(&format!(".jog.who={}", a(1001))),
            "the value of .jog.who= is 1001 characters — a clause's value is at most 1000; shorten it"
        );
        assert_eq!(
            e(&format!("q={}", "%C3%A9".repeat(1001))),
            "the value of q= is 1001 characters — a clause's value is at most 1000; shorten it",
            "characters are counted decoded"
        );
        assert_eq!(
            e(&format!("eid={}", a(49_999))),
            "the value of eid= is 49999 characters — a clause's value is at most 1000; shorten it"
        );
        assert_eq!(
            e(&format!(".created.at>={}", a(1001))),
            "the value of .created.at>= is 1001 characters — a clause's value is at most 1000; shorten it"
        );
        assert_eq!(
            e(&format!(".edges.follows={}", a(1001))),
            "the value of .edges.follows= is 1001 characters — a clause's value is at most 1000; shorten it"
        );
        let cursor = format!("after={}", a(5000));
        assert!(
            parse(&cursor).is_ok(),
            "a cursor is as long as its sort value"
        );
        assert!(parse(&format!(".jog.who~{}", a(MAX_CONTAINS_CHARS))).is_ok());
        let contains = "the ~ (contains) clauses of this line search for 101 characters — at most 100 in one line; search for a shorter piece of the text, or for its words with q=";
        assert_eq!(e(&format!(".jog.who~{}", a(101))), contains);
        assert_eq!(
            e(&format!(".jog.who~{}&.created.via~{}", a(50), a(51))),
            contains,
            "the ~ clauses of a line count together"
        );
        assert_eq!(
            e(&format!(".word.term~{}b", a(30_000))),
            "the ~ (contains) clauses of this line search for 30001 characters — at most 100 in one line; search for a shorter piece of the text, or for its words with q="
        );
    }

    #[test]
    fn lines_that_may_scan() {
        let scans = |l: &str| parse(l).unwrap().may_scan();
        assert!(!scans(".jog!&limit=50"));
        assert!(!scans("eid=tuesday"));
        assert!(!scans(".jog!&.jog.who=Ada&order=-.jog.miles&q=hills"));
        assert!(scans(".jog!&.jog.who~ad"));
        assert!(scans(".jog!&.created.via~agent"));
        assert!(scans(".jog!&.created.by=@ada"));
        assert!(scans("order=.updated.at"));
    }

    proptest! {
        #[test]
        fn bounded_lines_read_and_others_get_their_sentence(
            values in prop::collection::vec(0usize..60, 0..40),
        ) {
            let line: Vec<String> = values.iter().map(|n| format!(".jog.who~{}", "x".repeat(*n))).collect();
            let searched: usize = values.iter().take(MAX_CLAUSES).sum();
            match parse(&line.join("&")) {
                Ok(read) => prop_assert!(read.clauses.len() <= MAX_CLAUSES && searched <= MAX_CONTAINS_CHARS),
                Err(StoreError::Refused(s)) => prop_assert!(
                    (values.len() > MAX_CLAUSES && s.starts_with("this line has more than 32 clauses"))
                        || s.starts_with("the ~ (contains) clauses of this line search for")
                ),
                Err(other) => prop_assert!(false, "unexpected error {other:?}"),
            }
        }

        #[test]
        fn any_line_reads_or_gets_a_sentence(line in ".{0,80}") {
            match parse(&line) {
                Ok(_) => {}
                Err(StoreError::Refused(s)) => prop_assert!(!s.is_empty()),
                Err(other) => prop_assert!(false, "unexpected error {other:?}"),
            }
        }

        #[test]
        fn clause_shaped_lines_never_panic(parts in prop::collection::vec(
            prop_oneof![
                Just(".".to_string()), Just("&".to_string()), Just("!".to_string()), Just("?".to_string()),
                Just("=".to_string()), Just("<".to_string()), Just(">".to_string()), Just("~".to_string()),
                Just("-".to_string()), Just("%".to_string()), Just("%2".to_string()), Just("%FF".to_string()),
                Just("jog".to_string()), Just("created".to_string()), Just("edges".to_string()),
                Just("limit".to_string()), Just("order".to_string()), Just("q".to_string()), Just("eid".to_string()),
                "[a-z0-9_]{1,4}", "\\PC{1,3}",
            ], 0..16)) {
            let line: String = parts.concat();
            let _ = parse(&line);
        }
    }
}
