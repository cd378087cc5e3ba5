//! Resynchronisation inside text the parser rejected: where does a new statement start although no `;`
//! ended the one before?
//!
//! Real files lose semicolons (`SELECT …` on one line, `INSERT INTO … GROUP BY …` on the next), or put
//! shell lines, `##` headings or half-written statements before a good one. Read as one statement, such a
//! chunk fails to parse and the token-level fallback keeps only what it recognises of the first statement
//! (a GROUP BY job recorded as stateless, the second CREATE TABLE lost). Here the chunk is cut before
//! every top-level keyword that can only start a statement at that point — `INSERT`, `CREATE`, `SELECT`,
//! `WITH` (a CTE list), `EXECUTE`, `BEGIN`, `SET`, `RESET`, `USE`, `DROP`, `ALTER`, `REPLACE TABLE`,
//! `EXPLAIN`, `SHOW`, `DESCRIBE` — and each piece is parsed on its own. A keyword is not a start where the
//! statement before it takes it: the query of `INSERT INTO t SELECT`, `… AS SELECT`, `UNION [ALL] SELECT`,
//! `EXPLAIN INSERT`, `EXECUTE INSERT`, `COMPILE PLAN … FOR INSERT`, `CREATE OR ALTER|REPLACE`,
//! `ALTER TABLE … SET|RESET|DROP`, `COMPILE AND EXECUTE`, and `WITH … INSERT` (Spark order, read as
//! `INSERT … WITH`). Only depth-0 tokens count (never inside parentheses). Cost: one pass over the tokens.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

