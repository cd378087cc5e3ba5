//! The statement level of the graph: which statement writes which tables.
//!
//! A statement is what runs: one DML file (`dml.<table>.sql`), which may write several tables
//! (`EXECUTE STATEMENT SET BEGIN … END;`, `BEGIN STATEMENT SET; … END;`, or several `INSERT INTO`s), or
//! the DDL of a CTAS / materialized table. A statement is named after its *owner*, the table of the folder
//! that holds the file (shift_left's rule: the folder's table is the first INSERT target); a table folder
//! may hold only the DDL of a table that another folder's statement writes (`written_by`).
//!
//! Everything that acts on a table acts on its statement, so on **every** table the statement writes:
//! a change to any INSERT of a statement set changes all its sinks, a restart restarts them all, and a
//! blue-green version of one sink is a version of all of them ([`StatementIndex::closure`]).
//!
//! Pure: built from the inventory, no I/O. Costs: [`StatementIndex::from_inventory`] is O(N log N);
//! [`StatementIndex::closure`] is a breadth-first walk, O(reached tables + their edges).

use crate::inventory::{Inventory, Table};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// For every table written by a statement of the project: that statement's owner, and for every owner
/// the tables its statement writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementIndex {
    /// Written table → the owners of the statements that write it (itself for a table whose own DML
    /// writes it; several only for a table of `flinkpipe.multi_writer_tables`).
    writer: BTreeMap<String, BTreeSet<String>>,
    /// Owner → every table its statement writes (the owner included), sorted.
    sinks: BTreeMap<String, BTreeSet<String>>,
}

/// How [`StatementIndex::closure`] reached a table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reached {
    /// One of the seeds.
    Seed,
    /// A child (its SQL reads `parent`).
    Child { parent: String },
    /// Written by the same statement as `sibling` (the statement owned by `owner`).
    SameStatement { sibling: String, owner: String },
}

impl StatementIndex {
    /// From `(owner, tables its statement writes)` pairs. An owner's own name need not be listed.
    pub fn from_statements<I, S>(statements: I) -> StatementIndex
    where
        I: IntoIterator<Item = (String, S)>,
        S: IntoIterator<Item = String>,
    {
        let mut idx = StatementIndex::default();
        for (owner, sinks) in statements {
            idx.add(&owner, sinks);
        }
        idx
    }

    /// Records that the statement owned by `owner` writes `sinks` (and `owner`). A table written by
    /// several statements (accepted by `flinkpipe.multi_writer_tables`, else an inventory error) has
    /// them all.
    pub fn add<S: IntoIterator<Item = String>>(&mut self, owner: &str, sinks: S) {
        let set = self.sinks.entry(owner.to_string()).or_default();
        set.insert(owner.to_string());
        set.extend(sinks);
        for s in set.iter() {
            self.writer
                .entry(s.clone())
                .or_default()
                .insert(owner.to_string());
        }
    }

