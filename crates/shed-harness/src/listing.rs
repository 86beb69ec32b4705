//! The `list_commands` answer: entries with signatures, the `detail` schemas,
//! `hidden`, `omitted`, `compacted`, and the model bound that compacts the
//! listing's tail; and the label of what a listing showed.

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, CatalogRow};
use crate::labels::Label;
use crate::schema::detail_schema;

/// The most names `detail` may carry.
pub const DETAIL_MAX_NAMES: usize = 16;

/// The listing's notice about effects.
pub const NOTICE: &str = "A command's effect is shown only where the host declares it; assume a command without a declared read effect may change the person's data. Only entries marked readOnlyGranted can go through run_read_command.";

/// Builds the `list_commands` result within `bound` bytes of JSON.
///
/// The first entries are kept whole and the rest lose their description
/// (`compacted`); entries named in `detail` are always whole and carry their
/// `inputSchema`. Entries that do not fit even without description are left
/// out and counted in `omitted` with the rows the catalog could not hold.
pub fn render(catalog: &Catalog, detail: &[String], bound: usize, output_id: &str) -> Value {
    let rows = catalog.rows();
    let is_detail: Vec<bool> = rows
        .iter()
        .map(|r| !r.withheld && detail.contains(&r.name))
        .collect();
    // Sizes are counted, not serialized, so a large catalog costs little;
    // only the entries shown are built.
    // Each row's strings are measured once: the compact size, and the whole
    // size as the compact one plus the description.
    let (whole_sizes, compact_sizes): (Vec<usize>, Vec<usize>) = rows
        .iter()
        .zip(&is_detail)
        .map(|(row, &d)| {
            if d {
                let whole = json_len(&entry(row, true, true));
                (whole, whole)
            } else {
                let compact = entry_len(row, false);
                (compact + description_len(row), compact)
            }
        })
        .unzip();
    let unknown: Vec<&String> = detail
        .iter()
        .filter(|n| catalog.shown(n).is_none())
        .collect();
    // The envelope with generous room for the counters' digits.
    let mut envelope = json!({
        "outputId": output_id,
        "status": "ok",
        "notice": NOTICE,
        "entries": [],
        "hidden": catalog.hidden,
        "omitted": usize::MAX,
        "compacted": usize::MAX,
    });
    if !unknown.is_empty() {
        envelope["detailNotFound"] = json!(unknown);
    }
    let base = json_len(&envelope);

    // Which entries fit at all: every detail entry, then compact entries in
    // order while they fit.
    let mut used = base
        + is_detail
            .iter()
            .zip(&whole_sizes)
            .filter(|(d, _)| **d)
            .map(|(_, s)| s + 1)
            .sum::<usize>();
    let mut shown = vec![false; rows.len()];
    let mut omitted = catalog.omitted;
    for i in 0..rows.len() {
        if rows[i].withheld {
            continue;
        }
        if is_detail[i] {
            shown[i] = true;
        } else if used + compact_sizes[i] < bound {
            shown[i] = true;
            used += compact_sizes[i] + 1;
        } else {
            omitted += 1;
        }
    }
    // Keep the first entries whole while the whole listing stays in bound.
    let mut whole_upto = 0;
    for i in 0..rows.len() {
        if !shown[i] || is_detail[i] {
            whole_upto = i + 1;
            continue;
        }
        let extra = whole_sizes[i] - compact_sizes[i];
        if used + extra > bound {
            break;
        }
        used += extra;
        whole_upto = i + 1;
    }
    let mut compacted = 0;
    let mut entries = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        if !shown[i] {
            continue;
        }
        if i < whole_upto || is_detail[i] || row.description.is_empty() {
            entries.push(entry(row, true, is_detail[i]));
        } else {
            compacted += 1;
            entries.push(entry(row, false, false));
        }
    }
    envelope["entries"] = Value::Array(entries);
    envelope["omitted"] = json!(omitted);
    envelope["compacted"] = json!(compacted);
    envelope
}

/// The label of what a rendered listing showed the model: the join of its
/// entries' rows' labels, a row without one taking `unlabeled` (the label of
/// the call's input, as an unlabeled answer does).
pub fn shown_label(catalog: &Catalog, listed: &Value, unlabeled: &Label) -> Label {
    listed["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["name"].as_str().and_then(|name| catalog.shown(name)))
        .fold(Label::bottom(), |so_far, row| {
            so_far.join(row.label.as_ref().unwrap_or(unlabeled))
        })
}

fn entry(row: &CatalogRow, with_description: bool, with_schema: bool) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(row.name));
    out.insert("signature".into(), json!(row.signature));
    out.insert("title".into(), json!(row.title));
    if with_description {
        out.insert("description".into(), json!(row.description));
    }
    if row.read_only_granted {
        out.insert("readOnlyGranted".into(), Value::Bool(true));
    }
    if row.confirm {
        out.insert("confirm".into(), Value::Bool(true));
    }
    if with_schema {
        out.insert("inputSchema".into(), detail_schema(&row.input_schema));
    }
    Value::Object(out)
}

