//! Columns and typed values of a result. Both targets describe a column's type as a JSON object —
//! the SQL Gateway's `logicalType` (`{"type":"DECIMAL","precision":10,"scale":2,"nullable":true}`,
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>)
//! and Confluent Cloud's `traits.schema.columns[].type` (same shape,
//! <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>) — and send values as
//! JSON (Confluent: scalars mostly as strings, observed on the service). [`typed`] turns a value
//! into what the type says: numbers as numbers, a DECIMAL as its exact text at the declared scale
//! (`12.50`; written as a JSON number with those digits by [`JsonCell`]), booleans as booleans,
//! timestamps as ISO-8601 strings with every fraction digit, NULL as null, nested values as arrays
//! and objects.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A column of a result: its name and its Flink SQL type as text (`BIGINT`, `DECIMAL(10, 2)`,
/// `TIMESTAMP(3)`, `STRING`, `ARRAY<INT>`, `BIGINT NOT NULL` is written `BIGINT`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
}

impl Column {
    /// A column from a name and a type object of either wire.
    pub fn from_type_object(name: &str, t: &Value) -> Column {
        Column {
            name: name.to_string(),
            type_name: type_text(t),
        }
    }
}

/// The Flink SQL text of a type object (`{"type":"VARCHAR","length":2147483647}` → `STRING`). A type
/// given as a plain string is kept as it is.
pub fn type_text(t: &Value) -> String {
    if let Some(s) = t.as_str() {
        return s.to_string();
    }
    let root = t["type"].as_str().unwrap_or("UNKNOWN");
    let num = |k: &str| t[k].as_u64();
    match root {
        "VARCHAR" if num("length") == Some(2_147_483_647) => "STRING".into(),
        "VARCHAR" | "CHAR" | "BINARY" | "VARBINARY" => match num("length") {
            Some(2_147_483_647) if root == "VARBINARY" => "BYTES".into(),
            Some(n) => format!("{root}({n})"),
            None => root.into(),
        },
        "DECIMAL" => match (num("precision"), num("scale")) {
            (Some(p), Some(s)) => format!("DECIMAL({p}, {s})"),
            (Some(p), None) => format!("DECIMAL({p})"),
            _ => "DECIMAL".into(),
        },
        "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP" => precision("TIMESTAMP", num("precision")),
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE" | "TIMESTAMP_LTZ" => {
            precision("TIMESTAMP_LTZ", num("precision"))
        }
        "TIMESTAMP_WITH_TIME_ZONE" => precision("TIMESTAMP WITH TIME ZONE", num("precision")),
        "TIME_WITHOUT_TIME_ZONE" | "TIME" => precision("TIME", num("precision")),
        "ARRAY" | "MULTISET" => format!(
            "{root}<{}>",
            type_text(either(t, "elementType", "element_type"))
        ),
        "MAP" => format!(
            "MAP<{}, {}>",
            type_text(either(t, "keyType", "key_type")),
            type_text(either(t, "valueType", "value_type"))
        ),
        "ROW" => {
            let fields: Vec<String> = t["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "{} {}",
                        f["name"].as_str().unwrap_or("?"),
                        type_text(
                            f.get("fieldType")
                                .or_else(|| f.get("field_type"))
                                .unwrap_or(&f["type"])
                        )
                    )
                })
                .collect();
            format!("ROW<{}>", fields.join(", "))
        }
        other => other.to_string(),
    }
}

/// A nested type's member under the SQL Gateway's camelCase key or Confluent's snake_case one
/// (`elementType`/`element_type`, `keyType`/`key_type`, `valueType`/`value_type`).
fn either<'a>(t: &'a Value, camel: &str, snake: &str) -> &'a Value {
    t.get(camel)
        .or_else(|| t.get(snake))
        .unwrap_or(&Value::Null)
}

