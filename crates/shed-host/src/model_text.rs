//! The text a model reads of an answer: the answer's lines, then its data as
//! compact JSON (the spec's answer — most MCP clients hand a model only the
//! text). Past [`ANSWER_TEXT_BYTES`] the text keeps the answer's first line,
//! the data with only its first rows, each whole, and a last line saying how
//! many rows were left out and how to read them. A row is never cut.

use serde_json::Value;

/// The most bytes of text one answer hands a model: about 6,000 tokens —
/// a few dozen rows of a board, or a few apps' commands — and under the
/// harness's own bound for one tool result (32 KiB), with room for the
/// summary it puts beside an answer. The data itself (MCP's
/// `structuredContent`, the broker's `body`) is never bounded by it.
pub const ANSWER_TEXT_BYTES: usize = 24 * 1024;

/// Where an answer's rows are in its JSON and what its last line calls them.
pub(crate) struct Rows {
    /// Paths of keys, each leading to an array at every step: the elements
    /// of the last array are rows, kept whole or left out, in document
    /// order; those of an array before it hold rows (a space's apps).
    pub at: &'static [&'static [&'static str]],
    /// `row`, `rows`.
    pub one: &'static str,
    pub many: &'static str,
    /// How to read the rows left out, given how many the text shows.
    pub how: Box<dyn Fn(usize) -> String>,
}

impl Rows {
    pub(crate) fn new(
        at: &'static [&'static [&'static str]],
        one: &'static str,
        many: &'static str,
        how: impl Fn(usize) -> String + 'static,
    ) -> Rows {
        Rows {
            at,
            one,
            many,
            how: Box::new(how),
        }
    }
}

/// `lines`, then `data` as compact JSON, within `bound` bytes where the
/// answer's first line and its last line leave room for a row.
pub(crate) fn model_text(lines: &str, data: &Value, rows: &Rows, bound: usize) -> String {
    let json = data.to_string();
    if lines.len() + 1 + json.len() <= bound {
        return format!("{lines}\n{json}");
    }
    let head = lines.lines().next().unwrap_or("");
    let total = count(data, rows);
    // A first guess at the room the rows have, beside the last line with
    // its counts at their widest.
    let widest = tail(rows, total, 0)
        .len()
        .max(tail(rows, total, total).len());
    let room = bound.saturating_sub(head.len() + 1 + 1 + widest);
    let lengths = row_lengths(data, rows);
    let skeleton = pruned(data, rows, 0).to_string().len();
    let mut shown = 0;
    let mut used = skeleton;
    for length in &lengths {
        // The row and the comma before it.
        if used + length + 1 > room {
            break;
        }
        used += length + 1;
        shown += 1;
    }
    // A space's own fields, kept with its first row, are not in the
    // guess, and the last line's counts (how many are shown, the `limit=`
    // of how to read on) change with the rows kept: shed rows from the end
    // until the whole text fits.
    let fits = |kept: &str, last: &str| head.len() + 1 + kept.len() + 1 + last.len() <= bound;
    let mut kept = pruned(data, rows, shown).to_string();
    let mut last = tail(rows, total, shown);
    while !fits(&kept, &last) && shown > 0 {
        shown -= 1;
        kept = pruned(data, rows, shown).to_string();
        last = tail(rows, total, shown);
    }
    if !fits(&kept, &last) {
        // Not even the answer without its rows fits: the line alone.
        return format!("{head}\n{last}");
    }
    format!("{head}\n{kept}\n{last}")
}

/// The last line of a bounded text: how many rows are left out, where they
/// are whole, and how to read them.
fn tail(rows: &Rows, total: usize, shown: usize) -> String {
    let left = total - shown;
    let noun = if left == 1 { rows.one } else { rows.many };
    format!(
        "… and {left} more {noun} not shown here (the first {shown} of {total} are above, each whole; \
         the answer's structured data holds them all) — {}",
        (rows.how)(shown)
    )
}

/// How many rows `data` holds.
fn count(data: &Value, rows: &Rows) -> usize {
    rows.at.iter().map(|path| count_at(data, path)).sum()
}

fn count_at(value: &Value, path: &[&str]) -> usize {
    let Some((key, rest)) = path.split_first() else {
        return 1;
    };
    match value.get(key) {
        Some(Value::Array(items)) => items.iter().map(|item| count_at(item, rest)).sum(),
        _ => 0,
    }
}

/// Each row's length as compact JSON, in document order.
fn row_lengths(data: &Value, rows: &Rows) -> Vec<usize> {
    let mut lengths = Vec::new();
    for path in rows.at {
        lengths_at(data, path, &mut lengths);
    }
    lengths
}

fn lengths_at(value: &Value, path: &[&str], lengths: &mut Vec<usize>) {
    let Some((key, rest)) = path.split_first() else {
        lengths.push(value.to_string().len());
        return;
    };
    if let Some(Value::Array(items)) = value.get(key) {
        for item in items {
            lengths_at(item, rest, lengths);
        }
    }
}

/// `data` with only its first `keep` rows: an element holding rows is kept
/// while rows are, and left out, with all after it, once one was cut.
fn pruned(data: &Value, rows: &Rows, keep: usize) -> Value {
    let mut left = keep;
    let mut cut = false;
    let mut value = data.clone();
    for path in rows.at {
        value = prune(value, path, &mut left, &mut cut);
    }
    value
}

fn prune(mut value: Value, path: &[&str], left: &mut usize, cut: &mut bool) -> Value {
    let Some((key, rest)) = path.split_first() else {
        return value;
    };
    let Some(Value::Array(items)) = value.get_mut(*key) else {
        return value;
    };
    let mut kept = Vec::new();
    for item in std::mem::take(items) {
        if rest.is_empty() {
            if *left == 0 {
                *cut = true;
                break;
            }
            *left -= 1;
            kept.push(item);
            continue;
        }
        let holds = count_at(&item, rest);
        if *cut || (holds > 0 && *left == 0) {
            *cut = true;
            break;
        }
        kept.push(prune(item, rest, left, cut));
    }
    *items = kept;
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn rows_of(
        at: &'static [&'static [&'static str]],
        how: impl Fn(usize) -> String + 'static,
    ) -> Rows {
        Rows::new(at, "row", "rows", how)
    }

    fn board(n: usize, width: usize) -> Value {
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"num": i, "who": "x".repeat(width)}))
            .collect();
        json!({"rows": rows, "next": "c"})
    }

