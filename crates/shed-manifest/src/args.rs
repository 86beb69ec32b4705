//! A call's arguments read under the types the command declared: `"5"` for a
//! number is 5, `"true"` for a bool is true, a time is a date, an RFC 3339
//! time, or `now`, `today` or `yesterday` by the clock the caller passes in,
//! a url an absolute http(s) address. What cannot be read is refused by
//! name, and so is a number outside its argument's `minimum` and `maximum`;
//! every refusal of one call comes back together.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Number, Value};

use crate::{ArgErrors, ArgType, Argument, Command};

/// The shape a `time` argument wants, as its schema, its refusal and a
/// listing's line about time arguments say it.
pub(crate) const TIME_SHAPE: &str = "a time, like 2026-09-01 or 2026-09-01T10:00:00Z, \
                                     or now, today or yesterday (the server's clock, UTC)";
/// The forms of a `time` argument its schema holds it to (`pattern`, the
/// regular expressions of JSON Schema): a date, a date and time to the
/// second in UTC or with an offset, or one of the words — each a form
/// [`as_time`] reads, so a caller (or a model whose server holds its
/// calls to a schema) that keeps to it sends a time the host takes. No
/// escape in it (`[.]`, not a backslash): a model server's converter of
/// patterns into grammars (llama-cpp-python's) refused `\.`.
pub(crate) const TIME_PATTERN: &str = "^(now|today|yesterday|[0-9]{4}-[0-9]{2}-[0-9]{2}\
                                       (T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?\
                                       (Z|[+-][0-9]{2}:[0-9]{2}))?)$";
/// The shape a `url` argument wants, as its schema and its refusal say it.
pub(crate) const URL_SHAPE: &str = "a web address, like https://example.com/";

