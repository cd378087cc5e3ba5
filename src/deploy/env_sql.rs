//! Per-environment SQL: ordered rewrite rules from `config.yaml` applied to what is **sent** (and to
//! what `status` compares with the deployed text), never to the files — so one tree is promoted
//! dev → stage → prod. The declarative equivalent of shift_left's `app.sql_content_modifier` plugin (a
//! Python class, e.g. `ReplaceEnvInSqlContent`: topic prefixes per environment, schema contexts, a
//! tenant filter in dev), which flinkpipe cannot run and refuses with an explanation.
//!
//! ```yaml
//! flinkpipe:
//!   environment: prod            # optional; default kafka.cluster_type ($FLINKPIPE_ENVIRONMENT wins)
//!   sql_rewrites:
//!     prod:                      # the rules of one environment, applied in order
//!       - in: table_names        # table_names | option_values | statements
//!         literal: clone.dev.    # or regex: '…' (Rust regex syntax; $1 in replace)
//!         replace: ''
//!       - in: option_values
//!         option: value.avro-registry.schema-context   # optional: only this option or property key
//!         regex: '\.flink-dev$'
//!         replace: .flink-prod
//!       - in: statements
//!         kind: dml              # optional: ddl | dml
//!         regex: "WHERE tenant_id IN \\(SELECT[^)]*\\)"
//!         replace: ''
//! ```
//!
//! Where a rule applies (`in`):
//! - `table_names`: the table part of every name in a table position (INSERT targets, CREATE names,
//!   FROM/JOIN items, …), by the SQL front end's token spans ([`crate::sql::rewrite::rename_tables_with`]),
//!   verified by re-parsing; columns, strings and comments are never touched, storage options stay
//!   (rewrite them with an `option_values` rule).
//! - `option_values`: the value of every `'key' = 'value'` pair of the statement's option lists
//!   (`WITH (…)`, `/*+ OPTIONS(…) */` hints, `ALTER TABLE … SET (…)`, `SET 'k' = 'v'`; a comparison
//!   of two strings in a query is data and never matches) and of every statement property (`.properties`
//!   files), restricted to one key with `option`.
//! - `statements`: the whole statement text.
//!
//! The environment is `flinkpipe.environment` (or `$FLINKPIPE_ENVIRONMENT`), else `kafka.cluster_type`;
//! an environment without rules sends the files as written.

use crate::config::{Config, ConfigError};
use crate::sql::model::TableName;
use crate::target::{StatementKind, StatementSpec};
use regex::Regex;

use std::borrow::Cow;

pub use crate::config::{RuleConfig, RuleKind, RuleScope};

/// How a rule matches.
#[derive(Debug, Clone)]
enum Pattern {
    Literal(String),
    Regex(Regex),
}

/// A checked rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `prod[0]`: the environment and the rule's position, for messages and reports.
    pub label: String,
    pub scope: RuleScope,
    pattern: Pattern,
    replace: String,
    option: Option<String>,
    kind: Option<RuleKind>,
}

impl Rule {
    /// `text` with the rule applied (borrowed when nothing matched).
    fn apply<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.pattern {
            Pattern::Literal(l) if text.contains(l.as_str()) => {
                Cow::Owned(text.replace(l.as_str(), &self.replace))
            }
            Pattern::Literal(_) => Cow::Borrowed(text),
            Pattern::Regex(r) => r.replace_all(text, self.replace.as_str()),
        }
    }

    fn applies_to(&self, kind: StatementKind) -> bool {
        match self.kind {
            None => true,
            Some(RuleKind::Ddl) => kind == StatementKind::Ddl,
            Some(RuleKind::Dml) => kind == StatementKind::Dml,
        }
    }

    /// A short description: `prod[0] table_names: 'clone.dev.' → ''`.
    pub fn describe(&self) -> String {
        let pattern = match &self.pattern {
            Pattern::Literal(l) => format!("'{l}'"),
            Pattern::Regex(r) => format!("/{}/", r.as_str()),
        };
        format!(
            "{} {}{}: {pattern} → '{}'",
            self.label,
            self.scope.as_str(),
            self.option
                .as_ref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default(),
            self.replace
        )
    }
}

/// The rules of the environment in effect.
#[derive(Debug, Clone, Default)]
pub struct EnvSql {
    /// The environment (`flinkpipe.environment`, else `kafka.cluster_type`).
    pub environment: String,
    /// Its rules, in order.
    pub rules: Vec<Rule>,
}