/// The serialized size of [`entry`] without a schema, counted.
fn entry_len(row: &CatalogRow, with_description: bool) -> usize {
    let mut len = r#"{"name":,"signature":,"title":}"#.len()
        + json_str_len(&row.name)
        + json_str_len(&row.signature)
        + json_str_len(&row.title);
    if with_description {
        len += description_len(row);
    }
    if row.read_only_granted {
        len += r#","readOnlyGranted":true"#.len();
    }
    if row.confirm {
        len += r#","confirm":true"#.len();
    }
    len
}

/// What an entry's description adds to its serialized size.
fn description_len(row: &CatalogRow) -> usize {
    r#","description":"#.len() + json_str_len(&row.description)
}

/// The length of a string serialized as JSON, quotes included.
pub fn json_str_len(text: &str) -> usize {
    // Most text has nothing to escape; counting that is quick.
    let escaped = text
        .bytes()
        .filter(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .count();
    if escaped == 0 {
        return text.len() + 2;
    }
    2 + text
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// The serialized size of a JSON value, in bytes.
pub fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value)
        .map(|v| v.len())
        .unwrap_or(usize::MAX / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(n: usize, description: &str) -> Catalog {
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"name": format!("c{i}"), "title": "t", "description": description, "inputSchema": {"type": "object", "x-k": 1, "properties": {"a": {"type": "string"}}}}))
            .collect();
        Catalog::from_listing(&json!({ "commands": rows })).unwrap()
    }

    #[test]
    fn counted_sizes_match_serialized_ones() {
        for text in ["", "plain", "q\"b\\n\n\t\u{1}\u{1f}é…", "\u{7f}\u{8}\u{c}"] {
            assert_eq!(
                json_str_len(text),
                json!(text).to_string().len(),
                "{text:?}"
            );
        }
        let cat = catalog(2, "a \"description\"\n");
        for row in cat.rows() {
            assert_eq!(entry_len(row, true), json_len(&entry(row, true, false)));
            assert_eq!(entry_len(row, false), json_len(&entry(row, false, false)));
        }
    }

    #[test]
    fn everything_whole_when_it_fits() {
        let out = render(&catalog(3, "d"), &[], 32 * 1024, "o1");
        assert_eq!(out["compacted"], 0);
        assert_eq!(out["omitted"], 0);
        assert_eq!(out["entries"][2]["description"], "d");
        assert!(out["entries"][0].get("inputSchema").is_none());
    }

    #[test]
    fn a_small_bound_compacts_the_tail_but_never_detail() {
        let cat = catalog(40, &"x".repeat(200));
        let out = render(&cat, &["c30".to_string()], 4096, "o1");
        assert!(json_len(&out) <= 4096, "{}", json_len(&out));
        let entries = out["entries"].as_array().unwrap();
        let compacted = out["compacted"].as_u64().unwrap() as usize;
        assert!(compacted > 0);
        let whole_prefix = entries
            .iter()
            .take_while(|e| e.get("description").is_some())
            .count();
        assert!(whole_prefix > 0);
        let c30 = entries.iter().find(|e| e["name"] == "c30").unwrap();
        assert!(c30.get("description").is_some());
        assert_eq!(
            c30["inputSchema"],
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
        let without = entries
            .iter()
            .filter(|e| e.get("description").is_none())
            .count();
        assert_eq!(without, compacted);
    }

    #[test]
    fn the_label_shown_is_the_join_of_the_entries_shown() {
        let cat = Catalog::from_listing(&json!({"commands": [
            {"name": "a", "ifc": {"readers": ["space:demo", "space:ops"], "integrity": "trusted"}},
            {"name": "b", "ifc": {"readers": ["space:demo"], "integrity": "untrusted"}},
            {"name": "c"},
        ]}))
        .unwrap();
        let context = Label::bottom();
        let all = render(&cat, &[], 32 * 1024, "o1");
        assert_eq!(
            shown_label(&cat, &all, &context).to_json(),
            json!({"readers": ["space:demo"], "integrity": "untrusted"})
        );
        let mut only_a = all.clone();
        only_a["entries"] = json!([all["entries"][0]]);
        assert_eq!(
            shown_label(&cat, &only_a, &context).to_json(),
            json!({"readers": ["space:demo", "space:ops"], "integrity": "trusted"})
        );
    }

    #[test]
    fn a_tiny_bound_leaves_entries_out_as_omitted() {
        let out = render(&catalog(200, "d"), &[], 2048, "o1");
        assert!(json_len(&out) <= 2048);
        let shown = out["entries"].as_array().unwrap().len();
        assert_eq!(shown + out["omitted"].as_u64().unwrap() as usize, 200);
    }
}