    /// The owners of every statement that writes `table` (sorted; several only for a table fed by
    /// more than one statement).
    pub fn writers(&self, table: &str) -> Vec<&str> {
        self.writer
            .get(table)
            .map(|w| w.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// From the inventory: a table with a DML owns a statement writing itself and its `extra_sinks`; a
    /// CTAS or materialized table owns the statement of its DDL; a table `written_by` another is one of
    /// that owner's sinks.
    pub fn from_inventory(inv: &Inventory) -> StatementIndex {
        Self::from_statements(
            inv.tables
                .values()
                .filter(|t| !t.external && owns_statement(t))
                .map(|t| (t.name.clone(), t.extra_sinks.clone())),
        )
    }

    /// The owner of the statement that writes `table`, if a statement of the project writes it (its
    /// own, when it has one; else the first by name).
    pub fn writer(&self, table: &str) -> Option<&str> {
        let w = self.writer.get(table)?;
        w.get(table).or_else(|| w.iter().next()).map(String::as_str)
    }

    /// Every table the statement owned by `owner` writes (sorted, the owner included); empty for a
    /// table that owns no statement.
    pub fn sinks(&self, owner: &str) -> Vec<&str> {
        self.sinks
            .get(owner)
            .map(|s| s.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The other tables written by the statements that write `table` (sorted, `table` left out).
    pub fn co_sinks(&self, table: &str) -> Vec<&str> {
        let mut out: BTreeSet<&str> = BTreeSet::new();
        for owner in self.writers(table) {
            out.extend(self.sinks(owner).into_iter().filter(|s| *s != table));
        }
        out.into_iter().collect()
    }

    /// Statements that write more than one table: owner → its sinks.
    pub fn statement_sets(&self) -> impl Iterator<Item = (&str, &BTreeSet<String>)> {
        self.sinks
            .iter()
            .filter(|(_, s)| s.len() > 1)
            .map(|(o, s)| (o.as_str(), s))
    }

    /// The seeds and everything that must move with them: their descendants (by `children`) and every
    /// other sink of a statement that writes a table reached, followed again from there until nothing
    /// is added. Each table maps to how it was first reached (breadth-first, so the shortest way; seeds
    /// map to [`Reached::Seed`]).
    ///
    /// This is the one rule for "what a change or a version touches": impact, blue-green and restart
    /// cascades all use it, so a statement set is never split.
    pub fn closure<'g, F>(&self, seeds: &[&str], children: F) -> BTreeMap<String, Reached>
    where
        F: Fn(&str) -> Vec<&'g str>,
    {
        let mut reached: BTreeMap<String, Reached> = BTreeMap::new();
        let mut queue: VecDeque<String> = VecDeque::new();
        for s in seeds {
            if reached.insert(s.to_string(), Reached::Seed).is_none() {
                queue.push_back(s.to_string());
            }
        }
        while let Some(t) = queue.pop_front() {
            for owner in self.writers(&t) {
                for s in self.sinks(owner) {
                    if !reached.contains_key(s) {
                        reached.insert(
                            s.to_string(),
                            Reached::SameStatement {
                                sibling: t.clone(),
                                owner: owner.to_string(),
                            },
                        );
                        queue.push_back(s.to_string());
                    }
                }
            }
            for c in children(&t) {
                if !reached.contains_key(c) {
                    reached.insert(c.to_string(), Reached::Child { parent: t.clone() });
                    queue.push_back(c.to_string());
                }
            }
        }
        reached
    }

    /// [`Self::closure`] as a set.
    pub fn closure_set<'g, F>(&self, seeds: &[&str], children: F) -> BTreeSet<String>
    where
        F: Fn(&str) -> Vec<&'g str>,
    {
        self.closure(seeds, children).into_keys().collect()
    }
}

/// How a table of a [`StatementIndex::closure`] comes from its seeds, read back along the way it was
/// reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Via {
    /// The seed it comes from.
    pub seed: String,
    /// The statement-set step nearest the seed on the way, if any: `(co_sink, sibling)`, the table
    /// reached because the statement writing `sibling` writes it too.
    pub statement_step: Option<(String, String)>,
}

/// Reads back how `table` was reached in `reached` (a [`StatementIndex::closure`]); `None` for a table
/// it does not hold.
pub fn via(reached: &BTreeMap<String, Reached>, table: &str) -> Option<Via> {
    let mut step = None;
    let mut at = table;
    // Each step goes to a table reached earlier, so this ends; the bound guards a hand-made map.
    for _ in 0..=reached.len() {
        match reached.get(at)? {
            Reached::Seed => {
                return Some(Via {
                    seed: at.to_string(),
                    statement_step: step,
                });
            }
            Reached::Child { parent } => at = parent,
            Reached::SameStatement { sibling, .. } => {
                step = Some((at.to_string(), sibling.clone()));
                at = sibling;
            }
        }
    }
    None
}

/// Whether a table's own folder holds a statement that runs a job: a DML, or a CTAS / materialized
/// table DDL.
pub fn owns_statement(t: &Table) -> bool {
    t.written_by.is_none()
        && (t.dml_ref.is_some()
            || matches!(
                t.ddl_kind,
                Some(
                    crate::sql::StatementKind::Ctas
                        | crate::sql::StatementKind::CreateMaterializedTable
                )
            ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx() -> StatementIndex {
        StatementIndex::from_statements([
            ("a".to_string(), vec!["b".to_string(), "c".to_string()]),
            ("d".to_string(), vec![]),
        ])
    }

    #[test]
    fn co_sinks_and_writers() {
        let i = idx();
        assert_eq!(i.writer("c"), Some("a"));
        assert_eq!(i.co_sinks("b"), vec!["a", "c"]);
        assert_eq!(i.co_sinks("d"), Vec::<&str>::new());
        assert_eq!(i.co_sinks("zz"), Vec::<&str>::new());
        assert_eq!(i.statement_sets().count(), 1);
    }

    #[test]
    fn closure_follows_children_and_statement_sets_to_a_fixpoint() {
        let i = idx();
        // c's child is d; d's statement writes only d; x is a child of a.
        let children = |t: &str| -> Vec<&'static str> {
            match t {
                "c" => vec!["d"],
                "a" => vec!["x"],
                _ => vec![],
            }
        };
        let got = i.closure(&["b"], children);
        let names: Vec<&str> = got.keys().map(String::as_str).collect();
        assert_eq!(names, vec!["a", "b", "c", "d", "x"]);
        assert_eq!(got["b"], Reached::Seed);
        assert_eq!(
            got["c"],
            Reached::SameStatement {
                sibling: "b".into(),
                owner: "a".into()
            }
        );
        assert_eq!(got["d"], Reached::Child { parent: "c".into() });
    }
}