/// The members of a nested type text, split at top-level commas: `MAP<STRING, ARRAY<INT>>` →
/// `["STRING", "ARRAY<INT>"]`; `ROW<a INT, b DECIMAL(10, 2)>` → `["a INT", "b DECIMAL(10, 2)"]`.
fn members(type_name: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (type_name.find('<'), type_name.rfind('>')) else {
        return Vec::new();
    };
    if close <= open {
        return Vec::new();
    }
    let inner = &type_name[open + 1..close];
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '`' => quoted = !quoted,
            '<' | '(' if !quoted => depth += 1,
            '>' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        out.push(last.to_string());
    }
    out
}

/// A ROW member `name TYPE` (the name may be back-quoted) as `(name, TYPE)`.
fn row_field(member: &str) -> (String, String) {
    let m = member.trim();
    if let Some(rest) = m.strip_prefix('`')
        && let Some(end) = rest.find('`')
    {
        return (rest[..end].to_string(), rest[end + 1..].trim().to_string());
    }
    match m.split_once(char::is_whitespace) {
        Some((n, t)) => (n.to_string(), t.trim().to_string()),
        None => (m.to_string(), "UNKNOWN".to_string()),
    }
}

/// Whether keys of this type are text (a map of them is a JSON object).
fn is_text_type(type_name: &str) -> bool {
    matches!(type_root(type_name), "STRING" | "VARCHAR" | "CHAR")
}

/// A map's entries from either wire: an object (SQL Gateway JSON), a list of `[key, value]` pairs
/// (Confluent) or of `{"key", "value"}` objects.
fn entries(v: &Value) -> Option<Vec<(Value, Value)>> {
    match v {
        Value::Object(m) => Some(
            m.iter()
                .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                .collect(),
        ),
        Value::Array(a) => a
            .iter()
            .map(|e| match e {
                Value::Array(p) if p.len() == 2 => Some((p[0].clone(), p[1].clone())),
                Value::Object(o) if o.contains_key("key") => Some((
                    o["key"].clone(),
                    o.get("value").cloned().unwrap_or(Value::Null),
                )),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Typed entries as a JSON object when the keys are text, else a list of `[key, value]` pairs.
fn entries_value(entries: Vec<(Value, Value)>, text_keys: bool) -> Value {
    if text_keys && entries.iter().all(|(k, _)| k.is_string() || k.is_null()) {
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.as_str().unwrap_or("null").to_string(), v))
                .collect(),
        )
    } else {
        Value::Array(
            entries
                .into_iter()
                .map(|(k, v)| Value::Array(vec![k, v]))
                .collect(),
        )
    }
}

/// A nested value: wire text holding JSON is read first.
fn nested(v: &Value, type_name: &str) -> Value {
    let parsed;
    let v = match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(p) if p.is_array() || p.is_object() => {
                parsed = p;
                &parsed
            }
            _ => return v.clone(),
        },
        _ => v,
    };
    let m = members(type_name);
    match type_root(type_name) {
        "ARRAY" => match (v, m.first()) {
            (Value::Array(a), Some(t)) => Value::Array(a.iter().map(|e| typed(e, t)).collect()),
            _ => v.clone(),
        },
        "MULTISET" => match (entries(v), m.first()) {
            (Some(es), Some(t)) => entries_value(
                es.into_iter()
                    .map(|(k, n)| (typed(&k, t), typed(&n, "INT")))
                    .collect(),
                is_text_type(t),
            ),
            _ => v.clone(),
        },
        "MAP" if m.len() == 2 => match entries(v) {
            Some(es) => entries_value(
                es.into_iter()
                    .map(|(k, x)| (typed(&k, &m[0]), typed(&x, &m[1])))
                    .collect(),
                is_text_type(&m[0]),
            ),
            None => v.clone(),
        },
        "ROW" => {
            let fields: Vec<(String, String)> = m.iter().map(|f| row_field(f)).collect();
            let mut out = serde_json::Map::new();
            match v {
                Value::Array(a) => {
                    for (i, (n, t)) in fields.iter().enumerate() {
                        out.insert(n.clone(), typed(a.get(i).unwrap_or(&Value::Null), t));
                    }
                }
                Value::Object(o) => {
                    for (n, t) in &fields {
                        out.insert(n.clone(), typed(o.get(n).unwrap_or(&Value::Null), t));
                    }
                }
                _ => return v.clone(),
            }
            Value::Object(out)
        }
        _ => v.clone(),
    }
}