/// Each declared argument's value, in declaration order: `None` for an
/// optional one left out; a `time` read by the clock `now`. Arguments nobody
/// declared are dropped.
pub(crate) fn read<'c>(
    command: &'c Command,
    args: &Value,
    now: Timestamp,
) -> Result<Vec<(&'c str, Option<Value>)>, ArgErrors> {
    let given = match args {
        Value::Object(given) => Some(given),
        Value::Null => None,
        _ => {
            return Err(ArgErrors(vec![format!(
                "args is an object of {}'s arguments: {}",
                command.name,
                command.call_shape()
            )]));
        }
    };
    let mut values = Vec::with_capacity(command.input.len());
    let mut errors = Vec::new();
    for argument in &command.input {
        let name = argument.name.as_str();
        match given.and_then(|g| g.get(name)).filter(|v| !v.is_null()) {
            Some(value) => match coerce(name, argument.ty, value, now)
                .and_then(|value| within(argument, value))
            {
                Ok(value) => values.push((name, Some(value))),
                Err(error) => errors.push(error),
            },
            None if argument.required => errors.push(required(name, argument.ty)),
            None => values.push((name, None)),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(ArgErrors(errors))
    }
}

/// The sentence for a required argument left out: `miles is required`, and
/// for a time or a url the shape wanted, so the next call can send one.
fn required(name: &str, ty: ArgType) -> String {
    match ty {
        ArgType::Time => format!("{name} is required — {TIME_SHAPE}"),
        ArgType::Url => format!("{name} is required — {URL_SHAPE}"),
        ArgType::Text | ArgType::Number | ArgType::Bool => format!("{name} is required"),
    }
}

/// `value` read as `ty` (a time by the clock `now`), or the sentence naming
/// `name` and what it must be.
fn coerce(name: &str, ty: ArgType, value: &Value, now: Timestamp) -> Result<Value, String> {
    let read = match ty {
        ArgType::Text => as_text(value),
        ArgType::Number => as_number(value),
        ArgType::Bool => as_bool(value),
        ArgType::Time => value.as_str().and_then(|text| as_time(text, now)),
        ArgType::Url => value.as_str().and_then(as_web_address),
    };
    read.ok_or_else(|| match ty {
        ArgType::Text => format!("{name} is text"),
        ArgType::Number => format!("{name} is a number"),
        ArgType::Bool => format!("{name} is true or false"),
        ArgType::Time => format!("{name} is {TIME_SHAPE}"),
        ArgType::Url => format!("{name} is {URL_SHAPE}"),
    })
}

/// `value`, when it is within the argument's `minimum` and `maximum` (a
/// number's; no other type has them), or the sentence naming the argument
/// and the bound it passed: `miles is at least 0, not -3`.
fn within(argument: &Argument, value: Value) -> Result<Value, String> {
    let Some(number) = value.as_f64() else {
        return Ok(value);
    };
    let name = &argument.name;
    if let Some(minimum) = &argument.minimum
        && minimum.as_f64().is_some_and(|minimum| number < minimum)
    {
        return Err(format!("{name} is at least {minimum}, not {value}"));
    }
    if let Some(maximum) = &argument.maximum
        && maximum.as_f64().is_some_and(|maximum| number > maximum)
    {
        return Err(format!("{name} is at most {maximum}, not {value}"));
    }
    Ok(value)
}

/// Text, or a number or boolean said as text.
fn as_text(value: &Value) -> Option<Value> {
    match value {
        Value::String(_) => Some(value.clone()),
        Value::Number(n) => Some(Value::String(n.to_string())),
        Value::Bool(b) => Some(Value::String(b.to_string())),
        _ => None,
    }
}

/// A number, or text that reads as a finite one (a whole number stays whole).
fn as_number(value: &Value) -> Option<Value> {
    match value {
        Value::Number(_) => Some(value.clone()),
        Value::String(text) => {
            let text = text.trim();
            if let Ok(whole) = text.parse::<i64>() {
                return Some(Value::Number(whole.into()));
            }
            let number = text.parse::<f64>().ok().filter(|n| n.is_finite())?;
            Number::from_f64(number).map(Value::Number)
        }
        _ => None,
    }
}

fn as_bool(value: &Value) -> Option<Value> {
    match value {
        Value::Bool(_) => Some(value.clone()),
        Value::String(text) => {
            let text = text.trim();
            if text.eq_ignore_ascii_case("true") {
                Some(Value::Bool(true))
            } else if text.eq_ignore_ascii_case("false") {
                Some(Value::Bool(false))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A date (`2026-09-01`, kept as it is) or a time with an offset, said as
/// RFC 3339 in UTC; or one of the words, read by the clock `now` in UTC:
/// `now` the time to the second, `today` and `yesterday` dates, as if
/// written — so `today` is the start of today, UTC.
fn as_time(text: &str, now: Timestamp) -> Option<Value> {
    let text = text.trim();
    let word = |w: &str| text.eq_ignore_ascii_case(w);
    if word("now") {
        let to_the_second = Timestamp::from_second(now.as_second()).ok()?;
        return Some(Value::String(to_the_second.to_string()));
    }
    if word("today") || word("yesterday") {
        let today = now.to_zoned_datetime(TimeZone::UTC).date();
        let date = if word("today") {
            today
        } else {
            today.yesterday().ok()?
        };
        return Some(Value::String(date.to_string()));
    }
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(Value::String(at.to_string()));
    }
    let date_shaped = text.len() == "2026-09-01".len();
    (date_shaped && text.parse::<jiff::civil::Date>().is_ok())
        .then(|| Value::String(text.to_owned()))
}

/// An absolute `http://` or `https://` address with a host, no spaces.
fn as_web_address(text: &str) -> Option<Value> {
    let text = text.trim();
    let scheme_end = text.find("://")?;
    let scheme = &text[..scheme_end];
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let rest = &text[scheme_end + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_and_port = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = match host_and_port.strip_prefix('[') {
        Some(v6) => {
            let close = v6.find(']')?;
            (&v6[..close], v6[close + 1..].strip_prefix(':'))
        }
        None => match host_and_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_and_port, None),
        },
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | ':'));
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    (host_ok && port_ok).then(|| Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A time of each form [`TIME_PATTERN`] names, real by construction.
    fn times() -> impl Strategy<Value = String> {
        let date = (1000i16..=9999, 1i8..=12, 1i8..=28)
            .prop_map(|(y, m, d)| jiff::civil::date(y, m, d).to_string());
        let offset = prop_oneof![
            Just("Z".to_string()),
            (prop_oneof![Just('+'), Just('-')], 0u8..=23, 0u8..60)
                .prop_map(|(sign, h, m)| format!("{sign}{h:02}:{m:02}")),
        ];
        let fraction = proptest::option::of("[0-9]{1,6}")
            .prop_map(|f| f.map(|f| format!(".{f}")).unwrap_or_default());
        let at = (date.clone(), 0u8..24, 0u8..60, 0u8..60, fraction, offset).prop_map(
            |(date, h, m, s, fraction, offset)| {
                format!("{date}T{h:02}:{m:02}:{s:02}{fraction}{offset}")
            },
        );
        prop_oneof![
            Just("now".to_string()),
            Just("today".to_string()),
            Just("yesterday".to_string()),
            date,
            at,
        ]
    }

    proptest! {
        /// Every form the pattern names is a time the host reads: the
        /// schema never leads a caller to a time it refuses.
        #[test]
        fn a_time_kept_to_the_pattern_is_read(text in times()) {
            let pattern = regex::Regex::new(TIME_PATTERN).expect("a regular expression");
            prop_assert!(pattern.is_match(&text), "{text} is not of the pattern");
            prop_assert!(
                as_time(&text, Timestamp::UNIX_EPOCH).is_some(),
                "{text} is of the pattern and not read"
            );
        }
    }

    #[test]
    fn what_the_pattern_leaves_out_is_not_of_it() {
        let pattern = regex::Regex::new(TIME_PATTERN).expect("a regular expression");
        for text in [
            "2026-12-05T1:47:39Z",
            "2:45am",
            "today (UTC)",
            "2026-09-01 10:00",
            "Now",
        ] {
            assert!(!pattern.is_match(text), "{text}");
        }
    }
}
