//! Results as data: a query's changelog turned into the rows it stands for, and its typed values, on
//! either target. The read loop that fetches the pages is [`crate::target::read`]. Used by `sql
//! query`, `table preview`, release checks, live tests and the unit-test runner.
//!
//! - [`changelog`]: `+I/-U/+U/-D` changes folded into a [`Snapshot`] (keyed or multiset), with every
//!   retraction of a missing row reported.
//! - [`value`]: column types and typed values (numbers as numbers, timestamps as ISO strings).
//!
//! Facts: Flink's dynamic tables and changelogs
//! (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/dynamic_tables/>),
//! Confluent's statement results (<https://docs.confluent.io/cloud/current/flink/reference/statements.html>).

pub mod changelog;
pub mod value;

pub use changelog::{Change, Inconsistency, Mode, Row, RowKind, Snapshot};
pub use value::Column;