fn keyword(t: Option<&TokenWithSpan>) -> Option<Keyword> {
    match t.map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// Token indices where a statement starts, the first being 0. One entry means the tokens are one statement.
pub(crate) fn split_points(tokens: &[TokenWithSpan]) -> Vec<usize> {
    let mut points = vec![0];
    let mut depth = 0usize;
    // The current piece: its first keyword and whether its query (a depth-0 SELECT / VALUES) has begun.
    let mut head = keyword(tokens.first());
    let mut query_started = matches!(head, Some(Keyword::SELECT | Keyword::VALUES));
    for i in 1..tokens.len() {
        match tokens[i].token {
            Token::LParen => {
                depth += 1;
                continue;
            }
            Token::RParen => {
                depth = depth.saturating_sub(1);
                continue;
            }
            _ if depth > 0 => continue,
            _ => {}
        }
        let Some(k) = keyword(tokens.get(i)) else {
            continue;
        };
        let prev = keyword(tokens.get(i - 1));
        let prev2 = if i >= 2 {
            keyword(tokens.get(i - 2))
        } else {
            None
        };
        let after_set_operator = matches!(
            prev,
            Some(Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT | Keyword::MINUS)
        ) || (matches!(prev, Some(Keyword::ALL | Keyword::DISTINCT))
            && matches!(
                prev2,
                Some(Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT | Keyword::MINUS)
            ));
        let takes_query = !query_started
            && matches!(
                head,
                Some(Keyword::INSERT | Keyword::WITH | Keyword::EXPLAIN)
            );
        let starts = match k {
            Keyword::SELECT => {
                if after_set_operator || prev == Some(Keyword::AS) || takes_query {
                    query_started = true;
                    false
                } else {
                    true
                }
            }
            Keyword::VALUES => {
                if takes_query {
                    query_started = true;
                }
                false
            }
            Keyword::WITH => {
                // A CTE list (`WITH name AS (`, `WITH name (cols) AS (`), not `WITH (options)` of a DDL,
                // `WITH LOCAL TIME ZONE` of a type or `STOP JOB … WITH SAVEPOINT`.
                let at = |k: usize| tokens.get(i + k).map(|t| &t.token);
                let cte = matches!(at(1), Some(Token::Word(_)))
                    && ((keyword(tokens.get(i + 2)) == Some(Keyword::AS)
                        && at(3) == Some(&Token::LParen))
                        || at(2) == Some(&Token::LParen));
                cte && !(prev == Some(Keyword::AS) || takes_query)
            }
            Keyword::INSERT => {
                if matches!(
                    prev,
                    Some(Keyword::EXPLAIN | Keyword::EXECUTE | Keyword::FOR)
                ) {
                    // `EXECUTE INSERT …`, `EXPLAIN INSERT …`, `COMPILE PLAN … FOR INSERT …`: the
                    // statement is an INSERT from here on (its query follows).
                    head = Some(Keyword::INSERT);
                    query_started = false;
                    false
                } else {
                    !(takes_query && head == Some(Keyword::WITH))
                }
            }
            // `SHOW CREATE TABLE t` shows; it creates nothing.
            Keyword::CREATE => prev != Some(Keyword::SHOW),
            Keyword::BEGIN
            | Keyword::USE
            | Keyword::SHOW
            | Keyword::DESCRIBE
            | Keyword::EXPLAIN => true,
            Keyword::EXECUTE => prev != Some(Keyword::AND),
            Keyword::ALTER => prev != Some(Keyword::OR),
            Keyword::REPLACE => {
                prev != Some(Keyword::OR) && keyword(tokens.get(i + 1)) == Some(Keyword::TABLE)
            }
            // `ALTER TABLE t SET (…) | RESET (…) | DROP COLUMN …` continue the ALTER; `DROP TABLE …` and
            // `SET 'key' = …` after it do not.
            Keyword::DROP => {
                !matches!(head, Some(Keyword::ALTER | Keyword::UPDATE))
                    || matches!(
                        keyword(tokens.get(i + 1)),
                        Some(
                            Keyword::TABLE
                                | Keyword::VIEW
                                | Keyword::FUNCTION
                                | Keyword::DATABASE
                                | Keyword::CATALOG
                                | Keyword::TEMPORARY
                                | Keyword::MATERIALIZED
                        )
                    )
            }
            Keyword::SET | Keyword::RESET => {
                prev != Some(Keyword::STATEMENT)
                    && (!matches!(head, Some(Keyword::ALTER | Keyword::UPDATE))
                        || matches!(
                            tokens.get(i + 1).map(|t| &t.token),
                            Some(Token::SingleQuotedString(_))
                        ))
            }
            _ => false,
        };
        if starts {
            points.push(i);
            head = Some(k);
            query_started = matches!(k, Keyword::SELECT);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::FlinkDialect;
    use crate::sql::split::split;

    fn starts(sql: &str) -> Vec<String> {
        let f = split(&FlinkDialect, sql);
        split_points(&f.tokens)
            .into_iter()
            .map(|i| f.tokens[i].token.to_string())
            .collect()
    }

    #[test]
    fn cuts_before_statement_keywords_only_where_a_statement_can_start() {
        assert_eq!(
            starts(
                "SELECT * FROM a WHERE id = 'x'\nINSERT INTO b SELECT id, SUM(v) FROM a GROUP BY id"
            ),
            vec!["SELECT", "INSERT"]
        );
        assert_eq!(
            starts(
                "CREATE TABLE a (x INT) WITH ('connector'='datagen')\nCREATE TABLE c (x INT) WITH ('connector'='datagen')"
            ),
            vec!["CREATE", "CREATE"]
        );
        assert_eq!(
            starts("INSERT INTO t SELECT * FROM a UNION ALL SELECT * FROM b"),
            vec!["INSERT"]
        );
        assert_eq!(
            starts("CREATE TABLE t WITH ('a' = 'b') AS SELECT * FROM s SELECT 1"),
            vec!["CREATE", "SELECT"]
        );
        assert_eq!(
            starts("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x"),
            vec!["WITH"]
        );
        assert_eq!(
            starts("ALTER TABLE t SET ('a' = 'b') DROP TABLE u"),
            vec!["ALTER", "DROP"]
        );
        assert_eq!(
            starts(
                "CREATE OR ALTER MATERIALIZED TABLE m AS SELECT 1 CREATE OR REPLACE TABLE r AS SELECT 2"
            ),
            vec!["CREATE", "CREATE"]
        );
        assert_eq!(
            starts("SELECT a FROM s WHERE x IN (SELECT b FROM c) SELECT 2"),
            vec!["SELECT", "SELECT"]
        );
        assert_eq!(starts("EXPLAIN INSERT INTO t SELECT 1"), vec!["EXPLAIN"]);
        assert_eq!(
            starts("SELECT 1 WITH x AS (SELECT 2) SELECT * FROM x"),
            vec!["SELECT", "WITH"]
        );
    }
}
