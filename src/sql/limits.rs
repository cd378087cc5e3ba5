//! Documented limits of the SQL front end, where a limit is the honest answer to pathological input.
//!
//! Everything below a limit is analysed in time linear in the text (splitting, the token-level fallback, the
//! extraction walks and the line index; the parser itself is linear in the tokens of a statement it
//! accepts). Beyond a limit the front end gives a clear answer instead of exhausting memory or the stack:
//!
//! | limit | value | beyond it |
//! |---|---|---|
//! | [`MAX_SQL_FILE_BYTES`] | 8 MiB | the file is not analysed: one [`WarningKind::Limit`] warning (an error for the project), no statement |
//! | [`MAX_PARSED_STATEMENT_TOKENS`] | 200,000 tokens | the statement is read by the token-level fallback (linear, small memory), with a warning |
//! | [`MAX_PARSER_NESTING`] | 50 levels of parentheses | the statement is read by the token-level fallback, with a warning naming the limit |
//!
//! Why these numbers: the tokenizer holds one token of ~80 bytes per one or two bytes of text, and the AST
//! of a statement a few hundred bytes per token. Measured with `flinkpipe sql refs` (BENCHMARKS.md, "Large
//! and pathological SQL"): the worst 8 MiB shape, a one-line `OR` chain, peaks at 0.76 GB; a minified file
//! of 8 MiB at 0.51 GB; a 53 MB file, refused, at 0.48 GB (reading it). Real Flink SQL files are far
//! below: the largest file of the shared corpus and of the public sample (`tests/data/real-sql`) is a
//! 105 KB seed `INSERT … VALUES`. The nesting limit is sqlparser's own recursion limit. Long operator
//! chains (`a OR b OR …`, 20,000 `UNION ALL` branches) need no limit: the trees they make are walked and
//! dropped without deep recursion (`deep`).
//!
//! [`check_file_size`] is the check for a file's size on disk, before it is read (the project scan
//! reads the file, and [`crate::sql::analyze`] refuses the text).
//!
//! [`WarningKind::Limit`]: super::WarningKind::Limit

/// Largest SQL file analysed, in bytes (8 MiB).
pub const MAX_SQL_FILE_BYTES: usize = crate::fsutil::MAX_SQL_FILE_BYTES as usize;

/// Most significant tokens (words, literals, punctuation; not whitespace or comments) in one statement
/// given to the parser. A longer statement is read by the token-level fallback.
pub const MAX_PARSED_STATEMENT_TOKENS: usize = 200_000;

/// Deepest nesting of parentheses, subqueries and expressions the parser follows (sqlparser's default
/// recursion limit). A deeper statement is read by the token-level fallback.
pub const MAX_PARSER_NESTING: usize = 50;

/// A limit the input exceeds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// The file is larger than [`MAX_SQL_FILE_BYTES`].
    #[error(
        "SQL file of {bytes} bytes exceeds the limit of {limit} bytes ({} MiB): it is not analysed; split it into smaller files",
        limit / (1 << 20)
    )]
    FileTooLarge {
        /// The file's size, in bytes.
        bytes: usize,
        /// [`MAX_SQL_FILE_BYTES`].
        limit: usize,
    },
}

/// Checks a SQL file's size (in bytes) against [`MAX_SQL_FILE_BYTES`].
///
/// Errors: [`LimitError::FileTooLarge`].
pub fn check_file_size(bytes: usize) -> Result<(), LimitError> {
    if bytes > MAX_SQL_FILE_BYTES {
        return Err(LimitError::FileTooLarge {
            bytes,
            limit: MAX_SQL_FILE_BYTES,
        });
    }
    Ok(())
}
