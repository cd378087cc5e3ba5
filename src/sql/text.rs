//! Text helpers on statements and their side files, below every floor that needs them (deploy,
//! change detection, unit tests, inventory, naming): the one SQL normalisation used for drift and
//! idempotency ([`normalize_sql`]), the one reader of `.properties` files ([`parse_properties`]),
//! and the version suffix of table names ([`split_version`]).

use std::collections::BTreeMap;

/// Reads a `.properties` file: the **one** parser of these files, used by deploy (what is sent) and by
/// change detection ([`crate::changes::classify`], what counts as a change), so both read every file
/// the same way.
///
/// Rules (a subset of `java.util.Properties.load`, which Flink's own tooling follows):
/// - lines are trimmed; blank lines and lines starting with `#` or `!` are comments;
/// - the key ends at the first `=` or `:`; key and value are trimmed (`a = b=c` → `a` → `b=c`);
/// - **a key without a value** (`key`, `key=`, `key:`) is kept with the empty value, as Java reads it,
///   and sent as written: the target says whether that property may be empty, flinkpipe never drops a
///   line silently;
/// - a line whose key is empty (`=x`) names no property and is ignored;
/// - a later line for the same key wins;
/// - no escapes and no `\` continuation lines (Flink property values do not need them).
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .map(|l| match l.find(['=', ':']) {
            Some(i) => (l[..i].trim().to_string(), l[i + 1..].trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// SQL compared for drift and idempotency: comments kept, whitespace runs collapsed to one space,
/// trailing `;` removed, keywords left as written (Confluent stores the text as sent).
pub fn normalize_sql(sql: &str) -> String {
    sql.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(';')
        .trim()
        .to_string()
}

/// Splits a table name into its base and version suffix (shift_left's blue-green naming,
/// <https://github.com/jbcodeforce/shift_left_utils>): `orders_v3` → (`orders`, Some(3)); `orders` →
/// (`orders`, None). Only a trailing `_v` followed by digits counts (`order_view` has no version).
pub fn split_version(name: &str) -> (&str, Option<u64>) {
    if let Some(pos) = name.rfind("_v") {
        let digits = &name[pos + 2..];
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && pos > 0
            && let Ok(n) = digits.parse()
        {
            return (&name[..pos], Some(n));
        }
    }
    (name, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_files() {
        let p = parse_properties("# c\ntable.exec.state.ttl=1 d\n\nsql.local-time-zone : UTC\n");
        assert_eq!(p["table.exec.state.ttl"], "1 d");
        assert_eq!(p["sql.local-time-zone"], "UTC");
    }

    /// Every line shape, with what it reads as (the rule of [`parse_properties`]).
    #[test]
    fn properties_every_line_shape() {
        let shapes: &[(&str, &[(&str, &str)])] = &[
            ("", &[]),
            ("# comment\n! comment\n   # indented comment\n\n  \n", &[]),
            ("a=b", &[("a", "b")]),
            ("a = b ", &[("a", "b")]),
            ("a: b", &[("a", "b")]),
            ("a=b=c", &[("a", "b=c")]),
            ("a:b=c", &[("a", "b=c")]),
            ("a=b:c", &[("a", "b:c")]),
            ("bare.key", &[("bare.key", "")]),
            ("empty=", &[("empty", "")]),
            ("empty:", &[("empty", "")]),
            ("=no key", &[]),
            (": no key", &[]),
            ("a=1\na=2", &[("a", "2")]),
            ("a=1\r\nb=2\r\n", &[("a", "1"), ("b", "2")]),
            ("a=x # not a comment", &[("a", "x # not a comment")]),
            ("k=\u{e9}t\u{e9}", &[("k", "\u{e9}t\u{e9}")]),
            ("key with space=v", &[("key with space", "v")]),
        ];
        for (text, want) in shapes {
            let want: BTreeMap<String, String> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(parse_properties(text), want, "{text:?}");
        }
    }

    #[test]
    fn normalisation() {
        assert_eq!(
            normalize_sql("INSERT  INTO a\n  SELECT 1;"),
            normalize_sql("INSERT INTO a SELECT 1")
        );
    }

    #[test]
    fn versions() {
        assert_eq!(split_version("fct_v12"), ("fct", Some(12)));
        assert_eq!(split_version("orders"), ("orders", None));
        assert_eq!(split_version("order_view"), ("order_view", None));
        assert_eq!(split_version("t_v"), ("t_v", None));
        assert_eq!(split_version("_v3"), ("_v3", None));
    }
}
