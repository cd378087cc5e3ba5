//! The results side: reading what a query returns, on either target, and turning its changelog into
//! the rows it stands for. Used by `sql query`, `table preview` and the unit-test runner.
//!
//! - [`changelog`]: `+I/-U/+U/-D` changes folded into a [`Snapshot`] (keyed or multiset), with every
//!   retraction of a missing row reported.
//! - [`value`]: column types and typed values (numbers as numbers, timestamps as ISO strings).
//! - [`read`]: the read loop over a [`ResultStream`] — when to stop (end of a bounded result, a row
//!   limit, idle after rows arrived, a wall-clock timeout, Ctrl-C), when a snapshot is complete, and
//!   that the query is always stopped at the end.
//!
//! Facts: `streaming-results.md`, `confluent-cloud-flink-api.md` §8, `flink-sql-gateway-api.md` §3.

pub mod changelog;
pub mod read;
pub mod value;

pub use changelog::{Change, Inconsistency, Mode, Row, RowKind, Snapshot};
pub use read::{Page, QueryResult, ReadOptions, ResultStream, StopReason};
pub use value::Column;
