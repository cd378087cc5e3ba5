//! Lineage: turns the inventory's references into the dependency graph of the project.
//!
//! Every reference must resolve to an inventory table, a table declared in `seeds/external_tables.json`,
//! or (with `allow_unknown`) a synthetic external node that is reported as a warning. An unresolved
//! reference is an error naming the file, line and table (shift_left silently turned typos into fake
//! parents, defect 6). Cycles are errors naming the cycle; a table reading itself is a self-loop, reported
//! as a warning and kept out of the ordering.

use crate::diagnostics::{self, Diagnostic};
use crate::graph::{EdgeKind, NodeInfo, PipelineGraph};
use crate::inventory::{self, Inventory, ReadKind};
/// Options of the commands that build the graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Keep unknown references as external nodes (warning) instead of failing (error).
    pub allow_unknown: bool,
}

/// The graph of an inventory: the inventory (with any synthetic external tables added), its graph and
/// every diagnostic so far (the inventory's and lineage's, normalized: errors first).
#[derive(Debug, Clone)]
pub struct Linked {
    pub inventory: Inventory,
    pub graph: PipelineGraph,
    pub diagnostics: Vec<Diagnostic>,
}

/// Resolves the inventory's references into a graph. Never fails: unknown references and cycles are
/// diagnostics in [`Linked::diagnostics`].
pub fn link(mut inventory: Inventory, options: LoadOptions) -> Linked {
    let mut diagnostics = std::mem::take(&mut inventory.diagnostics);
    let mut edges: Vec<(String, String, EdgeKind)> = Vec::new();
    let mut synthetic = Vec::new();
    for table in inventory.tables.values() {
        for r in &table.reads {
            if !inventory.tables.contains_key(&r.name) {
                let msg = format!(
                    "table '{}' reads '{}', which no table folder defines and seeds/external_tables.json does not declare",
                    table.name, r.name
                );
                if options.allow_unknown {
                    diagnostics.push(
                        Diagnostic::warning(
                            "unknown-table",
                            format!("{msg}; kept as an external table"),
                        )
                        .at(r.file.clone(), Some(r.line), Some(r.column)),
                    );
                    synthetic.push(r.name.clone());
                } else {
                    diagnostics.push(
                        Diagnostic::error(
                            "unknown-table",
                            format!("{msg} (use --allow-unknown to keep it as external)"),
                        )
                        .at(r.file.clone(), Some(r.line), Some(r.column)),
                    );
                    continue;
                }
            }
            if r.name == table.name {
                diagnostics.push(
                    Diagnostic::warning("self-reference", format!("table '{}' reads itself; the self-loop is kept out of the deploy order", table.name))
                        .at(r.file.clone(), Some(r.line), Some(r.column)),
                );
            }
            let kind = match r.kind {
                ReadKind::Data => EdgeKind::Data,
                ReadKind::Like => EdgeKind::Like,
            };
            edges.push((r.name.clone(), table.name.clone(), kind));
        }
    }
    for name in synthetic {
        let root_name = inventory.root_name.clone();
        inventory
            .tables
            .entry(name.clone())
            .or_insert_with(|| inventory::Table {
                unknown: true,
                ..inventory::external_table(&name, "common".into(), None, &root_name)
            });
    }
    let nodes: Vec<NodeInfo> = inventory
        .tables
        .values()
        .map(|t| NodeInfo {
            name: t.name.clone(),
            product: Some(t.product.clone()).filter(|p| p != crate::scan::layout::NO_PRODUCT),
            layer: t.table_type.clone(),
            path: Some(t.folder.clone()),
            external: t.external,
        })
        .collect();
    let graph = PipelineGraph::build(nodes, edges)
        .expect("every edge end is an inventory table")
        .with_statement_sets(
            crate::graph::StatementIndex::from_inventory(&inventory)
                .statement_sets()
                .map(|(o, s)| (o.to_string(), s.iter().cloned().collect()))
                .collect::<Vec<_>>(),
        );
    for cycle in graph.cycles() {
        let first = inventory.tables.get(&cycle[0]);
        let file = first
            .and_then(|t| t.dml_ref.clone().or(t.ddl_ref.clone()))
            .unwrap_or_default();
        let mut path = cycle.clone();
        path.push(cycle[0].clone());
        diagnostics.push(
            Diagnostic::error(
                "cycle",
                format!(
                    "tables depend on each other in a cycle: {}",
                    path.join(" -> ")
                ),
            )
            .at(file, None, None),
        );
    }
    diagnostics::normalize(&mut diagnostics);
    Linked {
        inventory,
        graph,
        diagnostics,
    }
}
