//! The opaque `after` cursor of a listing: the order it belongs to (the
//! line's `order=` as written, empty for newest first), the last row's sort
//! value and its row id, as hex of a small JSON object — keyset paging,
//! stable under inserts.

use crate::values::Sql;
use serde_json::{Value, json};

use crate::StoreError;

/// The cursor after a row: `order` its line's order, `value` the row's sort value, `id` its row id.
pub(crate) fn encode(order: &str, value: &Sql, id: i64) -> String {
    let v = match value {
        Sql::Integer(i) => json!(["i", i]),
        Sql::Real(f) => json!(["r", f]),
        Sql::Text(s) => json!(["t", s]),
        _ => json!(["n"]),
    };
    hex::encode(json!({ "o": order, "v": v, "i": id }).to_string())
}

/// The sort value and row id a cursor holds; refused when it is not a cursor
/// of a line with this `order`.
pub(crate) fn decode(cursor: &str, order: &str) -> Result<(Sql, i64), StoreError> {
    let bad = || {
        StoreError::refused(format!(
            "after takes the next of an earlier answer to the same line — {cursor} is not one"
        ))
    };
    let bytes = hex::decode(cursor).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if v.get("o").and_then(Value::as_str) != Some(order) {
        return Err(bad());
    }
    let id = v.get("i").and_then(Value::as_i64).ok_or_else(bad)?;
    let key = v.get("v").and_then(Value::as_array).ok_or_else(bad)?;
    let value = match (key.first().and_then(Value::as_str), key.get(1)) {
        (Some("i"), Some(n)) => Sql::Integer(n.as_i64().ok_or_else(bad)?),
        (Some("r"), Some(n)) => Sql::Real(n.as_f64().ok_or_else(bad)?),
        (Some("t"), Some(Value::String(s))) => Sql::Text(s.clone()),
        (Some("n"), None) => Sql::Null,
        _ => return Err(bad()),
    };
    Ok((value, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_others() {
        let c = encode("-.jog.miles", &Sql::Real(5.5), 42);
        assert_eq!(decode(&c, "-.jog.miles").unwrap(), (Sql::Real(5.5), 42));
        assert!(decode(&c, "").is_err());
        assert!(decode("zz", "").is_err());
    }
}
