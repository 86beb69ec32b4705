//! The CLI's lists (`shed person list`, `token list`, `app list`, `job
//! list`, …): a header row, then a row per item, each column padded to its
//! widest cell, so a name holding spaces keeps its column; and times as a
//! person reads them, to the minute in UTC. A cell holds what people and
//! agents chose (names, titles, sentences), so each is written escaped
//! (`shed_host::app_data::plain`): a control or bidirectional formatting
//! character, a newline too, shows as its escape and keeps the row a row.

use shed_host::app_data::plain;

/// The rows under `headers`, every column but the last padded to its
/// widest cell and two spaces apart, each cell escaped; `none` when there
/// are no rows.
pub fn table(headers: &[&str], rows: &[Vec<String>], none: &str) -> String {
    if rows.is_empty() {
        return none.to_string();
    }
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| plain(cell, false)).collect())
        .collect();
    let every = std::iter::once(&header).chain(&rows);
    let mut widths = vec![0; headers.len()];
    for row in every.clone() {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    every
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `2026-12-01 18:04 UTC`: an RFC 3339 time to the minute, in UTC; what
/// does not read as one is shown as it is.
pub fn time(rfc3339: &str) -> String {
    rfc3339
        .parse::<jiff::Timestamp>()
        .map_or_else(|_| rfc3339.to_string(), minute)
}

/// [`time`] of Unix seconds, or `none`.
pub fn seconds(at: Option<i64>, none: &str) -> String {
    at.and_then(|at| jiff::Timestamp::from_second(at).ok())
        .map_or_else(|| none.to_string(), minute)
}

/// [`time`] of Unix milliseconds.
pub fn millis(at: i64) -> String {
    jiff::Timestamp::from_millisecond(at).map_or_else(|_| at.to_string(), minute)
}

fn minute(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// `1 token`, `2 tokens`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_hold_whatever_a_cell_holds() {
        let rows = vec![
            vec![
                "ada".to_string(),
                "Ada Love Lace".to_string(),
                "x".to_string(),
            ],
            vec!["bo".to_string(), "Bo".to_string(), "y".to_string()],
        ];
        assert_eq!(
            table(&["HANDLE", "NAME", "Z"], &rows, "none"),
            "HANDLE  NAME           Z\nada     Ada Love Lace  x\nbo      Bo             y"
        );
        assert_eq!(table(&["A"], &[], "nothing yet"), "nothing yet");
        let odd = vec![vec!["a\u{9b}2J\nb\u{202e}c".to_string(), "x".to_string()]];
        assert_eq!(
            table(&["A", "B"], &odd, ""),
            "A                         B\na\\u{9b}2J\\u{a}b\\u{202e}c  x"
        );
    }

    #[test]
    fn times_read_to_the_minute() {
        assert_eq!(
            time("2026-12-01T18:04:59.123456789Z"),
            "2026-12-01 18:04 UTC"
        );
        assert_eq!(seconds(Some(0), "never"), "1970-01-01 00:00 UTC");
        assert_eq!(seconds(None, "never"), "never");
    }
}