fn precision(root: &str, p: Option<u64>) -> String {
    match p {
        Some(p) => format!("{root}({p})"),
        None => root.to_string(),
    }
}

/// The root of a type text: `DECIMAL(10, 2)` → `DECIMAL`, `ARRAY<INT>` → `ARRAY`.
pub fn type_root(type_name: &str) -> &str {
    let end = type_name.find(['(', '<', ' ']).unwrap_or(type_name.len());
    &type_name[..end]
}

/// A value as its type says (see module docs). Text that does not read as the type is kept as text.
pub fn typed(v: &Value, type_name: &str) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    match type_root(type_name) {
        "TINYINT"
        | "SMALLINT"
        | "INT"
        | "INTEGER"
        | "BIGINT"
        | "INTERVAL_YEAR_MONTH"
        | "INTERVAL_DAY_TIME" => match v {
            Value::String(s) => s
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| v.clone()),
            _ => v.clone(),
        },
        "FLOAT" | "DOUBLE" | "REAL" => match v {
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or_else(|| v.clone()),
            _ => v.clone(),
        },
        "DECIMAL" | "NUMERIC" | "DEC" => decimal(v, type_name),
        "BOOLEAN" => match v {
            Value::String(s) if s.eq_ignore_ascii_case("true") => Value::Bool(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Value::Bool(false),
            _ => v.clone(),
        },
        "ARRAY" | "MULTISET" | "MAP" | "ROW" => nested(v, type_name),
        "TIMESTAMP" | "TIMESTAMP_LTZ" => match v {
            Value::String(s) => {
                Value::String(iso_timestamp(s, type_root(type_name) != "TIMESTAMP"))
            }
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

/// A DECIMAL as the exact text of its value at the declared scale (see [`decimal_text`]), held as
/// a JSON string inside a [`Row`](super::Row) (a JSON number of `serde_json` is a double and would
/// lose digits) and written as a JSON number with exactly those digits by [`JsonCell`]. A wire
/// number (the SQL Gateway's JSON rows; [`quote_numbers`] keeps its text) is read by its text.
/// Text that is not a decimal is kept as it is.
fn decimal(v: &Value, type_name: &str) -> Value {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return v.clone(),
    };
    match decimal_text(&text, decimal_scale(type_name)) {
        Some(t) => Value::String(t),
        None => v.clone(),
    }
}

/// The declared scale of a DECIMAL type text: `DECIMAL(10, 2)` → 2, `DECIMAL(5)` → 0; `None` when
/// the text gives no precision (the digits received are then kept as they are).
pub fn decimal_scale(type_name: &str) -> Option<u32> {
    if !matches!(type_root(type_name), "DECIMAL" | "NUMERIC" | "DEC") {
        return None;
    }
    let open = type_name.find('(')?;
    let close = type_name[open..].find(')')? + open;
    let inner = &type_name[open + 1..close];
    match inner.split_once(',') {
        Some((_, s)) => s.trim().parse().ok(),
        None => inner.trim().parse::<u32>().ok().map(|_| 0),
    }
}

/// A decimal literal as plain text with exactly `scale` fraction digits: `12.5` → `12.50`,
/// `0E-10` (Java's `BigDecimal.toString`) → `0.0000000000`, `+007` → `7`, `-0.00` → `0.00`. Extra
/// fraction digits that are zeros are dropped down to the scale; non-zero ones are kept (a value is
/// never rounded). `None` when `text` is not a decimal literal (`[+-]digits[.digits][e±digits]`).
pub fn decimal_text(text: &str, scale: Option<u32>) -> Option<String> {
    let t = text.trim();
    let (neg, t) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || exp.unsigned_abs() > 10_000
    {
        return None;
    }
    // digits × 10^(point − len): the decimal point sits after `point` digits.
    let mut digits = format!("{int}{frac}");
    let mut point = int.len() as i64 + exp;
    if point < 0 {
        digits.insert_str(0, &"0".repeat(point.unsigned_abs() as usize));
        point = 0;
    }
    if point as usize > digits.len() {
        digits.push_str(&"0".repeat(point as usize - digits.len()));
    }
    let (i, f) = digits.split_at(point as usize);
    let i = i.trim_start_matches('0');
    let i = if i.is_empty() { "0" } else { i };
    let mut f = f.to_string();
    if let Some(s) = scale.map(|s| s as usize) {
        if f.len() < s {
            f.push_str(&"0".repeat(s - f.len()));
        } else {
            let keep = f.trim_end_matches('0').len().max(s);
            f.truncate(keep);
        }
    }
    let zero = i == "0" && f.bytes().all(|b| b == b'0');
    let sign = if neg && !zero { "-" } else { "" };
    Some(if f.is_empty() {
        format!("{sign}{i}")
    } else {
        format!("{sign}{i}.{f}")
    })
}

/// Every JSON number of a JSON text turned into a JSON string of its exact text (`[1, 12.50]` →
/// `["1", "12.50"]`), so that parsing keeps digits a double cannot hold (a `DECIMAL(38, 10)` of
/// the SQL Gateway's JSON rows); [`typed`] then reads each value by its column's type. Strings,
/// keys, `true`/`false`/`null` and layout are left as they are.
pub fn quote_numbers(json: &str) -> String {
    let b = json.as_bytes();
    let mut out = String::with_capacity(json.len() + 16);
    let (mut i, mut from) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                out.push_str(&json[from..start]);
                out.push('"');
                out.push_str(&json[start..i]);
                out.push('"');
                from = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&json[from.min(json.len())..]);
    out
}

