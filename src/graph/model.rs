//! The graph itself: one node per table, one edge per parent → child dependency, and the orderings the
//! planner needs (parents first, waves of independent tables, cycles to report).
//!
//! Nodes are stored sorted by name, so a node's index order *is* its name order: sorted outputs come for
//! free and every tie-break is deterministic whatever order the caller built the input in.
//!
//! Costs: [`PipelineGraph::build`] is O(N log N + E log E); traversals are BFS, O(N + E);
//! [`PipelineGraph::topo_order`] and [`PipelineGraph::waves`] are Kahn's algorithm with a priority queue,
//! O(N log N + E) — never O(V·E) (shift_left defect #13).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};

use petgraph::Direction::{self, Incoming, Outgoing};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

/// One table of the project (or an external table it reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeInfo {
    /// The table name: the inventory key, unique in a graph.
    pub name: String,
    /// The product (data product) the table belongs to, if any.
    pub product: Option<String>,
    /// The table type: `source`, `intermediate`, `dimension`, `fact`, `view`, `seed`, `external_kafka`, …
    /// Folder names (`facts`, `sources`, …) are understood too, see [`canonical_layer`].
    pub layer: String,
    /// The table folder relative to the pipelines root's parent, e.g. `pipelines/facts/p1/fct_order`.
    pub path: Option<String>,
    /// True for tables the project reads but does not deploy (`external_tables.json`).
    pub external: bool,
}

/// What an edge parent → child means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// The child's DML reads the parent.
    Data,
    /// `CREATE TABLE child LIKE parent`: the parent must exist first and lends its schema; no data flows.
    Like,
}

/// Why a graph could not be built or ordered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// Two nodes share a name.
    #[error("duplicate table '{name}'")]
    DuplicateTable { name: String },
    /// An edge names a table that is not a node.
    #[error("unknown table '{name}' in edge {parent} -> {child}")]
    UnknownEdgeEnd {
        name: String,
        parent: String,
        child: String,
    },
    /// A query (subset, tree root) names a table that is not a node.
    #[error("unknown table '{name}'")]
    UnknownTable { name: String },
    /// The tables to order depend on each other in a circle. `cycle` lists the path once, starting at its
    /// smallest name; the edge from the last name back to the first closes it.
    #[error("cycle: {}", cycle_text(cycle))]
    Cycle { cycle: Vec<String> },
}

/// `a -> b -> c -> a` for the cycle `[a, b, c]`.
pub(crate) fn cycle_text(cycle: &[String]) -> String {
    let mut parts: Vec<&str> = cycle.iter().map(String::as_str).collect();
    if let Some(first) = cycle.first() {
        parts.push(first);
    }
    parts.join(" -> ")
}

/// The canonical layer for a layer or folder name, compared case-insensitively:
/// `sources`/`src` → `source`, `intermediates`/`stage` → `intermediate`, `dimensions` → `dimension`,
/// `facts` → `fact`, `views`/`mv` → `view`, `seeds` → `seed`, `external` → `external_kafka` (shift_left's
/// type for `external_tables.json` entries). Anything else is returned unchanged.
pub fn canonical_layer(layer: &str) -> &str {
    const ALIASES: [(&str, &[&str]); 7] = [
        ("source", &["source", "sources", "src"]),
        ("seed", &["seed", "seeds"]),
        ("intermediate", &["intermediate", "intermediates", "stage"]),
        ("dimension", &["dimension", "dimensions"]),
        ("fact", &["fact", "facts"]),
        ("view", &["view", "views", "mv"]),
        ("external_kafka", &["external_kafka", "external"]),
    ];
    ALIASES
        .iter()
        .find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(layer)))
        .map_or(layer, |(canonical, _)| canonical)
}

/// The deploy-order rank of a layer, used to break ties between tables that are ready together:
/// source < seed < intermediate < dimension < fact < view < anything else.
pub fn layer_rank(layer: &str) -> u8 {
    match canonical_layer(layer) {
        "source" => 0,
        "seed" => 1,
        "intermediate" => 2,
        "dimension" => 3,
        "fact" => 4,
        "view" => 5,
        _ => 6,
    }
}

/// The dependency graph of a pipelines project. Immutable once built.
#[derive(Debug, Clone)]
pub struct PipelineGraph {
    /// Nodes in name order; edges in (parent, child) name order.
    graph: DiGraph<NodeInfo, EdgeKind>,
    index: HashMap<String, NodeIndex>,
    /// [`layer_rank`] of each node, by index.
    rank: Vec<u8>,
    /// Tables that read themselves, kept out of `graph` so they never count as cycles.
    self_loops: BTreeMap<NodeIndex, EdgeKind>,
    /// Statements that write more than one table (statement sets): owner → every table it writes,
    /// sorted. Drawn by the exporters; empty unless [`PipelineGraph::with_statement_sets`] set it.
    statement_sets: BTreeMap<String, Vec<String>>,
}

