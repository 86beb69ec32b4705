//! Filling a command's template from a call: a string that is nothing but a
//! hole keeps the argument's type, a hole inside a sentence is spliced in as
//! text, and a hole in a filter line is percent-encoded so the value comes
//! back unchanged from the store's reader. A value, list element or clause
//! whose (optional) argument was left out drops out.

use std::borrow::Cow;

use jiff::Timestamp;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::holes::{Piece, has_hole, pieces, whole_hole};
use crate::{Act, ArgErrors, Command, Filled, args};

/// Everything but the unreserved characters of a URI is encoded: the store
/// splits a line on `&`, a clause at its operator, then decodes `%XX` only.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Each declared argument and its value, `None` when left out.
type Values<'c> = [(&'c str, Option<Value>)];

impl Command {
    /// The apply body or the filter line this call makes, or every problem
    /// with its arguments. `now` is the clock a `time` argument's `now`,
    /// `today` and `yesterday` are read by: the caller's, since this
    /// library reads no clock of its own.
    pub fn fill(&self, args: &Value, now: Timestamp) -> Result<Filled, ArgErrors> {
        let values = args::read(self, args, now)?;
        Ok(match &self.act {
            Act::Apply(template) => {
                Filled::Apply(fill_value(template, &values).unwrap_or(Value::Null))
            }
            Act::Query(line) => Filled::Query(fill_line(line, &values)),
        })
    }
}

/// The value an argument was given; `None` when it was left out (or, for a
/// template nobody validated, never declared).
fn given<'v>(values: &'v Values, name: &str) -> Option<&'v Value> {
    values
        .iter()
        .find(|(declared, _)| *declared == name)
        .and_then(|(_, value)| value.as_ref())
}

fn fill_value(template: &Value, values: &Values) -> Option<Value> {
    match template {
        Value::String(text) => fill_string(text, values),
        Value::Array(items) => Some(Value::Array(
            items.iter().filter_map(|v| fill_value(v, values)).collect(),
        )),
        Value::Object(fields) => Some(Value::Object(
            fields
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), fill_value(v, values)?)))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

fn fill_string(text: &str, values: &Values) -> Option<Value> {
    if !has_hole(text) {
        return Some(Value::String(text.to_owned()));
    }
    if let Some(name) = whole_hole(text) {
        return given(values, name).cloned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for piece in pieces(text) {
        match piece {
            Piece::Text(literal) => out.push_str(literal),
            Piece::Hole(name) => out.push_str(&spliced(given(values, name)?)),
        }
    }
    Some(Value::String(out))
}

fn fill_line(line: &str, values: &Values) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut first = true;
    'clauses: for clause in line.split('&') {
        let start = out.len();
        if !first {
            out.push('&');
        }
        for piece in pieces(clause) {
            match piece {
                Piece::Text(literal) => out.push_str(literal),
                Piece::Hole(name) => match given(values, name) {
                    Some(value) => {
                        out.extend(utf8_percent_encode(&spliced(value), QUERY_VALUE));
                    }
                    None => {
                        out.truncate(start);
                        continue 'clauses;
                    }
                },
            }
        }
        first = false;
    }
    out
}

/// A value as text in a sentence: `5`, `true`, or the text itself.
fn spliced(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    }
}
