//! When, as the person's pages say it: a date and time in UTC, or how far
//! from now (the host's wording).

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

/// How far from now a moment is — "2 minutes ago", "in 40 minutes" —
/// in the host's one wording ([`shed_host::moments`]), as the pages name it.
pub(crate) use shed_host::moments::{relative as ago, relative_text as ago_text};

/// A moment (Unix seconds) as a page shows it: how far from now, in a
/// `<time>` whose `title` is the exact time (UTC), shown on hover.
pub(crate) fn moment_seconds(at: i64) -> String {
    match jiff::Timestamp::from_second(at) {
        Ok(at) => time_element(at),
        Err(_) => at.to_string(),
    }
}

/// [`moment_seconds`] of an RFC 3339 moment, as the host's stamps keep
/// one; the text itself (escaped) when it does not read as one.
pub(crate) fn moment_text(at: &str) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(at) => time_element(at),
        Err(_) => crate::reply::escape(at),
    }
}

fn time_element(at: jiff::Timestamp) -> String {
    format!(
        "<time datetime=\"{at}\" title=\"{}\">{}</time>",
        minutes(at),
        ago(at.as_second(), jiff::Timestamp::now().as_second())
    )
}
