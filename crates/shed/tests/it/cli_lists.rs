//! The CLI's lists read as tables (issue #24, point 13): a header row,
//! times to the minute in UTC (no nanoseconds), columns that hold when a
//! name holds spaces, and no "1 apps".

use crate::broker_support::{deploy_run_club, shed};

/// The cells of a row of a CLI list: its columns are two spaces apart or
/// more, a cell's own spaces single.
pub fn cells(row: &str) -> Vec<&str> {
    row.split("  ")
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// The rows of a CLI list under its header, as cells.
pub fn rows(list: &str) -> Vec<Vec<&str>> {
    list.lines().skip(1).map(cells).collect()
}

/// Whether every row's cells start where the header's columns do: each
/// header word's column holds a cell's first character, after a space.
fn columns_hold(list: &str) {
    let mut lines = list.lines();
    let header = lines.next().expect("a header row");
    let starts: Vec<usize> = header
        .char_indices()
        .filter(|(i, c)| !c.is_whitespace() && (*i == 0 || header[..*i].ends_with("  ")))
        .map(|(i, _)| i)
        .collect();
    assert!(starts.len() > 1, "a header row of columns: {header}");
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        for start in &starts[1..] {
            assert!(
                chars.get(start - 1) == Some(&' ')
                    && chars.get(*start).is_some_and(|c| !c.is_whitespace()),
                "a cell of `{line}` is out of its column under `{header}`"
            );
        }
    }
}

/// `2026-12-01 18:04 UTC`-shaped times only: no RFC 3339 with nanoseconds.
fn readable_times(list: &str) {
    assert!(
        list.split_whitespace()
            .all(|word| word.parse::<jiff::Timestamp>().is_err()),
        "no RFC 3339 times: {list}"
    );
    assert!(
        regex_free_minute(list),
        "a time to the minute in UTC: {list}"
    );
}

/// Whether some word reads `YYYY-MM-DD HH:MM UTC`.
fn regex_free_minute(list: &str) -> bool {
    list.match_indices(" UTC").any(|(i, _)| {
        let before: Vec<char> = list[..i].chars().rev().take(16).collect();
        let shape: String = before
            .into_iter()
            .rev()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        shape == "9999-99-99 99:99"
    })
}

#[test]
fn lists_have_a_header_readable_times_and_columns_that_hold() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d");
    crate::data_place::make_private(&data);
    shed(&data, &["person", "add", "ada", "--name", "Ada Love Lace"]);
    shed(&data, &["person", "add", "bo", "--name", "Bo"]);
    shed(&data, &["space", "add", "demo", "--owner", "ada"]);
    shed(&data, &["member", "add", "demo", "bo", "--role", "viewer"]);
    deploy_run_club(
        &data,
        "demo/runs",
        &["--as", "ada", "--title", "Run club of the week"],
    );
    shed(
        &data,
        &["token", "create", "ada", "--name", "my old laptop"],
    );
    shed(&data, &["token", "create", "bo", "--ttl", "30d"]);
    shed(
        &data,
        &["job", "create", "--person", "ada", "--allow", "demo/runs.*"],
    );

    let people = shed(&data, &["person", "list"]);
    assert!(people.starts_with("HANDLE"), "{people}");
    assert_eq!(rows(&people), [["ada", "Ada Love Lace"], ["bo", "Bo"]]);
    columns_hold(&people);
    let spaces = shed(&data, &["space", "list"]);
    assert!(
        !spaces.contains("1 apps") && !spaces.contains("1 members"),
        "{spaces}"
    );
    columns_hold(&spaces);
    columns_hold(&shed(&data, &["member", "list", "demo"]));
    for list in [
        shed(&data, &["token", "list"]),
        shed(&data, &["app", "list"]),
        shed(&data, &["app", "list", "--as", "ada"]),
        shed(&data, &["job", "list"]),
    ] {
        assert!(!list.contains("1 apps"), "{list}");
        readable_times(&list);
        columns_hold(&list);
    }
}