    #[test]
    fn a_small_answer_is_its_lines_then_its_json_whole() {
        let rows = rows_of(&[&["rows"]], |_: usize| String::new());
        let data = board(3, 3);
        let text = model_text("leaderboard: 3 rows in demo/runs", &data, &rows, 1024);
        assert_eq!(text, format!("leaderboard: 3 rows in demo/runs\n{data}"));
    }

    #[test]
    fn past_the_bound_the_first_rows_are_kept_whole_and_the_last_line_counts_the_rest() {
        let rows = rows_of(&[&["rows"]], |shown: usize| {
            format!("ask with limit={shown}")
        });
        let data = board(100, 40);
        let text = model_text(
            "board: 100 rows in demo/runs\nsecond line",
            &data,
            &rows,
            2048,
        );
        assert!(text.len() <= 2048, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "board: 100 rows in demo/runs");
        let kept: Value = serde_json::from_str(lines[1]).unwrap();
        let shown = kept["rows"].as_array().unwrap();
        assert!(!shown.is_empty());
        assert_eq!(shown[..], data["rows"].as_array().unwrap()[..shown.len()]);
        assert_eq!(kept["next"], "c");
        let n = shown.len();
        assert_eq!(
            lines[2],
            format!(
                "… and {} more rows not shown here (the first {n} of 100 are above, each whole; \
                 the answer's structured data holds them all) — ask with limit={n}",
                100 - n
            )
        );
    }

    #[test]
    fn rows_inside_rows_are_kept_in_order_and_their_holders_with_them() {
        let rows = rows_of(&[&["spaces", "apps"]], |_: usize| {
            "call commands with app".to_string()
        });
        let apps = |n: usize| -> Vec<Value> {
            (0..n)
                .map(|i| json!({"at": format!("a{i}"), "pad": "p".repeat(50)}))
                .collect()
        };
        let data = json!({"spaces": [
            {"space": "empty", "apps": []},
            {"space": "big", "apps": apps(60)},
            {"space": "after", "apps": apps(2)},
        ]});
        let text = model_text("you belong to 3 spaces", &data, &rows, 2048);
        assert!(text.len() <= 2048);
        let kept: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        let spaces = kept["spaces"].as_array().unwrap();
        assert_eq!(
            spaces.len(),
            2,
            "the space after the cut is left out: {kept}"
        );
        assert_eq!(spaces[0]["space"], "empty");
        let shown = spaces[1]["apps"].as_array().unwrap().len();
        assert!(shown > 0 && shown < 60);
        assert!(
            text.lines()
                .last()
                .unwrap()
                .starts_with(&format!("… and {} more rows", 62 - shown))
        );
    }

    #[test]
    fn a_row_larger_than_the_bound_is_left_out_not_cut() {
        let rows = rows_of(&[&["read"]], |_: usize| "read fewer".to_string());
        let data = json!({"read": [{"path": "big.html", "text": "x".repeat(5000)}]});
        let text = model_text("demo/site: read 1 file", &data, &rows, 2048);
        assert!(text.len() <= 2048);
        assert!(!text.contains("xxx"), "{text}");
        assert!(text.ends_with("read fewer"), "{text}");
        let kept: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(kept, json!({"read": []}));
    }

    proptest! {
        /// Whatever the rows, the text stays in its bound, shows a prefix of
        /// the rows, each whole, and counts the rest.
        #[test]
        fn the_text_is_bounded_and_its_rows_whole(
            widths in proptest::collection::vec(0usize..600, 0..80),
            bound in 1024usize..8192,
        ) {
            let rows = rows_of(&[&["rows"]], |shown: usize| format!("limit={shown}"));
            let all: Vec<Value> = widths.iter().enumerate()
                .map(|(i, w)| json!({"num": i, "text": "é".repeat(*w)}))
                .collect();
            let data = json!({"rows": all});
            let text = model_text("first line", &data, &rows, bound);
            prop_assert!(text.len() <= bound, "{} > {bound}", text.len());
            let lines: Vec<&str> = text.lines().collect();
            prop_assert_eq!(lines[0], "first line");
            let kept: Value = serde_json::from_str(lines[1]).unwrap();
            let shown = kept["rows"].as_array().unwrap();
            prop_assert_eq!(&shown[..], &all[..shown.len()]);
            if shown.len() < all.len() {
                let expected = format!("… and {} more", all.len() - shown.len());
                prop_assert!(lines[2].starts_with(&expected));
            } else {
                prop_assert_eq!(lines.len(), 2);
            }
        }
    }
}
