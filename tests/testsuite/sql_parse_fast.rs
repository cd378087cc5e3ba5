//! The Flink dialect's fast path for identifiers (`FlinkDialect::parse_prefix`) changes nothing but
//! speed: on every SQL file of the corpus, the test data and the example projects, and on token-level
//! mutations of them aimed at what follows a word (a call, a string, a lambda arrow, a field, a
//! subscript, a cast, a keyword), sqlparser's AST (spans included) or error and flinkpipe's analysis
//! are the same with the fast path as through sqlparser's own prefix parsing.

use crate::support::Rng;
use flinkpipe::sql::dialect::{FlinkDialect, without_fast_paths};
use sqlparser::parser::Parser;

/// sqlparser's statements (or error) and flinkpipe's analysis of `sql`, printed with every span.
fn both(sql: &str) -> (String, String) {
    let ast = Parser::new(&FlinkDialect)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements());
    (
        format!("{ast:?}"),
        format!("{:?}", flinkpipe::sql::analyze(sql)),
    )
}

/// Checks one text; `true` when sqlparser parsed it whole (so that the check saw ASTs, not errors).
fn check(sql: &str, what: &dyn std::fmt::Display) -> bool {
    let fast = both(sql);
    let slow = without_fast_paths(|| both(sql));
    assert!(
        fast.0 == slow.0,
        "{what}: sqlparser's result differs with the fast path\n--- text\n{sql}\n--- fast\n{}\n--- slow\n{}",
        fast.0,
        slow.0
    );
    assert!(
        fast.1 == slow.1,
        "{what}: the analysis differs with the fast path\n--- text\n{sql}\n--- fast\n{}\n--- slow\n{}",
        fast.1,
        slow.1
    );
    fast.0.starts_with("Ok(")
}

#[test]
fn the_fast_path_changes_no_parse_of_a_real_file() {
    let texts = crate::support::sql_texts();
    assert!(texts.len() > 400, "{} files", texts.len());
    let parsed = texts.iter().filter(|(p, t)| check(t, &p.display())).count();
    eprintln!(
        "{parsed} of {} files parsed whole by sqlparser",
        texts.len()
    );
    assert!(parsed * 2 > texts.len(), "{parsed} of {}", texts.len());
}

#[test]
fn the_fast_path_changes_no_parse_of_a_mutated_file() {
    // What may follow a word in an expression, and words that are keywords or Flink's own forms.
    const PIECES: &[&str] = &[
        "(",
        ")",
        "()",
        "'s'",
        "_utf8'x'",
        "\"q\"",
        "`q`",
        "->",
        "=>",
        ".",
        ".*",
        ".x",
        "[1]",
        "[",
        "]",
        "::INT",
        ":",
        ",",
        ";",
        "*",
        "+",
        "-",
        "||",
        "=",
        "<>",
        " AS ",
        " x ",
        " MODEL m ",
        " TABLE t ",
        " DATE ",
        " INTERVAL ",
        " NOT ",
        " IS ",
        " IN ",
        " CASE ",
        " END ",
        " (+) ",
        " MAP[",
        " CAST(",
        " b.c ",
        " ROW(",
        " ARRAY[",
    ];
    let texts = crate::support::sql_texts();
    let mut rng = Rng(0xFA57_9A75_u64);
    let (mut runs, mut parsed) = (0usize, 0usize);
    for (path, text) in &texts {
        // Mutations land after a word: where the fast path decides.
        let ends: Vec<usize> = text
            .char_indices()
            .zip(text.chars().skip(1))
            .filter(|((_, c), n)| {
                (c.is_ascii_alphanumeric() || *c == '_') && !n.is_ascii_alphanumeric() && *n != '_'
            })
            .map(|((i, _), _)| i + 1)
            .collect();
        if ends.is_empty() {
            continue;
        }
        for round in 0..8 {
            let mut t = text.clone();
            for _ in 0..=rng.below(2) {
                let at = ends[rng.below(ends.len())].min(t.len());
                if t.is_char_boundary(at) {
                    t.insert_str(at, PIECES[rng.below(PIECES.len())]);
                }
            }
            runs += 1;
            if check(&t, &format!("{} (mutation {round})", path.display())) {
                parsed += 1;
            }
        }
    }
    // Both ways are exercised: mutations that still parse (ASTs compared) and others (errors compared).
    eprintln!("{parsed} of {runs} mutations parsed whole by sqlparser");
    assert!(parsed > runs / 10 && parsed < runs, "{parsed} of {runs}");
}

/// What makes sqlparser's answer for a word that is no keyword an identifier, whatever follows but
/// `(` or a string: the dialect allows no lambda (`a -> …`), no XML or custom-type typed literal
/// (`t 'x'`) and no outer-join marker (`a(+)`). If one of them changes, the fast path must too.
#[test]
fn the_dialect_settings_the_fast_path_relies_on_hold() {
    use sqlparser::dialect::Dialect;
    use sqlparser::keywords::Keyword;
    let d = FlinkDialect;
    assert!(!d.supports_lambda_functions());
    assert!(!d.supports_xml_expressions());
    assert!(!d.supports_outer_join_operator());
    for qualified in [false, true] {
        assert!(!d.is_custom_type_typed_string(Keyword::NoKeyword, qualified));
    }
}
