//! The unit-test suffix and the names of what a run creates.
//!
//! - Suffix: shift_left's `app.post_fix_unit_test` rule — `_` followed by 2 or 3 letters or digits
//!   (default `_ut`). Every table, topic and statement of a run carries it.
//! - Statement names follow shift_left 0.1.52's convention
//!   (<https://github.com/jbcodeforce/shift_left_utils>)
//!   `<prefix>-{ddl|dml|ins-<i>|val-<i>}-<table[:52]><suffix>`, with `out-<i>` (reading an output) and
//!   `drop` added, in kebab case and fitted to Confluent's 100 characters
//!   ([`crate::plan::naming::fit_length`]).

use crate::plan::naming::{fit_length, kebab};

/// The default suffix (shift_left's `DEFAULT_POST_FIX_UNIT_TEST`).
pub const DEFAULT_SUFFIX: &str = "_ut";

/// shift_left cuts table names to 52 characters in statement names (`MAX_STATEMENT_NAME_LENGTH`).
const TABLE_PART: usize = 52;

/// A suffix that breaks shift_left's rule (`_` and 2–3 ASCII letters or digits): the text given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unit-test suffix '{0}' must be '_' followed by 2 or 3 letters or digits (shift_left's rule), e.g. _ut"
)]
pub struct BadSuffix(pub String);

/// A validated unit-test suffix (`_ut`, `_t1`, `_abc`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Suffix(String);

impl Suffix {
    /// Checks shift_left's rule: `_` and 2–3 ASCII letters or digits.
    ///
    /// Errors: anything else ([`BadSuffix`], whose text states the rule).
    pub fn parse(s: &str) -> Result<Suffix, BadSuffix> {
        let ok = s.len() >= 3
            && s.len() <= 4
            && s.starts_with('_')
            && s[1..].chars().all(|c| c.is_ascii_alphanumeric());
        if ok {
            Ok(Suffix(s.to_string()))
        } else {
            Err(BadSuffix(s.to_string()))
        }
    }

    /// The suffix as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `table` + suffix.
    pub fn table(&self, table: &str) -> String {
        format!("{table}{}", self.0)
    }

    /// The table a suffixed name stands for (`orders_ut` → `orders`), if it carries the suffix.
    pub fn strip<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_suffix(self.0.as_str())
    }
}

impl Default for Suffix {
    fn default() -> Self {
        Suffix(DEFAULT_SUFFIX.to_string())
    }
}

impl std::fmt::Display for Suffix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Statement names of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestNaming {
    /// The statement-name prefix of the configuration (`dev-usw2`, or `flinkpipe.statement_prefix`).
    pub prefix: String,
    /// The unit-test suffix.
    pub suffix: Suffix,
}

impl TestNaming {
    fn name(&self, kind: &str, table: &str) -> String {
        let cut: String = table.chars().take(TABLE_PART).collect();
        fit_length(kebab(&format!(
            "{}-{kind}-{cut}{}",
            self.prefix,
            self.suffix.as_str()
        )))
    }

    /// The DDL creating `table`'s test table (`dev-ddl-src-x-ut`).
    pub fn ddl(&self, table: &str) -> String {
        self.name("ddl", table)
    }

    /// The DML under test, writing `table`'s test table (`dev-dml-x-ut`).
    pub fn dml(&self, table: &str) -> String {
        self.name("dml", table)
    }

    /// The inserts of test case `case` (1-based) of `table`'s suite, run as one statement set.
    pub fn ins(&self, case: usize, table: &str) -> String {
        self.name(&format!("ins-{case}"), table)
    }

    /// The validation SQL of test case `case` for output `table`.
    pub fn val(&self, case: usize, table: &str) -> String {
        self.name(&format!("val-{case}"), table)
    }

    /// The query reading output `table` in test case `case`.
    pub fn out(&self, case: usize, table: &str) -> String {
        self.name(&format!("out-{case}"), table)
    }

    /// A statement of the empirical upgrade check of `table` (`step`: `old`, `new`, `ref`:
    /// `dev-upg-old-x-ut`).
    pub fn upgrade(&self, step: &str, table: &str) -> String {
        self.name(&format!("upg-{step}"), table)
    }

    /// The `DROP TABLE` of `table`'s test table.
    pub fn drop(&self, table: &str) -> String {
        self.name("drop", table)
    }

    /// Whether `statement` is one of the names a run for these tables creates (any test case): what
    /// `delete-unit-tests` removes, also after a killed run.
    pub fn owns(&self, statement: &str, tables: &[String]) -> bool {
        let Some(rest) = statement
            .strip_prefix(self.prefix.as_str())
            .and_then(|r| r.strip_prefix('-'))
        else {
            return false;
        };
        tables.iter().any(|t| {
            let cut: String = t.chars().take(TABLE_PART).collect();
            let tail = kebab(&format!("{cut}{}", self.suffix.as_str()));
            let Some(kind) = rest
                .strip_suffix(tail.as_str())
                .and_then(|k| k.strip_suffix('-'))
            else {
                // A name fitted to 100 characters ends with a hash: compare with every kind.
                return ["ddl", "dml", "drop", "upg-old", "upg-new", "upg-ref"]
                    .iter()
                    .any(|k| self.name(k, t) == statement);
            };
            matches!(
                kind,
                "ddl" | "dml" | "drop" | "upg-old" | "upg-new" | "upg-ref"
            ) || ["ins-", "val-", "out-"].iter().any(|p| {
                kind.strip_prefix(p)
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_follows_shift_left_rule() {
        assert!(Suffix::parse("_ut").is_ok());
        assert!(Suffix::parse("_t12").is_ok());
        for bad in ["ut", "_u", "_abcd", "_u-t", "", "__ut"] {
            assert!(Suffix::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Suffix::default().table("orders"), "orders_ut");
        assert_eq!(Suffix::default().strip("orders_ut"), Some("orders"));
    }

    #[test]
    fn statement_names_and_ownership() {
        let n = TestNaming {
            prefix: "dev".into(),
            suffix: Suffix::default(),
        };
        assert_eq!(n.ddl("src_p1_x"), "dev-ddl-src-p1-x-ut");
        assert_eq!(n.ins(2, "fct_order"), "dev-ins-2-fct-order-ut");
        let tables = vec!["fct_order".to_string(), "src_p1_x".to_string()];
        assert!(n.owns("dev-val-10-fct-order-ut", &tables));
        assert!(n.owns("dev-ddl-src-p1-x-ut", &tables));
        assert!(!n.owns("dev-dml-fct-order", &tables));
        assert!(!n.owns("prod-ddl-src-p1-x-ut", &tables));
        assert!(!n.owns("dev-ins-x-fct-order-ut", &tables));
    }
}
