//! Values under a column's type: reading them from the wire or a filter line
//! into what the database keeps, and rendering kept values back as JSON.
//! Times are kept as microseconds since the epoch (UTC), so they compare
//! chronologically; bools as 0/1; numbers as f64.

use serde_json::Value;

/// A value as a database keeps it, whatever the backend: what a column's
/// type is read into and what a statement binds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sql {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    /// Bytes: only the platform's files are (a deploy's, a draft's); no
    /// app's column holds them.
    Blob(Vec<u8>),
}

use crate::ColumnType;

/// Reads a time: RFC 3339 with an offset, a date-time without one (UTC), or a
/// bare date (midnight UTC). Answers microseconds since the epoch.
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_microsecond());
    }
    let utc = jiff::tz::TimeZone::UTC;
    if let Ok(dt) = s.parse::<jiff::civil::DateTime>() {
        return utc.to_timestamp(dt).ok().map(|t| t.as_microsecond());
    }
    if let Ok(d) = s.parse::<jiff::civil::Date>() {
        return utc
            .to_timestamp(d.to_datetime(jiff::civil::Time::midnight()))
            .ok()
            .map(|t| t.as_microsecond());
    }
    None
}

/// Renders kept microseconds as RFC 3339 in UTC, as jiff prints a
/// timestamp. Whole seconds in years 1970–9999 (nearly every row) take a
/// direct path; the rest go through jiff.
pub(crate) fn render_time(micros: i64) -> String {
    const DAY: i64 = 86_400;
    if micros >= 0 && micros % 1_000_000 == 0 && micros < 253_402_300_800_000_000 {
        let secs = micros / 1_000_000;
        let (days, rem) = (secs / DAY, secs % DAY);
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        // Digit by digit: this runs for every time column of every row read.
        let mut out = String::with_capacity(20);
        let fields = [
            (year / 100, None),
            (year % 100, Some('-')),
            (month, Some('-')),
            (day, Some('T')),
            (rem / 3600, Some(':')),
            (rem % 3600 / 60, Some(':')),
            (rem % 60, Some('Z')),
        ];
        for (n, sep) in fields {
            out.push(char::from(b'0' + (n / 10) as u8));
            out.push(char::from(b'0' + (n % 10) as u8));
            out.extend(sep);
        }
        return out;
    }
    jiff::Timestamp::from_microsecond(micros)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// A number as JSON: whole numbers without a fraction (`5`, not `5.0`).
pub(crate) fn number_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// Does `s` look like an absolute URL (`scheme:rest`, no spaces)?
pub(crate) fn is_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut sb = scheme.bytes();
    matches!(sb.next(), Some(c) if c.is_ascii_alphabetic())
        && sb.all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.')
        && !rest.is_empty()
        && !s.chars().any(char::is_whitespace)
}

/// What a column of this type takes, for a refusal: `jog.miles is a number`.
pub(crate) fn type_sentence(component: &str, column: &str, ty: ColumnType) -> String {
    let what = match ty {
        ColumnType::Text => "text",
        ColumnType::Number => "a number",
        ColumnType::Bool => "true or false",
        ColumnType::Time => "a time, like 2026-09-01 or 2026-09-01T10:00:00Z",
        ColumnType::Url => "a url, like https://example.com/",
        ColumnType::Ref => "a ref — a $name, an eid, an alias or a person (@handle)",
    };
    format!("{component}.{column} is {what}")
}

/// Reads a JSON value of the wire under a (non-ref) column type.
pub(crate) fn from_json(value: &Value, ty: ColumnType) -> Option<Sql> {
    Some(match (ty, value) {
        (_, Value::Null) => Sql::Null,
        (ColumnType::Text, Value::String(s)) => Sql::Text(s.clone()),
        (ColumnType::Number, Value::Number(n)) => Sql::Real(n.as_f64().filter(|f| f.is_finite())?),
        (ColumnType::Bool, Value::Bool(b)) => Sql::Integer(i64::from(*b)),
        (ColumnType::Time, Value::String(s)) => Sql::Integer(parse_time(s)?),
        (ColumnType::Url, Value::String(s)) if is_url(s) => Sql::Text(s.clone()),
        _ => return None,
    })
}

/// Reads a filter-line value (text) under a (non-ref) column type.
pub(crate) fn from_text(value: &str, ty: ColumnType) -> Option<Sql> {
    Some(match ty {
        ColumnType::Text | ColumnType::Url | ColumnType::Ref => Sql::Text(value.to_string()),
        ColumnType::Number => {
            Sql::Real(value.trim().parse::<f64>().ok().filter(|f| f.is_finite())?)
        }
        ColumnType::Bool => match value {
            "true" => Sql::Integer(1),
            "false" => Sql::Integer(0),
            _ => return None,
        },
        ColumnType::Time => Sql::Integer(parse_time(value.trim())?),
    })
}

/// Renders a kept value of a (non-ref) column as JSON.
pub(crate) fn to_json(value: Sql, ty: ColumnType) -> Value {
    match (ty, value) {
        (_, Sql::Null | Sql::Blob(_)) => Value::Null,
        (ColumnType::Number, Sql::Real(f)) => number_json(f),
        (ColumnType::Number, Sql::Integer(i)) => number_json(i as f64),
        (ColumnType::Bool, Sql::Integer(i)) => Value::Bool(i != 0),
        (ColumnType::Time, Sql::Integer(i)) => Value::String(render_time(i)),
        (_, Sql::Text(s)) => Value::String(s),
        (_, Sql::Integer(i)) => Value::from(i),
        (_, Sql::Real(f)) => number_json(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let midnight = parse_time("2026-09-01").unwrap();
        assert_eq!(parse_time("2026-09-01T00:00:00Z"), Some(midnight));
        assert_eq!(parse_time("2026-09-01T02:00:00+02:00"), Some(midnight));
        assert_eq!(render_time(midnight), "2026-09-01T00:00:00Z");
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn the_direct_rendering_is_jiffs() {
        let jiff = |m: i64| jiff::Timestamp::from_microsecond(m).unwrap().to_string();
        let mut m: i64 = 0;
        while m < 253_402_300_800_000_000 {
            assert_eq!(render_time(m), jiff(m), "{m}");
            m += 7_777_777_000_000; // ~90 days and some seconds
        }
        for m in [
            0,
            951_782_400_000_000,
            4_107_542_399_000_000,
            1_500_000,
            -1_000_000,
        ] {
            assert_eq!(render_time(m), jiff(m), "{m}");
        }
    }

    #[test]
    fn numbers_and_urls() {
        assert_eq!(number_json(5.0), serde_json::json!(5));
        assert_eq!(number_json(5.5), serde_json::json!(5.5));
        assert!(is_url("https://example.com/x"));
        assert!(!is_url("example dot com"));
        assert!(!is_url("1http://x"));
    }
}
