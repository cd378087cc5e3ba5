//! Dropping a parsed statement without deep recursion.
//!
//! The parser builds operator chains (`a OR b OR …`, `x + y + …`, `… UNION ALL …`) iteratively, as
//! left-deep trees one level per operator, so a 1 MB `OR` chain is a tree 100,000 levels deep. sqlparser
//! walks and prints such trees with stack-growing recursion (its `recursive-protection` feature), and so do
//! our walks, but Rust's drop glue recurses on the thread's own stack, once per level: dropping that tree
//! overflowed the stack and aborted the process. A large statement is therefore taken apart first — a
//! `VisitorMut` (stack-protected) moves every expression and set operation out of the tree, post-order,
//! so each one is shallow when it is dropped — and only then dropped. Cost: one more walk, for statements
//! over [`FLAT_DROP_TOKENS`] tokens only.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Query, SetExpr, Statement, Value, Values, VisitMut, VisitorMut};

/// Statements of at most this many tokens are dropped as usual: no chain in them is more than ~1,000
/// levels deep, which a recursive drop handles on any thread's stack (2 MiB for test threads).
pub(crate) const FLAT_DROP_TOKENS: usize = 2_000;

/// Drops `statements` (parsed from `tokens` tokens) without recursing once per level of their trees.
pub(crate) fn drop_statements(mut statements: Vec<Statement>, tokens: usize) {
    if tokens <= FLAT_DROP_TOKENS {
        return;
    }
    let mut flat = Flatten::default();
    for s in &mut statements {
        let _ = s.visit(&mut flat);
    }
    drop(statements);
    // `flat` now holds every node, each without deep children; dropping the vectors is iterative.
}

#[derive(Default)]
struct Flatten {
    exprs: Vec<Expr>,
    sets: Vec<SetExpr>,
}

fn empty_set() -> SetExpr {
    SetExpr::Values(Values {
        explicit_row: false,
        value_keyword: false,
        rows: vec![],
    })
}

impl VisitorMut for Flatten {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        // Children were visited (and moved out) first: what is moved here is shallow.
        self.exprs
            .push(std::mem::replace(e, Expr::value(Value::Null)));
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let mut stack = vec![std::mem::replace(q.body.as_mut(), empty_set())];
        while let Some(mut s) = stack.pop() {
            if let SetExpr::SetOperation { left, right, .. } = &mut s {
                stack.push(std::mem::replace(left.as_mut(), empty_set()));
                stack.push(std::mem::replace(right.as_mut(), empty_set()));
            }
            self.sets.push(s);
        }
        ControlFlow::Continue(())
    }
}