/// A value of a column, serialised as JSON by its type: a DECIMAL (held as its exact text, see
/// `decimal`) as a JSON number with exactly those digits (`12.50`,
/// `12345678901234567890.1234567890`), inside ARRAY, MAP, MULTISET and ROW values too; every other
/// value as it is. So a DECIMAL column has one JSON type (number) on every row; a text that is not
/// a decimal literal (never sent by Flink) stays a string.
pub struct JsonCell<'a> {
    pub value: &'a Value,
    pub type_name: &'a str,
}

impl Serialize for JsonCell<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match (type_root(self.type_name), self.value) {
            ("DECIMAL" | "NUMERIC" | "DEC", Value::String(t)) if is_json_number(t) => {
                serde_json::value::RawValue::from_string(t.clone())
                    .map_err(serde::ser::Error::custom)?
                    .serialize(s)
            }
            ("ARRAY", Value::Array(a)) => {
                let m = members(self.type_name);
                let t = m.first().map_or("UNKNOWN", String::as_str);
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for e in a {
                    seq.serialize_element(&JsonCell {
                        value: e,
                        type_name: t,
                    })?;
                }
                seq.end()
            }
            ("MAP" | "MULTISET", Value::Array(a)) => {
                // `[key, value]` pairs (keys that are not text; multiset counts are INT).
                let m = members(self.type_name);
                let kt = m.first().map_or("UNKNOWN", String::as_str);
                let vt = if type_root(self.type_name) == "MAP" {
                    m.get(1).map_or("UNKNOWN", String::as_str)
                } else {
                    "INT"
                };
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for e in a {
                    match e.as_array().map(Vec::as_slice) {
                        Some([k, v]) => seq.serialize_element(&(
                            JsonCell {
                                value: k,
                                type_name: kt,
                            },
                            JsonCell {
                                value: v,
                                type_name: vt,
                            },
                        ))?,
                        _ => seq.serialize_element(e)?,
                    }
                }
                seq.end()
            }
            ("MAP" | "ROW", Value::Object(o)) => {
                let m = members(self.type_name);
                let fields: Vec<(String, String)> = if type_root(self.type_name) == "ROW" {
                    m.iter().map(|f| row_field(f)).collect()
                } else {
                    Vec::new()
                };
                let map_value = m.get(1).map_or("UNKNOWN", String::as_str);
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    let t = if fields.is_empty() {
                        map_value
                    } else {
                        fields
                            .iter()
                            .find(|(n, _)| n == k)
                            .map_or("UNKNOWN", |(_, t)| t.as_str())
                    };
                    map.serialize_entry(
                        k,
                        &JsonCell {
                            value: v,
                            type_name: t,
                        },
                    )?;
                }
                map.end()
            }
            _ => self.value.serialize(s),
        }
    }
}

