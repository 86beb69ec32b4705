//! When, as the person's pages say it: a date and time in UTC, or how long
//! ago.

/// Unix seconds as a date and time (UTC), or `never`.
pub(super) fn when_seconds(at: Option<i64>, never: &str) -> String {
    at.and_then(|at| jiff::Timestamp::from_second(at).ok())
        .map_or_else(|| never.to_string(), minutes)
}

/// Unix milliseconds as a date and time (UTC), or `never`.
pub(super) fn when_millis(at: Option<i64>, never: &str) -> String {
    at.and_then(|at| jiff::Timestamp::from_millisecond(at).ok())
        .map_or_else(|| never.to_string(), minutes)
}

fn minutes(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// How long ago a moment was, as a person says it: "just now", "5 minutes
/// ago", "2 hours ago", "3 days ago", or past a week the date — `at` in Unix
/// seconds, `now` too.
pub(crate) fn ago(at: i64, now: i64) -> String {
    let seconds = (now - at).max(0);
    let plural = |n: i64, one: &str| {
        if n == 1 {
            format!("1 {one} ago")
        } else {
            format!("{n} {one}s ago")
        }
    };
    match seconds {
        0..60 => "just now".to_string(),
        60..3_600 => plural(seconds / 60, "minute"),
        3_600..86_400 => plural(seconds / 3_600, "hour"),
        86_400..604_800 => plural(seconds / 86_400, "day"),
        _ => jiff::Timestamp::from_second(at).map_or_else(
            |_| "long ago".to_string(),
            |at| format!("on {}", at.strftime("%Y-%m-%d")),
        ),
    }
}

/// [`ago`] of an RFC 3339 moment, as the host's stamps keep one; the text
/// itself when it does not read as one.
pub(crate) fn ago_text(at: &str) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(then) => ago(then.as_second(), jiff::Timestamp::now().as_second()),
        Err(_) => at.to_string(),
    }
}
