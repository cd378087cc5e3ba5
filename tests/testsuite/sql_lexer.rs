//! The fast tokenizer (`flinkpipe::sql::lexer`) gives exactly sqlparser's significant tokens and spans,
//! or nothing: on every SQL file of the corpus, the test data and the example projects, and on
//! character-level mutations of them aimed at its edges (quotes, comments, operators, numbers glued to
//! words, non-ASCII characters, line ends). It must also cover most real files, or it is no faster.

use crate::support::Rng;
use flinkpipe::sql::lexer::{reference_tokens, tokenize_significant};

/// Checks one text; `true` when the fast tokenizer covered it.
fn check(sql: &str, what: &dyn std::fmt::Display) -> bool {
    let Some(fast) = tokenize_significant(sql) else {
        return false;
    };
    let reference = reference_tokens(sql);
    assert!(
        reference.as_ref() == Some(&fast),
        "{what}: the fast tokenizer differs from sqlparser's\n--- text\n{sql}\n--- fast\n{fast:?}\n--- sqlparser\n{reference:?}"
    );
    true
}

#[test]
fn the_fast_tokenizer_gives_sqlparsers_tokens_on_every_real_file() {
    let texts = crate::support::sql_texts();
    assert!(texts.len() > 400, "{} files", texts.len());
    let covered = texts.iter().filter(|(p, t)| check(t, &p.display())).count();
    eprintln!("covered {covered} of {} files", texts.len());
    // Real Flink SQL is what it is for: most files never reach sqlparser's tokenizer.
    assert!(
        covered * 100 >= texts.len() * 85,
        "covered {covered} of {} files",
        texts.len()
    );
}

/// The nearest character boundary of `s` at or before `at`.
fn boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[test]
fn the_fast_tokenizer_gives_sqlparsers_tokens_on_mutated_files() {
    // What sits at the tokenizer's edges.
    const PIECES: &[&str] = &[
        "'", "''", "\"", "`", "--", "/*", "*/", "/*+ ", "-", "/", "*", ">", ">>", ">=", "<", "<>",
        "<=", "<=>", "=", "==", "=>", "!", "!=", "|", "||", ":", "::", ":=", ".", "._", "e", "E",
        "e+", "L", "0", "0x", "1.", ".5", "N", "X", "é", "\u{a0}", "_", "$", " ", "\t", "\n", "\r",
        "\r\n", "\u{b}", "\u{c}", "?", "@", "#", "&", "^", "~", "{", "}", "\\", "ü'", "->",
        "SELECT", "1e5L",
    ];
    let texts = crate::support::sql_texts();
    let mut rng = Rng(0x5EED_1E7E_u64);
    let (mut runs, mut covered) = (0usize, 0usize);
    for (path, text) in &texts {
        for round in 0..40 {
            let mut t = text.clone();
            for _ in 0..=rng.below(3) {
                let at = boundary(&t, rng.below(t.len() + 1));
                match rng.below(4) {
                    0 | 1 => t.insert_str(at, PIECES[rng.below(PIECES.len())]),
                    2 => {
                        let end = boundary(&t, at + rng.below(8));
                        t.replace_range(at..end, "");
                    }
                    _ => t.truncate(at),
                }
            }
            runs += 1;
            if check(&t, &format!("{} (mutation {round})", path.display())) {
                covered += 1;
            }
        }
    }
    // Both ways are exercised: covered mutations compared, others left to sqlparser.
    eprintln!("covered {covered} of {runs} mutations");
    assert!(covered > runs / 4 && covered < runs, "{covered} of {runs}");
}
