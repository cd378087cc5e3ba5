//! Node selection with dbt's grammar, which users of dbt (and of shift_left's `--select`-style options)
//! already know:
//!
//! | selector      | selects                                                                   |
//! |---------------|---------------------------------------------------------------------------|
//! | `t`           | the table `t` (`table:t` too); `*` is a wildcard: `src_*`, `*_dim_*`     |
//! | `+t`, `N+t`   | `t` and its ancestors (at most `N` edges up)                              |
//! | `t+`, `t+N`   | `t` and its descendants (at most `N` edges down)                          |
//! | `+t+`         | both                                                                      |
//! | `@t`          | `t`, its descendants and every ancestor of those                          |
//! | `product:P`   | the tables of product `P` (`*` allowed)                                   |
//! | `layer:L`     | the tables of layer `L`; `fact` and the folder name `facts` are the same |
//! | `path:DIR`    | the tables whose folder lies under `DIR`, with or without `pipelines/`   |
//!
//! The graph operators apply to every selector (`+product:p1` is p1's tables and their ancestors).
//! Selectors separated by spaces are united; joined by commas they are intersected: `+t,product:p1` is `t`
//! and those of its ancestors that belong to `p1`. Edges of both kinds (data, `LIKE`) count.

use petgraph::Direction::{Incoming, Outgoing};
use petgraph::graph::NodeIndex;
use std::collections::BTreeSet;

use super::model::{PipelineGraph, canonical_layer};

/// Why a selection expression was rejected. `column` is the 1-based position (in characters) of the
/// offending selector in the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The expression holds no selector.
    #[error("empty selection")]
    Empty,
    /// A selector that cannot be parsed: an empty operand, a stray `+` or `@`, an unknown method.
    #[error("bad selector '{token}' at column {column}: {reason}")]
    BadToken {
        token: String,
        column: usize,
        reason: String,
    },
    /// A table name (without wildcard) that is not in the graph, with the closest name if one is close.
    #[error(
        "unknown table '{name}' at column {column}{}",
        did_you_mean(suggestion)
    )]
    UnknownTable {
        name: String,
        column: usize,
        suggestion: Option<String>,
    },
    /// A table name (without wildcard) that two or more tables match ignoring case.
    #[error(
        "table name '{name}' at column {column} is ambiguous: it matches {}; give the exact name",
        candidates.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", ")
    )]
    AmbiguousTable {
        name: String,
        column: usize,
        candidates: Vec<String>,
    },
    /// A wildcard, product, layer or path selector that matches no table (a typo, most likely).
    #[error(
        "'{selector}' at column {column} matches no table{}{}",
        did_you_mean(suggestion),
        if suggestion.is_none() && !choices.is_empty() { format!(" (known: {})", choices.join(", ")) } else { String::new() }
    )]
    NoMatch {
        selector: String,
        column: usize,
        suggestion: Option<String>,
        /// The products or layers the graph has, sorted (empty for table and path selectors).
        choices: Vec<String>,
    },
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// The names of the tables `expr` selects, sorted. See the module documentation for the grammar.
///
/// Errors: [`SelectError::Empty`] for a blank expression, [`SelectError::BadToken`] for a selector that
/// does not parse, [`SelectError::UnknownTable`] / [`SelectError::NoMatch`] for one that matches nothing.
/// An intersection that ends up empty is not an error.
pub fn select(graph: &PipelineGraph, expr: &str) -> Result<BTreeSet<String>, SelectError> {
    select_noting(graph, expr, &mut Vec::new())
}

/// [`select`], with a note in `notes` for each table name that resolved to another table (names
/// resolve as everywhere: [`crate::inventory::names`]; `int_b` selects `int_b_v2` after a blue-green).
///
/// Errors: those of [`select`], and [`SelectError::AmbiguousTable`].
pub fn select_noting(
    graph: &PipelineGraph,
    expr: &str,
    notes: &mut Vec<String>,
) -> Result<BTreeSet<String>, SelectError> {
    let words = split_words(expr);
    if words.is_empty() {
        return Err(SelectError::Empty);
    }
    let mut union = vec![false; graph.len()];
    for word in words {
        let mut intersection = vec![true; graph.len()];
        for (column, token) in word {
            let mask = Selector::parse(token, column)?.eval(graph, notes)?;
            for (i, m) in intersection.iter_mut().zip(mask) {
                *i &= m;
            }
        }
        or_into(&mut union, &intersection);
    }
    Ok(graph.names_of(&union))
}