/// Whether a text is a JSON number (`-?(0|[1-9]\d*)(\.\d+)?`, no exponent): what [`decimal_text`]
/// writes.
fn is_json_number(t: &str) -> bool {
    let u = t.strip_prefix('-').unwrap_or(t);
    let (i, f) = match u.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (u, None),
    };
    !i.is_empty()
        && i.bytes().all(|b| b.is_ascii_digit())
        && (i == "0" || !i.starts_with('0'))
        && f.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether two decimal texts stand for the same value (`12.50` and `12.5`, `-0.0` and `0`).
pub fn same_decimal(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> Option<(bool, String, String)> {
        let s = s.trim();
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        if s.contains(['e', 'E']) {
            return None;
        }
        let (i, f) = s.split_once('.').unwrap_or((s, ""));
        if !i.chars().chain(f.chars()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let i = i.trim_start_matches('0').to_string();
        let f = f.trim_end_matches('0').to_string();
        let zero = i.is_empty() && f.is_empty();
        Some((neg && !zero, i, f))
    }
    match (norm(a), norm(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.trim().parse::<f64>().ok() == b.trim().parse::<f64>().ok(),
    }
}

/// `2025-01-01 10:00:00.5` → `2025-01-01T10:00:00.5`; with `utc`, a `Z` is added when no zone is given.
pub fn iso_timestamp(s: &str, utc: bool) -> String {
    let mut t = s.trim().replacen(' ', "T", 1);
    let has_zone = t.ends_with('Z') || t[t.find('T').map_or(t.len(), |i| i)..].contains(['+', '-']);
    if utc && !has_zone {
        t.push('Z');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn type_texts_of_both_wires() {
        assert_eq!(
            type_text(&json!({"type":"VARCHAR","nullable":true,"length":2147483647})),
            "STRING"
        );
        assert_eq!(
            type_text(&json!({"type":"DECIMAL","precision":10,"scale":2})),
            "DECIMAL(10, 2)"
        );
        assert_eq!(
            type_text(&json!({"type":"TIMESTAMP_WITHOUT_TIME_ZONE","precision":3})),
            "TIMESTAMP(3)"
        );
        assert_eq!(
            type_text(&json!({"type":"ARRAY","elementType":{"type":"INTEGER"}})),
            "ARRAY<INTEGER>"
        );
        assert_eq!(
            type_text(&json!({"type":"ROW","fields":[{"name":"a","fieldType":{"type":"BIGINT"}}]})),
            "ROW<a BIGINT>"
        );
        assert_eq!(type_root("DECIMAL(10, 2)"), "DECIMAL");
    }

    #[test]
    fn values_follow_their_types() {
        assert_eq!(typed(&json!("42"), "BIGINT"), json!(42));
        assert_eq!(typed(&json!(42), "INT"), json!(42));
        assert_eq!(typed(&json!("1.5"), "DOUBLE"), json!(1.5));
        assert_eq!(typed(&json!("12.50"), "DECIMAL(10, 2)"), json!("12.50"));
        assert_eq!(typed(&json!(12.5), "DECIMAL(10, 2)"), json!("12.50"));
        assert_eq!(
            typed(&json!("12345678901234567890.12"), "DECIMAL(38, 2)"),
            json!("12345678901234567890.12")
        );
        assert_eq!(typed(&json!("TRUE"), "BOOLEAN"), json!(true));
        assert_eq!(
            typed(&json!("2025-01-01 10:00:00.5"), "TIMESTAMP(3)"),
            json!("2025-01-01T10:00:00.5")
        );
        assert_eq!(
            typed(&json!("2025-01-01 10:00:00"), "TIMESTAMP_LTZ(3)"),
            json!("2025-01-01T10:00:00Z")
        );
        assert_eq!(typed(&Value::Null, "BIGINT"), Value::Null);
        assert_eq!(typed(&json!("n/a"), "BIGINT"), json!("n/a"));
    }

    #[test]
    fn nested_types_of_both_wires_are_typed_recursively() {
        // Confluent's snake_case type objects.
        let t = json!({"type": "ROW", "fields": [
            {"name": "ids", "field_type": {"type": "ARRAY", "element_type": {"type": "INTEGER"}}},
            {"name": "m", "field_type": {"type": "MAP", "key_type": {"type": "VARCHAR", "length": 2147483647}, "value_type": {"type": "BIGINT"}}},
            {"name": "bag", "field_type": {"type": "MULTISET", "element_type": {"type": "INTEGER"}}}
        ]});
        let text = type_text(&t);
        assert_eq!(
            text,
            "ROW<ids ARRAY<INTEGER>, m MAP<STRING, BIGINT>, bag MULTISET<INTEGER>>"
        );
        // Confluent sends rows as arrays, maps and multisets as [key, value] pairs, scalars as text.
        let v = json!([["1", "2", null], [["a", "7"], ["b", null]], [["5", "2"]]]);
        assert_eq!(
            typed(&v, &text),
            json!({"ids": [1, 2, null], "m": {"a": 7, "b": null}, "bag": [[5, 2]]})
        );
        // The gateway's JSON: objects for maps and rows; non-text map keys as pairs.
        assert_eq!(
            typed(&json!({"1": "x"}), "MAP<INT, STRING>"),
            json!([[1, "x"]])
        );
        assert_eq!(
            typed(&json!({"b": "2", "a": "1"}), "ROW<a INT, b INT>"),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(
            typed(&json!(["x", "y"]), "MULTISET<STRING>"),
            json!(["x", "y"]),
            "not a multiset's shape: kept"
        );
        assert_eq!(
            typed(&json!([["x", 2]]), "MULTISET<STRING>"),
            json!({"x": 2})
        );
        assert_eq!(
            typed(&json!([["1", "2"], ["3"]]), "ARRAY<ARRAY<BIGINT>>"),
            json!([[1, 2], [3]])
        );
        assert_eq!(
            type_text(&json!({"type": "ARRAY", "elementType": {"type": "INTEGER"}})),
            "ARRAY<INTEGER>"
        );
    }

    #[test]
    fn decimals_keep_their_digits_at_the_declared_scale() {
        let d = |t: &str, s: Option<u32>| decimal_text(t, s);
        assert_eq!(d("12.5", Some(2)).as_deref(), Some("12.50"));
        assert_eq!(d("35", Some(2)).as_deref(), Some("35.00"));
        assert_eq!(d("0E-10", Some(10)).as_deref(), Some("0.0000000000"));
        assert_eq!(d("1.5E+2", Some(0)).as_deref(), Some("150"));
        assert_eq!(d("-1.25e-3", Some(5)).as_deref(), Some("-0.00125"));
        assert_eq!(d("+007.10", Some(1)).as_deref(), Some("7.1"));
        assert_eq!(d("-0.00", Some(2)).as_deref(), Some("0.00"));
        assert_eq!(d(".5", Some(1)).as_deref(), Some("0.5"));
        // Never rounded: a digit beyond the scale is kept.
        assert_eq!(d("1.234", Some(2)).as_deref(), Some("1.234"));
        assert_eq!(d("10.50", None).as_deref(), Some("10.50"));
        assert_eq!(
            d("12345678901234567890.123456789", Some(10)).as_deref(),
            Some("12345678901234567890.1234567890")
        );
        for bad in ["", "-", "1.2.3", "abc", "1e", "NaN", "."] {
            assert_eq!(d(bad, Some(2)), None, "{bad}");
        }
        assert_eq!(decimal_scale("DECIMAL(10, 2)"), Some(2));
        assert_eq!(decimal_scale("DECIMAL(5)"), Some(0));
        assert_eq!(decimal_scale("DECIMAL"), None);
        assert_eq!(decimal_scale("DECIMAL(10, 2) NOT NULL"), Some(2));
    }

    #[test]
    fn decimals_are_written_as_json_numbers_with_their_exact_digits() {
        let w = |v: Value, t: &str| {
            serde_json::to_string(&JsonCell {
                value: &typed(&v, t),
                type_name: t,
            })
            .unwrap()
        };
        assert_eq!(w(json!("12.5"), "DECIMAL(10, 2)"), "12.50");
        assert_eq!(
            w(json!("12345678901234567890.1234567890"), "DECIMAL(38, 10)"),
            "12345678901234567890.1234567890"
        );
        assert_eq!(w(json!("n/a"), "DECIMAL(10, 2)"), r#""n/a""#);
        assert_eq!(w(json!(null), "DECIMAL(10, 2)"), "null");
        assert_eq!(
            w(json!(["1.5", null]), "ARRAY<DECIMAL(5, 2)>"),
            "[1.50,null]"
        );
        assert_eq!(
            w(json!([["a", "2"]]), "MAP<STRING, DECIMAL(5, 1)>"),
            r#"{"a":2.0}"#
        );
        assert_eq!(
            w(json!([["2", "x"]]), "MAP<DECIMAL(3, 1), STRING>"),
            r#"[[2.0,"x"]]"#
        );
        assert_eq!(
            w(json!(["1", "7"]), "ROW<id INT, price DECIMAL(4, 2)>"),
            r#"{"id":1,"price":7.00}"#
        );
        assert_eq!(w(json!("x"), "STRING"), r#""x""#);
    }

    #[test]
    fn gateway_numbers_are_read_by_their_text() {
        let raw = r#"[{"kind":"INSERT","fields":[1,12345678901234567890.1234567890,"a\"1",-0.5e1,true,null,[1.10]]}]"#;
        let q = quote_numbers(raw);
        assert_eq!(
            q,
            r#"[{"kind":"INSERT","fields":["1","12345678901234567890.1234567890","a\"1","-0.5e1",true,null,["1.10"]]}]"#
        );
        let v: Value = serde_json::from_str(&q).unwrap();
        let f = &v[0]["fields"];
        assert_eq!(typed(&f[0], "BIGINT"), json!(1));
        assert_eq!(
            typed(&f[1], "DECIMAL(38, 10)"),
            json!("12345678901234567890.1234567890")
        );
        assert_eq!(typed(&f[3], "DOUBLE"), json!(-5.0));
        assert_eq!(typed(&f[6], "ARRAY<DECIMAL(3, 2)>"), json!(["1.10"]));
    }

    #[test]
    fn timestamps_keep_nanoseconds() {
        assert_eq!(
            typed(&json!("2025-01-01 10:00:00.123456789"), "TIMESTAMP(9)"),
            json!("2025-01-01T10:00:00.123456789")
        );
        assert_eq!(
            typed(&json!("2025-01-01 10:00:00.000000001"), "TIMESTAMP_LTZ(9)"),
            json!("2025-01-01T10:00:00.000000001Z")
        );
    }

    #[test]
    fn decimal_equality_ignores_trailing_zeros() {
        assert!(same_decimal("12.50", "12.5"));
        assert!(same_decimal("-0.00", "0"));
        assert!(same_decimal("007", "7.0"));
        assert!(!same_decimal("1.05", "1.5"));
    }
}
