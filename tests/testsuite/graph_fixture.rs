//! Graphs shared by the `graph_*` tests.
#![allow(dead_code)]

use flinkpipe::graph::{EdgeKind, NodeInfo, PipelineGraph};

/// A node in product `product` whose folder is `pipelines/<layer folder>/<product>/<name>`.
pub fn node(name: &str, layer: &str, product: Option<&str>) -> NodeInfo {
    let folder = match layer {
        "source" => "sources",
        "intermediate" => "intermediates",
        "dimension" => "dimensions",
        "fact" => "facts",
        "view" => "views",
        _ => "seeds",
    };
    NodeInfo {
        name: name.to_string(),
        product: product.map(str::to_string),
        layer: layer.to_string(),
        path: Some(match product {
            Some(p) => format!("pipelines/{folder}/{p}/{name}"),
            None => format!("pipelines/{folder}/{name}"),
        }),
        external: false,
    }
}

pub fn data(parent: &str, child: &str) -> (String, String, EdgeKind) {
    (parent.to_string(), child.to_string(), EdgeKind::Data)
}

pub fn like(parent: &str, child: &str) -> (String, String, EdgeKind) {
    (parent.to_string(), child.to_string(), EdgeKind::Like)
}

/// The p2 graph of shift_left 0.1.52's parity fixture
/// (`src/shift_left/tests/data/flink-project/pipelines` in
/// <https://github.com/jbcodeforce/shift_left_utils>), with the fixture's layers:
/// `src_y→y→{d,z}`, `src_x→x→z`, `{src_x,src_a}→a`, `src_b→b→c`, `z→{c,d,p}`, `c→e`, `d→f`.
pub fn p2_parts() -> (Vec<NodeInfo>, Vec<(String, String, EdgeKind)>) {
    let mut nodes = Vec::new();
    for n in ["src_a", "src_b", "src_x", "src_y"] {
        nodes.push(node(n, "source", Some("p2")));
    }
    for n in ["a", "b", "c", "d", "x", "y", "z"] {
        nodes.push(node(n, "intermediate", Some("p2")));
    }
    for n in ["e", "f", "p"] {
        nodes.push(node(n, "fact", Some("p2")));
    }
    let edges = [
        ("src_y", "y"),
        ("y", "d"),
        ("y", "z"),
        ("src_x", "x"),
        ("x", "z"),
        ("src_x", "a"),
        ("src_a", "a"),
        ("src_b", "b"),
        ("b", "c"),
        ("z", "c"),
        ("z", "d"),
        ("z", "p"),
        ("c", "e"),
        ("d", "f"),
    ]
    .into_iter()
    .map(|(p, c)| data(p, c))
    .collect();
    (nodes, edges)
}

pub fn p2() -> PipelineGraph {
    let (nodes, edges) = p2_parts();
    PipelineGraph::build(nodes, edges).expect("p2 builds")
}

/// A deterministic pseudo-random sequence (64-bit LCG), so tests need no `rand`.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

pub fn set(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}