fn or_into(mask: &mut [bool], other: &[bool]) {
    for (m, o) in mask.iter_mut().zip(other) {
        *m |= o;
    }
}

/// How far a graph operator reaches: `None` is unlimited.
type Depth = Option<usize>;

/// One comma-free selector, parsed.
struct Selector<'a> {
    token: &'a str,
    column: usize,
    at: bool,
    up: Option<Depth>,
    down: Option<Depth>,
    method: Method,
    value: &'a str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Table,
    Product,
    Layer,
    Path,
}

impl<'a> Selector<'a> {
    fn parse(token: &'a str, column: usize) -> Result<Self, SelectError> {
        let bad = |reason: &str| SelectError::BadToken {
            token: token.to_string(),
            column,
            reason: reason.to_string(),
        };
        if token.is_empty() {
            return Err(bad("empty selector (stray ',')"));
        }
        let mut rest = token;
        let mut at = false;
        let mut up = None;
        let mut down = None;
        if let Some(r) = rest.strip_prefix('@') {
            at = true;
            rest = r;
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if rest[digits..].starts_with('+') {
            up = Some(parse_depth(&rest[..digits]).ok_or_else(|| bad("depth too large"))?);
            rest = &rest[digits + 1..];
        }
        let without_digits = rest.trim_end_matches(|c: char| c.is_ascii_digit());
        if let Some(r) = without_digits.strip_suffix('+') {
            let depth = &rest[without_digits.len()..];
            down = Some(parse_depth(depth).ok_or_else(|| bad("depth too large"))?);
            rest = r;
        }
        if at && (up.is_some() || down.is_some()) {
            return Err(bad("'@' cannot be combined with '+'"));
        }
        if rest.is_empty() {
            return Err(bad("missing table or method:value"));
        }
        if rest.contains(['+', '@']) {
            return Err(bad("'+' and '@' only go at the start or the end"));
        }
        let (method, value) = match rest.split_once(':') {
            None => (Method::Table, rest),
            Some((m, v)) => {
                let method = match m.to_ascii_lowercase().as_str() {
                    "table" | "name" => Method::Table,
                    "product" => Method::Product,
                    "layer" => Method::Layer,
                    "path" => Method::Path,
                    _ => {
                        return Err(bad(&format!(
                            "unknown method '{m}' (expected table, product, layer or path)"
                        )));
                    }
                };
                if v.is_empty() {
                    return Err(bad("missing value after ':'"));
                }
                (method, v)
            }
        };
        Ok(Selector {
            token,
            column,
            at,
            up,
            down,
            method,
            value,
        })
    }

    /// The mask of the selected nodes.
    fn eval(
        &self,
        graph: &PipelineGraph,
        notes: &mut Vec<String>,
    ) -> Result<Vec<bool>, SelectError> {
        let base = self.base(graph, notes)?;
        let starts: Vec<NodeIndex> = graph.indices_all().filter(|i| base[i.index()]).collect();
        let mut mask = base;
        if self.at {
            or_into(&mut mask, &graph.reach(&starts, Outgoing, None));
            let below: Vec<NodeIndex> = graph.indices_all().filter(|i| mask[i.index()]).collect();
            or_into(&mut mask, &graph.reach(&below, Incoming, None));
        }
        if let Some(depth) = self.up {
            or_into(&mut mask, &graph.reach(&starts, Incoming, depth));
        }
        if let Some(depth) = self.down {
            or_into(&mut mask, &graph.reach(&starts, Outgoing, depth));
        }
        Ok(mask)
    }

    /// The nodes the selector names before graph operators; never empty.
    fn base(
        &self,
        graph: &PipelineGraph,
        notes: &mut Vec<String>,
    ) -> Result<Vec<bool>, SelectError> {
        if self.method == Method::Table && !self.value.contains('*') {
            use crate::inventory::names::NameError;
            let resolved = crate::inventory::names::resolve(
                self.value,
                graph.nodes().map(|n| n.name.as_str()),
            )
            .map_err(|e| match e {
                NameError::Unknown { name, suggestion } => SelectError::UnknownTable {
                    name,
                    column: self.column,
                    suggestion,
                },
                NameError::Ambiguous { name, candidates } => SelectError::AmbiguousTable {
                    name,
                    column: self.column,
                    candidates,
                },
            })?;
            if let Some(note) = resolved.note()
                && !notes.contains(&note)
            {
                notes.push(note);
            }
            let Some(i) = graph.index_of(&resolved.name) else {
                unreachable!("a resolved name is a node of the graph");
            };
            let mut mask = vec![false; graph.len()];
            mask[i.index()] = true;
            return Ok(mask);
        }
        let dir = path_components(self.value);
        let layer = canonical_layer(self.value);
        let mask: Vec<bool> = graph
            .nodes()
            .map(|n| match self.method {
                Method::Table => glob(self.value, &n.name),
                Method::Product => n.product.as_deref().is_some_and(|p| glob(self.value, p)),
                Method::Layer => canonical_layer(&n.layer).eq_ignore_ascii_case(layer),
                Method::Path => n
                    .path
                    .as_deref()
                    .is_some_and(|p| path_components(p).starts_with(&dir)),
            })
            .collect();
        if mask.contains(&true) {
            return Ok(mask);
        }
        let suggestion = match self.method {
            Method::Product => closest(
                self.value,
                graph.nodes().filter_map(|n| n.product.as_deref()),
            ),
            Method::Layer => closest(layer, graph.nodes().map(|n| canonical_layer(&n.layer))),
            Method::Table | Method::Path => None,
        };
        let choices: std::collections::BTreeSet<String> = match self.method {
            Method::Product => graph.nodes().filter_map(|n| n.product.clone()).collect(),
            Method::Layer => graph
                .nodes()
                .map(|n| canonical_layer(&n.layer).to_string())
                .collect(),
            Method::Table | Method::Path => Default::default(),
        };
        Err(SelectError::NoMatch {
            selector: self.token.to_string(),
            column: self.column,
            suggestion,
            choices: choices.into_iter().collect(),
        })
    }
}

/// `""` is unlimited; digits are a depth.
fn parse_depth(digits: &str) -> Option<Depth> {
    if digits.is_empty() {
        Some(None)
    } else {
        digits.parse().ok().map(Some)
    }
}

/// The expression's space-separated words, each split on commas into `(column, selector)`.
fn split_words(expr: &str) -> Vec<Vec<(usize, &str)>> {
    let column_of = |part: &str| {
        let byte = part.as_ptr().addr() - expr.as_ptr().addr();
        expr[..byte].chars().count() + 1
    };
    expr.split_whitespace()
        .map(|word| {
            word.split(',')
                .map(|part| (column_of(part), part))
                .collect()
        })
        .collect()
}

/// A folder path's components, without `.`, empty parts and a leading `pipelines` (so `path:facts/p1`
/// and `path:pipelines/facts/p1` select the same tables).
fn path_components(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.first() == Some(&"pipelines") {
        parts.remove(0);
    }
    parts
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (none included).
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None; // (pattern index after '*', text index it matched up to)
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi + 1, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((after, matched)) = star {
            pi = after;
            ti = matched + 1;
            star = Some((after, matched + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

pub use crate::diagnostics::closest;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_stars_anywhere() {
        assert!(glob("src_*", "src_x"));
        assert!(glob("*_dim_*", "p1_dim_user"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(!glob("src_*", "int_x"));
        assert!(glob("exact", "exact") && !glob("exact", "exactly"));
    }

    #[test]
    fn words_and_columns() {
        assert_eq!(
            split_words("  +t,product:p1   a+"),
            vec![vec![(3, "+t"), (6, "product:p1")], vec![(19, "a+")]]
        );
        assert_eq!(split_words("a,,b"), vec![vec![(1, "a"), (3, ""), (4, "b")]]);
        assert!(split_words(" \t ").is_empty());
    }

    #[test]
    fn path_components_drop_the_pipelines_root() {
        assert_eq!(path_components("pipelines/facts/p1/"), ["facts", "p1"]);
        assert_eq!(path_components("./facts/p1"), ["facts", "p1"]);
    }
}
