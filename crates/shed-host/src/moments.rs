//! When, as a person says it: a moment relative to now — "just now",
//! "2 minutes ago", "in 40 minutes", past a week its date — the one
//! wording of every page and sentence that names a time (pages put the
//! exact time on hover, in a `<time>` element's `title`).

/// How far from `now` the moment `at` is (both Unix seconds), as a person
/// says it: "just now" within a minute; "5 minutes ago", "2 hours ago",
/// "3 days ago" before now, "in 40 minutes", "in 2 hours" after; further
/// than a week either way, "on 2026-07-28" (UTC).
pub fn relative(at: i64, now: i64) -> String {
    let seconds = now.saturating_sub(at);
    let (distance, past) = (seconds.unsigned_abs(), seconds >= 0);
    let said = |n: u64, unit: &str| {
        let counted = if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        };
        if past {
            format!("{counted} ago")
        } else {
            format!("in {counted}")
        }
    };
    match distance {
        0..60 => "just now".to_string(),
        60..3_600 => said(distance / 60, "minute"),
        3_600..86_400 => said(distance / 3_600, "hour"),
        86_400..604_800 => said(distance / 86_400, "day"),
        _ => jiff::Timestamp::from_second(at).map_or_else(
            |_| if past { "long ago" } else { "far ahead" }.to_string(),
            |at| format!("on {}", at.strftime("%Y-%m-%d")),
        ),
    }
}

/// [`relative`] to the clock now.
pub fn relative_to_now(at: i64) -> String {
    relative(at, jiff::Timestamp::now().as_second())
}

/// [`relative_to_now`] of an RFC 3339 moment, as the host's stamps keep
/// one; the text itself when it does not read as one.
pub fn relative_text(at: &str) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(then) => relative_to_now(then.as_second()),
        Err(_) => at.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_is_said_relative_to_now_either_way() {
        let now = 1_800_000_000;
        for (at, said) in [
            (now, "just now"),
            (now - 59, "just now"),
            (now + 30, "just now"),
            (now - 60, "1 minute ago"),
            (now - 120, "2 minutes ago"),
            (now + 40 * 60, "in 40 minutes"),
            (now - 2 * 3_600, "2 hours ago"),
            (now + 3_600, "in 1 hour"),
            (now - 3 * 86_400, "3 days ago"),
            (now + 86_400, "in 1 day"),
            (now - 8 * 86_400, "on 2027-01-07"),
            (now + 8 * 86_400, "on 2027-01-23"),
        ] {
            assert_eq!(relative(at, now), said, "{at}");
        }
    }

    #[test]
    fn a_stamp_that_is_not_a_moment_is_shown_as_it_is() {
        assert_eq!(relative_text("yesterday-ish"), "yesterday-ish");
        assert_eq!(
            relative_text(&jiff::Timestamp::now().to_string()),
            "just now"
        );
    }
}
