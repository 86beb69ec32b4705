//! What `shed job create|end|list` needs beside the host: a job's globs when
//! none are given, `--ttl` read as a duration, and a job shown as a line or
//! as JSON.

use std::time::Duration;

use serde_json::{Value, json};
use shed_host::agents::{Job, MadeJob, now_millis};
use shed_host::{Host, HostError};

/// A job's life when `--ttl` is not given.
pub const DEFAULT_TTL: &str = "24h";

/// Why a job could not be made or found, as the sentence to show.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The request was not one: the sentence saying so.
    #[error("{0}")]
    BadInput(String),
    /// The host refused or failed.
    #[error(transparent)]
    Host(#[from] HostError),
}

/// Reads `--ttl`: `90s`, `30m`, `2h`, `1h30m`, `7d` (a day is 24 hours).
pub fn parse_ttl(text: &str) -> Result<Duration, JobError> {
    let bad = || {
        JobError::BadInput(format!(
            "--ttl {} is not a duration — say one like 90s, 30m, 2h, 1h30m or 7d",
            text.escape_debug()
        ))
    };
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
        digits.clear();
        any = true;
    }
    if !any || !digits.is_empty() || total == 0 {
        return Err(bad());
    }
    // Past a century a job's expiry is not a number of milliseconds we keep.
    if total > 100 * 365 * 86_400 {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

/// Makes a job for `person`, with its secret. A job given no globs at all
/// admits every command the person reaches (kept as the glob `*`); one
/// given only `--read-only` globs is a reader of those.
pub async fn create(
    host: &Host,
    person: &str,
    allow: Vec<String>,
    read_only: Vec<String>,
    ttl: Duration,
) -> Result<MadeJob, JobError> {
    let allow = if allow.is_empty() && read_only.is_empty() {
        vec!["*".to_string()]
    } else {
        allow
    };
    Ok(host.create_job(person, allow, read_only, Some(ttl)).await?)
}

fn when(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| millis.to_string())
}

/// One line of `shed job list`: the job's name, never its secret.
pub fn line(job: &Job) -> String {
    let state = job.state(now_millis());
    let until = match (job.ended_at, job.expires_at) {
        (Some(at), _) => format!("ended {}", when(at)),
        (None, Some(at)) => format!("until {}", when(at)),
        (None, None) => "no expiry".to_string(),
    };
    let mut scope = format!("allow {}", job.allow.join(" "));
    if !job.read_only.is_empty() {
        scope.push_str(&format!("; read-only {}", job.read_only.join(" ")));
    }
    format!(
        "{}  {}  {}  {}  {}",
        job.name,
        job.person.handle,
        state.as_str(),
        until,
        scope
    )
}

/// A job as `shed job list --json` shows it.
pub fn to_json(job: &Job) -> Value {
    json!({
        "name": job.name,
        "person": job.person.handle,
        "state": job.state(now_millis()).as_str(),
        "allow": job.allow,
        "readOnly": job.read_only,
        "createdAt": when(job.created_at),
        "expiresAt": job.expires_at.map(when),
        "endedAt": job.ended_at.map(when),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_units_people_say() {
        assert_eq!(parse_ttl("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_ttl("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_ttl("7d").unwrap(), Duration::from_secs(7 * 86_400));
        for bad in [
            "",
            "5",
            "h",
            "0s",
            "1x",
            "-1h",
            "99999999999999999999d",
            "1h 2",
        ] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
        assert!(
            parse_ttl("2q")
                .unwrap_err()
                .to_string()
                .starts_with("--ttl 2q is not a duration")
        );
    }

    proptest::proptest! {
        #[test]
        fn any_ttl_text_reads_or_is_refused_without_panic(text in ".{0,24}") {
            let _ = parse_ttl(&text);
        }
    }
}