/// The outcome of ordering a subset: every node that matters for it, parents first.
struct Ordered {
    /// Subset nodes plus the outside nodes on paths between them, in processing order.
    seq: Vec<NodeIndex>,
    in_subset: Vec<bool>,
}

impl PipelineGraph {
    /// Builds the graph from nodes and `(parent, child, kind)` edges given by table name.
    ///
    /// Duplicate edges merge (a `Data` edge wins over a `Like` one). An edge from a table to itself (a DML
    /// that reads its own sink) is recorded apart, reported by [`Self::self_loops`] and ignored by the
    /// orderings. Input order does not matter: the same nodes and edges always give the same graph.
    ///
    /// Errors: [`GraphError::DuplicateTable`] when two nodes share a name, [`GraphError::UnknownEdgeEnd`]
    /// for the first edge (in input order) that names a table which is not a node.
    pub fn build(
        mut nodes: Vec<NodeInfo>,
        edges: Vec<(String, String, EdgeKind)>,
    ) -> Result<Self, GraphError> {
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(w) = nodes.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(GraphError::DuplicateTable {
                name: w[0].name.clone(),
            });
        }
        let mut graph = DiGraph::with_capacity(nodes.len(), edges.len());
        let mut index = HashMap::with_capacity(nodes.len());
        let mut rank = Vec::with_capacity(nodes.len());
        for node in nodes {
            rank.push(layer_rank(&node.layer));
            let name = node.name.clone();
            index.insert(name, graph.add_node(node));
        }