/// A rule that could not be applied to a statement: nothing of that statement is sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule {rule} on {statement}: {message}")]
pub struct RewriteError {
    /// The rule's label (`prod[0]`).
    pub rule: String,
    /// The statement name.
    pub statement: String,
    /// Why.
    pub message: String,
}

impl EnvSql {
    /// No rules: the files are sent as written.
    pub fn none() -> Self {
        EnvSql::default()
    }

    /// The rules of the environment in effect, checked.
    ///
    /// Errors (each naming the file, line and key): `app.sql_content_modifier` set (a Python class
    /// flinkpipe cannot run: the error shows the equivalent rules), a rule without `in` or
    /// `replace`, with both or neither of `literal` and `regex`, an invalid regular expression, an
    /// `option` on a rule that is not `option_values`.
    pub fn from_config(
        cfg: &Config,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<EnvSql, ConfigError> {
        let text = cfg
            .source
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        let path = cfg
            .source
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from("config.yaml"));
        if let Some(class) = cfg.app.sql_content_modifier.as_deref() {
            return Err(ConfigError::Parse {
                message: format!(
                    "{}app.sql_content_modifier: '{class}' is a Python class (shift_left's plugin that rewrites the SQL per environment), which flinkpipe cannot run, so the SQL would go out unchanged; remove the key and write the rewrite as ordered rules under flinkpipe.sql_rewrites.<environment>, applied to what is deployed (never to the files). ReplaceEnvInSqlContent's stage/prod rewrite, for example, is:\n{}",
                    line_prefix(&text, &["app", "sql_content_modifier"]),
                    MODIFIER_EQUIVALENT
                ),
                path,
            });
        }
        let environment = env("FLINKPIPE_ENVIRONMENT")
            .or(cfg.flinkpipe.environment.clone())
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| cfg.kafka.cluster_type.clone());
        let Some(configs) = cfg.flinkpipe.sql_rewrites.get(&environment) else {
            return Ok(EnvSql {
                environment,
                rules: Vec::new(),
            });
        };
        let mut rules = Vec::new();
        for (i, rc) in configs.iter().enumerate() {
            let label = format!("{environment}[{i}]");
            let fail = |field: &str, why: String| ConfigError::Parse {
                path: path.clone(),
                message: format!(
                    "{}flinkpipe.sql_rewrites.{label}.{field}: {why}",
                    rule_line_prefix(&text, &environment, i, field)
                ),
            };
            let scope = rc.scope.ok_or_else(|| {
                fail(
                    "in",
                    "missing: say where the rule applies (table_names, option_values or statements)"
                        .into(),
                )
            })?;
            let pattern = match (&rc.literal, &rc.regex) {
                (Some(l), None) if !l.is_empty() => Pattern::Literal(l.clone()),
                (Some(_), None) => return Err(fail("literal", "must not be empty".into())),
                (None, Some(r)) => Pattern::Regex(
                    Regex::new(r)
                        .map_err(|e| fail("regex", format!("invalid regular expression: {e}")))?,
                ),
                (Some(_), Some(_)) => {
                    return Err(fail(
                        "regex",
                        "give either literal or regex, not both".into(),
                    ));
                }
                (None, None) => {
                    return Err(fail(
                        "literal",
                        "missing: give the text to replace (literal) or a regular expression (regex)"
                            .into(),
                    ));
                }
            };
            let replace = rc.replace.clone().ok_or_else(|| {
                fail(
                    "replace",
                    "missing: give the replacement ('' to remove the text)".into(),
                )
            })?;
            if rc.option.is_some() && scope != RuleScope::OptionValues {
                return Err(fail(
                    "option",
                    format!(
                        "only option_values rules name an option (this rule is {})",
                        scope.as_str()
                    ),
                ));
            }
            rules.push(Rule {
                label,
                scope,
                pattern,
                replace,
                option: rc.option.clone(),
                kind: rc.kind,
            });
        }
        Ok(EnvSql { environment, rules })
    }

    /// Whether there is nothing to apply.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Applies the rules, in order, to one statement (its text and properties). Returns the labels
    /// of the rules that changed it.
    ///
    /// Errors: a `table_names` rule whose result does not re-parse to the same tables renamed (or
    /// that cannot locate a name): the statement is not sent.
    pub fn apply(&self, spec: &mut StatementSpec) -> Result<Vec<String>, RewriteError> {
        let mut applied = Vec::new();
        for rule in self.rules.iter().filter(|r| r.applies_to(spec.kind)) {
            let before = (spec.sql.clone(), spec.properties.clone());
            match rule.scope {
                RuleScope::Statements => {
                    if let Cow::Owned(t) = rule.apply(&spec.sql) {
                        spec.sql = t;
                    }
                }
                RuleScope::OptionValues => {
                    spec.sql = rewrite_option_values(&spec.sql, rule);
                    for (k, v) in spec.properties.iter_mut() {
                        if rule.option.as_ref().is_none_or(|o| o == k)
                            && let Cow::Owned(n) = rule.apply(v)
                        {
                            *v = n;
                        }
                    }
                }
                RuleScope::TableNames => {
                    let rename = |t: &TableName| match rule.apply(t.table()) {
                        Cow::Owned(n) if n != t.table() => Some(n),
                        _ => None,
                    };
                    let out =
                        crate::sql::rewrite::rename_tables_with(&spec.sql, &rename, &|_| false)
                            .map_err(|e| RewriteError {
                                rule: rule.label.clone(),
                                statement: spec.name.clone(),
                                message: e.to_string(),
                            })?;
                    if out.edits > 0 {
                        spec.sql = out.text;
                    }
                }
            }
            if (spec.sql.as_str(), &spec.properties) != (before.0.as_str(), &before.1) {
                applied.push(rule.label.clone());
            }
        }
        Ok(applied)
    }
}

/// `sql` with `rule` applied to the value of every `'key' = 'value'` pair (outside comments, inside
/// `/*+ … */` hints too) whose key the rule names (or every key).
fn rewrite_option_values(sql: &str, rule: &Rule) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for pair in option_pairs(sql) {
        if rule.option.as_ref().is_some_and(|o| *o != pair.key) {
            continue;
        }
        if let Cow::Owned(new) = rule.apply(&pair.value) {
            out.push_str(&sql[at..pair.value_range.start]);
            out.push('\'');
            out.push_str(&new.replace('\'', "''"));
            out.push('\'');
            at = pair.value_range.end;
        }
    }
    out.push_str(&sql[at..]);
    out
}

/// A `'key' = 'value'` pair of SQL text: the key and value unquoted, the value's byte range (quotes
/// included).
#[derive(Debug, Clone, PartialEq, Eq)]
struct OptionPair {
    key: String,
    value: String,
    value_range: std::ops::Range<usize>,
}

/// Every `'key' = 'value'` pair of `sql`: string literals separated by `=` (whitespace allowed), in
/// `WITH (…)` and in `/*+ OPTIONS(…) */` hints; `--` and `/* */` comments (not hints), backquoted and
/// double-quoted identifiers are skipped; `''` inside a literal is a quote.
fn option_pairs(sql: &str) -> Vec<OptionPair> {
    #[derive(Clone)]
    enum Tok {
        Str(String, std::ops::Range<usize>),
        Eq,
        /// A keyword or identifier, upper-cased.
        Word(String),
        Open,
        Close,
        Other,
    }
    let b = sql.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                if b.get(i + 2) == Some(&b'+') {
                    // A hint: its contents are scanned like SQL.
                    i += 3;
                } else {
                    i += 2;
                    while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                        i += 1;
                    }
                    i += 2;
                }
            }
            b'\'' => {
                let start = i;
                let mut value = Vec::new();
                i += 1;
                while i < b.len() {
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            value.push(b'\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    value.push(b[i]);
                    i += 1;
                }
                i = (i + 1).min(b.len());
                toks.push(Tok::Str(
                    String::from_utf8_lossy(&value).into_owned(),
                    start..i,
                ));
            }
            b'`' | b'"' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    i += 1;
                }
                i += 1;
                toks.push(Tok::Other);
            }
            b'=' => {
                toks.push(Tok::Eq);
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'(' => {
                toks.push(Tok::Open);
                i += 1;
            }
            b')' => {
                toks.push(Tok::Close);
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                toks.push(Tok::Word(sql[start..i].to_ascii_uppercase()));
            }
            _ => {
                toks.push(Tok::Other);
                i += 1;
            }
        }
    }
    // Only pairs directly inside an options list — `WITH (…)`, `OPTIONS(…)` (hints), `SET (…)`
    // (ALTER TABLE) — or right after `SET` (a SET statement): a `'a' = 'b'` comparison in a
    // WHERE clause is data, not an option.
    let mut lists: Vec<bool> = Vec::new();
    let mut out = Vec::new();
    for (n, t) in toks.iter().enumerate() {
        match t {
            Tok::Open => lists.push(matches!(
                n.checked_sub(1).map(|p| &toks[p]),
                Some(Tok::Word(w)) if w == "WITH" || w == "OPTIONS" || w == "SET"
            )),
            Tok::Close => {
                lists.pop();
            }
            Tok::Str(k, _) => {
                let in_list = lists.last() == Some(&true);
                let after_set = matches!(
                    n.checked_sub(1).map(|p| &toks[p]),
                    Some(Tok::Word(w)) if w == "SET"
                );
                if (in_list || after_set)
                    && let (Some(Tok::Eq), Some(Tok::Str(v, r))) =
                        (toks.get(n + 1), toks.get(n + 2))
                {
                    out.push(OptionPair {
                        key: k.clone(),
                        value: v.clone(),
                        value_range: r.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The rules equivalent to shift_left's `ReplaceEnvInSqlContent` (`core/utils/table_worker.py`) for
/// stage/prod, shown when `app.sql_content_modifier` is refused.
const MODIFIER_EQUIVALENT: &str = r#"  flinkpipe:
    sql_rewrites:
      prod:                         # the environment: kafka.cluster_type (or flinkpipe.environment)
        - in: table_names           # source topics read as clone.dev.<x> in dev are <x> elsewhere
          literal: clone.dev.
          replace: ''
        - in: option_values         # schema contexts .flink-dev → .flink-prod in the DDL
          kind: ddl
          regex: '\.flink-dev'
          replace: .flink-prod
      dev:                          # limits on data in dev: a whole-statement rewrite
        - in: statements
          kind: dml
          regex: '(?i)SELECT \* FROM final\s*$'
          replace: SELECT * FROM final WHERE tenant_id IN (SELECT tenant_id FROM tenant_filter_pipeline)"#;

/// `line N: ` for the line of a nested key (`app` → `sql_content_modifier`), else empty.
fn line_prefix(text: &str, keys: &[&str]) -> String {
    key_line(text, keys)
        .map(|l| format!("line {l}: "))
        .unwrap_or_default()
}

/// The 1-based line of a nested mapping key: each key searched after the previous one, deeper
/// indented.
fn key_line(text: &str, keys: &[&str]) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    let mut indent: Option<usize> = None;
    let mut found = None;
    for key in keys {
        let mut hit = None;
        for (n, l) in lines.iter().enumerate().skip(from) {
            let trimmed = l.trim_start();
            let ind = l.len() - trimmed.len();
            if indent.is_some_and(|i| ind <= i) && !trimmed.is_empty() && !trimmed.starts_with('#')
            {
                break;
            }
            let bare = trimmed.trim_start_matches("- ");
            if bare.starts_with(&format!("{key}:")) {
                hit = Some((n, ind));
                break;
            }
        }
        let (n, ind) = hit?;
        found = Some(n + 1);
        from = n + 1;
        indent = Some(ind);
    }
    found
}

/// `line N: ` for a field of the `index`-th rule of `environment` (or the rule's first line).
fn rule_line_prefix(text: &str, environment: &str, index: usize, field: &str) -> String {
    let Some(env_line) = key_line(text, &["flinkpipe", "sql_rewrites", environment]) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let env_indent = lines[env_line - 1].len() - lines[env_line - 1].trim_start().len();
    let mut item = 0usize;
    let mut item_start: Option<usize> = None;
    for (n, l) in lines.iter().enumerate().skip(env_line) {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let ind = l.len() - trimmed.len();
        if ind <= env_indent {
            break;
        }
        if trimmed.starts_with("- ") || trimmed == "-" {
            if item_start.is_some() {
                item += 1;
            }
            if item > index {
                break;
            }
            item_start = Some(n);
        }
        if item == index
            && item_start.is_some()
            && trimmed
                .trim_start_matches("- ")
                .starts_with(&format!("{field}:"))
        {
            return format!("line {}: ", n + 1);
        }
    }
    item_start
        .filter(|_| item == index)
        .map(|n| format!("line {}: ", n + 1))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn rules(yaml: &str) -> Result<EnvSql, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.yaml");
        std::fs::write(&p, yaml).unwrap();
        let cfg = Config::load(Some(&p)).unwrap();
        EnvSql::from_config(&cfg, &|_| None)
    }

    fn spec(sql: &str, kind: StatementKind) -> StatementSpec {
        StatementSpec {
            name: "prod-usw2-dml-x".into(),
            sql: sql.into(),
            properties: BTreeMap::from([(
                "sql.tables.scan.startup.mode".to_string(),
                "earliest-offset".to_string(),
            )]),
            kind,
            compute_pool: None,
        }
    }

    #[test]
    fn option_pairs_skip_comments_and_read_hints() {
        let sql = "CREATE TABLE t (a STRING COMMENT 'x') WITH ('topic' = 'clone.dev.t', -- 'c' = 'd'\n 'k'='it''s') /* 'e' = 'f' */ ; SELECT * FROM t /*+ OPTIONS('scan.startup.mode'='latest-offset') */";
        let pairs: Vec<(String, String)> = option_pairs(sql)
            .into_iter()
            .map(|p| (p.key, p.value))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("topic".to_string(), "clone.dev.t".to_string()),
                ("k".to_string(), "it's".to_string()),
                ("scan.startup.mode".to_string(), "latest-offset".to_string()),
            ]
        );
    }

    /// Comparisons of string literals are data: only option lists and SET statements hold options.
    #[test]
    fn option_pairs_are_only_in_option_lists_and_set_statements() {
        let sql = "INSERT INTO s SELECT * FROM t /*+ OPTIONS('topic'='a') */ WHERE 'x' = 'y' OR (c = 'z' AND 'p' = 'q');\n\
                   SET 'table.exec.state.ttl' = '1 h';\n\
                   ALTER TABLE t SET ('scan.startup.mode' = 'earliest-offset');\n\
                   WITH w AS (SELECT 'k' = 'v' AS b FROM t) SELECT * FROM w";
        let keys: Vec<String> = option_pairs(sql).into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["topic", "table.exec.state.ttl", "scan.startup.mode"]);
    }

    #[test]
    fn rules_change_only_their_scope() {
        let env = rules(
            "kafka:\n  cluster_type: prod\nflinkpipe:\n  sql_rewrites:\n    prod:\n      - in: table_names\n        literal: clone.dev.\n        replace: ''\n      - in: option_values\n        option: topic\n        regex: '^clone\\.dev\\.(.*)$'\n        replace: prod.$1\n      - in: option_values\n        option: sql.tables.scan.startup.mode\n        literal: earliest-offset\n        replace: latest-offset\n      - in: statements\n        kind: ddl\n        literal: 'NOT ENFORCED'\n        replace: 'NOT ENFORCED /* prod */'\n",
        )
        .unwrap();
        assert_eq!(env.environment, "prod");
        let mut s = spec(
            "INSERT INTO `clone.dev.orders_out` SELECT id, 'clone.dev.keep' AS note FROM `clone.dev.orders` /*+ OPTIONS('topic'='clone.dev.orders') */",
            StatementKind::Dml,
        );
        let applied = env.apply(&mut s).unwrap();
        assert_eq!(
            s.sql,
            "INSERT INTO `orders_out` SELECT id, 'clone.dev.keep' AS note FROM `orders` /*+ OPTIONS('topic'='prod.orders') */"
        );
        assert_eq!(
            s.properties["sql.tables.scan.startup.mode"],
            "latest-offset"
        );
        assert_eq!(applied, vec!["prod[0]", "prod[1]", "prod[2]"]);
    }

    #[test]
    fn bad_rules_name_file_line_and_key() {
        let err = rules("flinkpipe:\n  sql_rewrites:\n    dev:\n      - in: statements\n        literal: a\n        replace: b\n      - in: table_names\n        regex: '(unclosed'\n        replace: x\n").unwrap_err().to_string();
        assert!(
            err.contains("config.yaml: line 8: flinkpipe.sql_rewrites.dev[1].regex: invalid regular expression"),
            "{err}"
        );
        let err = rules("flinkpipe:\n  sql_rewrites:\n    dev:\n      - in: statements\n        option: topic\n        literal: a\n        replace: b\n").unwrap_err().to_string();
        assert!(
            err.contains("line 5: flinkpipe.sql_rewrites.dev[0].option: only option_values"),
            "{err}"
        );
        let err = rules("app:\n  products: [a]\n  sql_content_modifier: shift_left.core.utils.table_worker.ReplaceEnvInSqlContent\n").unwrap_err().to_string();
        assert!(
            err.contains("line 3: app.sql_content_modifier: 'shift_left.core.utils.table_worker.ReplaceEnvInSqlContent' is a Python class")
                && err.contains("sql_rewrites:"),
            "{err}"
        );
    }

    #[test]
    fn other_environments_and_the_override() {
        let yaml = "kafka:\n  cluster_type: dev\nflinkpipe:\n  sql_rewrites:\n    prod:\n      - in: statements\n        literal: a\n        replace: b\n";
        assert!(rules(yaml).unwrap().is_empty());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.yaml");
        std::fs::write(&p, yaml).unwrap();
        let cfg = Config::load(Some(&p)).unwrap();
        let env = EnvSql::from_config(&cfg, &|v| {
            (v == "FLINKPIPE_ENVIRONMENT").then(|| "prod".to_string())
        })
        .unwrap();
        assert_eq!(env.rules.len(), 1);
    }
}