        let mut resolved: Vec<(NodeIndex, NodeIndex, EdgeKind)> = Vec::with_capacity(edges.len());
        let mut self_loops = BTreeMap::new();
        for (parent, child, kind) in edges {
            let lookup = |name: &str| {
                index
                    .get(name)
                    .copied()
                    .ok_or_else(|| GraphError::UnknownEdgeEnd {
                        name: name.to_string(),
                        parent: parent.clone(),
                        child: child.clone(),
                    })
            };
            let (p, c) = (lookup(&parent)?, lookup(&child)?);
            if p == c {
                let slot = self_loops.entry(p).or_insert(kind);
                *slot = (*slot).min(kind); // Data < Like
            } else {
                resolved.push((p, c, kind));
            }
        }
        // Sorted, a duplicate follows its twin and Data (< Like) comes first: keeping the first merges them.
        resolved.sort_unstable();
        resolved.dedup_by_key(|&mut (p, c, _)| (p, c));
        for (p, c, kind) in resolved {
            graph.add_edge(p, c, kind);
        }
        Ok(PipelineGraph {
            graph,
            index,
            rank,
            self_loops,
            statement_sets: BTreeMap::new(),
        })
    }

    /// The graph with its statement sets: for each statement that writes several tables, its owner
    /// (the table of the folder holding the DML) and every table it writes. Names that are not nodes
    /// are dropped; a set left with fewer than two tables is not kept.
    pub fn with_statement_sets<I>(mut self, sets: I) -> Self
    where
        I: IntoIterator<Item = (String, Vec<String>)>,
    {
        for (owner, mut sinks) in sets {
            sinks.retain(|s| self.index.contains_key(s));
            sinks.sort();
            sinks.dedup();
            if sinks.len() > 1 {
                self.statement_sets.insert(owner, sinks);
            }
        }
        self
    }

    /// Statements that write several tables: owner → the tables it writes (sorted), by owner.
    pub fn statement_sets(&self) -> &BTreeMap<String, Vec<String>> {
        &self.statement_sets
    }

    /// The number of tables.
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// True when the graph has no table.
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    /// The table called `name`.
    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.index.get(name).map(|&i| &self.graph[i])
    }

    /// Every table, sorted by name.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.graph.node_weights()
    }

    /// Every edge between two different tables as `(parent, child, kind)`, sorted by parent then child.
    /// Self-loops are not included (see [`Self::self_loops`]).
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, EdgeKind)> {
        self.graph
            .edge_references()
            .map(|e| (self.name(e.source()), self.name(e.target()), *e.weight()))
    }

    /// The kind of the edge `parent → child`, if there is one (self-loops included).
    pub fn edge_kind(&self, parent: &str, child: &str) -> Option<EdgeKind> {
        let (p, c) = (self.index_of(parent)?, self.index_of(child)?);
        if p == c {
            return self.self_loops.get(&p).copied();
        }
        self.graph.find_edge(p, c).map(|e| self.graph[e])
    }

    /// The direct parents of `name`, sorted; empty for an unknown name. Self-loops are not included.
    pub fn parents(&self, name: &str) -> Vec<&str> {
        self.neighbor_edges(name, Incoming)
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// The direct children of `name`, sorted; empty for an unknown name. Self-loops are not included.
    pub fn children(&self, name: &str) -> Vec<&str> {
        self.neighbor_edges(name, Outgoing)
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// The direct parents of `name` with the kind of each edge, sorted by parent name.
    pub fn parent_edges(&self, name: &str) -> Vec<(&str, EdgeKind)> {
        self.neighbor_edges(name, Incoming)
    }

    /// The direct children of `name` with the kind of each edge, sorted by child name.
    pub fn child_edges(&self, name: &str) -> Vec<(&str, EdgeKind)> {
        self.neighbor_edges(name, Outgoing)
    }

    /// Every table some of `names` depends on, directly or not, through edges of either kind.
    ///
    /// A start name is included only when it is an ancestor of a start (another one, or itself through a
    /// cycle); a self-loop does not make a table its own ancestor. Unknown names are ignored.
    pub fn ancestors(&self, names: &[&str]) -> BTreeSet<String> {
        let starts = self.indices(names);
        self.names_of(&self.reach(&starts, Incoming, None))
    }

    /// Every table that depends on some of `names`, directly or not; the mirror of [`Self::ancestors`].
    pub fn descendants(&self, names: &[&str]) -> BTreeSet<String> {
        let starts = self.indices(names);
        self.names_of(&self.reach(&starts, Outgoing, None))
    }

    /// The tables of `subset` (all tables when `None`), parents before children.
    ///
    /// Among tables that are ready together, the one with the lower [`layer_rank`] comes first, then the
    /// smaller name, so the order is stable. Paths through tables outside the subset still count: when
    /// `a` is an ancestor of `b` through tables not in the subset, `a` still comes before `b`.
    ///
    /// Errors: [`GraphError::UnknownTable`] for a subset name that is not a node; [`GraphError::Cycle`]
    /// naming one cycle when the subset's tables (or the paths between them) contain one.
    pub fn topo_order(&self, subset: Option<&BTreeSet<String>>) -> Result<Vec<String>, GraphError> {
        let ord = self.order(subset)?;
        Ok(ord
            .seq
            .iter()
            .filter(|i| ord.in_subset[i.index()])
            .map(|&i| self.name(i).to_string())
            .collect())
    }

    /// The tables of `subset` (all tables when `None`) in waves: wave `k` holds the tables whose ancestors
    /// in the subset are all in earlier waves and at least one is in wave `k - 1` (longest-path layering),
    /// so the tables of a wave are independent of each other and can be deployed together. Each wave is
    /// sorted like [`Self::topo_order`] breaks ties (layer rank, then name). Paths through tables outside
    /// the subset count as in [`Self::topo_order`]; the errors are the same.
    pub fn waves(&self, subset: Option<&BTreeSet<String>>) -> Result<Vec<Vec<String>>, GraphError> {
        let ord = self.order(subset)?;
        // Per node: the highest wave of a subset table among its ancestors-or-self.
        let mut carry: Vec<Option<usize>> = vec![None; self.len()];
        let mut waves: Vec<Vec<NodeIndex>> = Vec::new();
        for &i in &ord.seq {
            let above = self
                .graph
                .neighbors_directed(i, Incoming)
                .filter_map(|p| carry[p.index()])
                .max();
            carry[i.index()] = if ord.in_subset[i.index()] {
                let wave = above.map_or(0, |w| w + 1);
                if waves.len() <= wave {
                    waves.resize_with(wave + 1, Vec::new);
                }
                waves[wave].push(i);
                Some(wave)
            } else {
                above
            };
        }
        Ok(waves
            .into_iter()
            .map(|mut wave| {
                wave.sort_by_key(|&i| self.tie_key(i));
                wave.into_iter().map(|i| self.name(i).to_string()).collect()
            })
            .collect())
    }

    /// Every cycle of the graph: one per non-trivial strongly connected component, as the shortest cycle
    /// through the component's smallest name, starting there (`[a, b, c]` means `a -> b -> c -> a`).
    /// Sorted by first name. A component with more edges than that cycle still yields one entry; its
    /// other cycles share its tables. Self-loops are not cycles (see [`Self::self_loops`]).
    pub fn cycles(&self) -> Vec<Vec<String>> {
        // Kosaraju's algorithm: petgraph's is iterative (two DFS passes with explicit stacks), where its
        // Tarjan recursed once per node of a path and overflowed the stack near 87,500 chained tables.
        let mut component = vec![usize::MAX; self.len()];
        let mut starts = Vec::new();
        for (id, scc) in petgraph::algo::kosaraju_scc(&self.graph)
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .enumerate()
        {
            for &i in &scc {
                component[i.index()] = id;
            }
            starts.push(scc.into_iter().min().expect("a component is never empty"));
        }
        starts.sort();
        starts
            .into_iter()
            .map(|start| self.shortest_cycle(start, &component))
            .collect()
    }

    /// The tables whose DML reads their own sink, sorted.
    pub fn self_loops(&self) -> Vec<String> {
        self.self_loops
            .keys()
            .map(|&i| self.name(i).to_string())
            .collect()
    }

    // ---- crate-internal access by index, for selection and export -------------------------------------

    pub(crate) fn index_of(&self, name: &str) -> Option<NodeIndex> {
        self.index.get(name).copied()
    }

    pub(crate) fn name(&self, i: NodeIndex) -> &str {
        &self.graph[i].name
    }

    pub(crate) fn info(&self, i: NodeIndex) -> &NodeInfo {
        &self.graph[i]
    }

    pub(crate) fn rank(&self, i: NodeIndex) -> u8 {
        self.rank[i.index()]
    }

    /// The indices of every node, in name order.
    pub(crate) fn indices_all(&self) -> impl Iterator<Item = NodeIndex> {
        self.graph.node_indices()
    }

    /// Neighbours of `i` in `dir` with the edge kind, sorted by name (= index).
    pub(crate) fn neighbors_sorted(
        &self,
        i: NodeIndex,
        dir: Direction,
    ) -> Vec<(NodeIndex, EdgeKind)> {
        let mut v: Vec<(NodeIndex, EdgeKind)> = self
            .graph
            .edges_directed(i, dir)
            .map(|e| {
                let other = if dir == Incoming {
                    e.source()
                } else {
                    e.target()
                };
                (other, *e.weight())
            })
            .collect();
        v.sort();
        v
    }

    /// The self-loops with their kinds, by index.
    pub(crate) fn self_loop_kinds(&self) -> impl Iterator<Item = (NodeIndex, EdgeKind)> {
        self.self_loops.iter().map(|(&i, &k)| (i, k))
    }

    /// A mask of the nodes reachable from `starts` in `dir` through at least one edge, at most
    /// `max_depth` edges away (unlimited when `None`). BFS, O(N + E).
    pub(crate) fn reach(
        &self,
        starts: &[NodeIndex],
        dir: Direction,
        max_depth: Option<usize>,
    ) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut queue: VecDeque<(NodeIndex, usize)> = starts.iter().map(|&s| (s, 0)).collect();
        while let Some((i, depth)) = queue.pop_front() {
            if max_depth.is_some_and(|max| depth >= max) {
                continue;
            }
            for j in self.graph.neighbors_directed(i, dir) {
                if !seen[j.index()] {
                    seen[j.index()] = true;
                    queue.push_back((j, depth + 1));
                }
            }
        }
        seen
    }

    /// The nodes reachable from `starts` in `dir` through at least one edge and not yet in `seen`, in
    /// the order met; each is marked in `seen`. Nodes already in `seen` are neither returned nor walked
    /// through, so a caller that keeps `seen` between queries walks each node once over all of them.
    /// BFS, O(nodes and edges met).
    pub(crate) fn reach_unseen(
        &self,
        starts: &[NodeIndex],
        dir: Direction,
        seen: &mut [bool],
    ) -> Vec<NodeIndex> {
        let mut found = Vec::new();
        let mut queue: VecDeque<NodeIndex> = starts.iter().copied().collect();
        while let Some(i) = queue.pop_front() {
            for j in self.graph.neighbors_directed(i, dir) {
                if !seen[j.index()] {
                    seen[j.index()] = true;
                    found.push(j);
                    queue.push_back(j);
                }
            }
        }
        found
    }

    /// The names of the nodes set in `mask`, sorted.
    pub(crate) fn names_of(&self, mask: &[bool]) -> BTreeSet<String> {
        self.graph
            .node_indices()
            .filter(|i| mask[i.index()])
            .map(|i| self.name(i).to_string())
            .collect()
    }

    // ---- private ---------------------------------------------------------------------------------------

    fn indices(&self, names: &[&str]) -> Vec<NodeIndex> {
        names.iter().filter_map(|n| self.index_of(n)).collect()
    }

    fn neighbor_edges(&self, name: &str, dir: Direction) -> Vec<(&str, EdgeKind)> {
        let Some(i) = self.index_of(name) else {
            return Vec::new();
        };
        self.neighbors_sorted(i, dir)
            .into_iter()
            .map(|(j, kind)| (self.name(j), kind))
            .collect()
    }

    /// Ready tables are taken by layer rank, then name (= index).
    fn tie_key(&self, i: NodeIndex) -> (u8, NodeIndex) {
        (self.rank(i), i)
    }

    /// Kahn's algorithm over the subset and the outside nodes on paths between subset nodes. Outside
    /// nodes are taken as soon as they are ready, so a subset node becomes ready exactly when all its
    /// subset ancestors are placed: ties among subset nodes are then broken as if the subset were a graph
    /// of its own whose edges are the paths between its nodes.
    fn order(&self, subset: Option<&BTreeSet<String>>) -> Result<Ordered, GraphError> {
        let n = self.len();
        let (in_subset, relevant) = match subset {
            None => (vec![true; n], vec![true; n]),
            Some(names) => {
                let mut in_subset = vec![false; n];
                let mut starts = Vec::with_capacity(names.len());
                for name in names {
                    let i = self
                        .index_of(name)
                        .ok_or_else(|| GraphError::UnknownTable { name: name.clone() })?;
                    in_subset[i.index()] = true;
                    starts.push(i);
                }
                let below = self.reach(&starts, Outgoing, None);
                let above = self.reach(&starts, Incoming, None);
                let relevant = (0..n)
                    .map(|i| in_subset[i] || (below[i] && above[i]))
                    .collect();
                (in_subset, relevant)
            }
        };

        let mut pending = vec![0usize; n];
        let mut outside_ready = Vec::new();
        let mut subset_ready = BinaryHeap::new();
        let mut total = 0;
        for i in self.graph.node_indices().filter(|i| relevant[i.index()]) {
            total += 1;
            pending[i.index()] = self
                .graph
                .neighbors_directed(i, Incoming)
                .filter(|p| relevant[p.index()])
                .count();
            if pending[i.index()] == 0 {
                if in_subset[i.index()] {
                    subset_ready.push(Reverse(self.tie_key(i)));
                } else {
                    outside_ready.push(i);
                }
            }
        }

        let mut seq = Vec::with_capacity(total);
        loop {
            let i = match outside_ready.pop() {
                Some(i) => i,
                None => match subset_ready.pop() {
                    Some(Reverse((_, i))) => i,
                    None => break,
                },
            };
            seq.push(i);
            for c in self.graph.neighbors_directed(i, Outgoing) {
                if !relevant[c.index()] {
                    continue;
                }
                pending[c.index()] -= 1;
                if pending[c.index()] == 0 {
                    if in_subset[c.index()] {
                        subset_ready.push(Reverse(self.tie_key(c)));
                    } else {
                        outside_ready.push(c);
                    }
                }
            }
        }

        if seq.len() < total {
            // Every node left over waits on another left-over node: some cycle lies among them. Any strongly
            // connected component touching a relevant node lies wholly among the relevant ones.
            let mut placed = vec![false; n];
            for &i in &seq {
                placed[i.index()] = true;
            }
            let cycle = self
                .cycles()
                .into_iter()
                .find(|c| {
                    self.index_of(&c[0])
                        .is_some_and(|i| relevant[i.index()] && !placed[i.index()])
                })
                .expect("Kahn's algorithm stalls only on a cycle");
            return Err(GraphError::Cycle { cycle });
        }
        Ok(Ordered { seq, in_subset })
    }

    /// The shortest cycle through `start` inside its component (BFS over children in name order).
    fn shortest_cycle(&self, start: NodeIndex, component: &[usize]) -> Vec<String> {
        let id = component[start.index()];
        let mut pred: HashMap<NodeIndex, NodeIndex> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            for (c, _) in self.neighbors_sorted(i, Outgoing) {
                if c == start {
                    let mut path = vec![i];
                    let mut at = i;
                    while at != start {
                        at = pred[&at];
                        path.push(at);
                    }
                    path.reverse();
                    return path.into_iter().map(|j| self.name(j).to_string()).collect();
                }
                if component[c.index()] == id && !pred.contains_key(&c) {
                    pred.insert(c, i);
                    queue.push_back(c);
                }
            }
        }
        unreachable!("a node of a strongly connected component lies on a cycle")
    }
}
