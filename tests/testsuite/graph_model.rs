//! The graph model on shift_left's p2 fixture graph, on cycles and self-loops, and on a 10,000-table DAG.

use std::collections::HashMap;

use crate::graph_fixture::{Lcg, data, like, node, p2, p2_parts, set};
use flinkpipe::graph::{
    EdgeKind, GraphError, NodeInfo, PipelineGraph, canonical_layer, layer_rank,
};

#[test]
fn p2_parents_and_children_are_sorted() {
    let g = p2();
    assert_eq!(g.len(), 14);
    assert_eq!(g.parents("a"), ["src_a", "src_x"]);
    assert_eq!(g.parents("z"), ["x", "y"]);
    assert_eq!(g.children("z"), ["c", "d", "p"]);
    assert_eq!(g.children("src_x"), ["a", "x"]);
    assert!(g.parents("src_x").is_empty());
    assert!(g.parents("nope").is_empty());
    assert_eq!(
        g.child_edges("y"),
        [("d", EdgeKind::Data), ("z", EdgeKind::Data)]
    );
    let names: Vec<&str> = g.nodes().map(|n| n.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a", "b", "c", "d", "e", "f", "p", "src_a", "src_b", "src_x", "src_y", "x", "y", "z"
        ]
    );
    assert_eq!(
        g.node("f").unwrap().path.as_deref(),
        Some("pipelines/facts/p2/f")
    );
    assert_eq!(g.edges().count(), 14);
}

#[test]
fn p2_ancestors_and_descendants() {
    let g = p2();
    assert_eq!(
        g.ancestors(&["f"]),
        set(&["d", "src_x", "src_y", "x", "y", "z"])
    );
    assert_eq!(g.descendants(&["z"]), set(&["c", "d", "e", "f", "p"]));
    assert_eq!(
        g.descendants(&["src_x"]),
        set(&["a", "c", "d", "e", "f", "p", "x", "z"])
    );
    // A start is included only when another start reaches it.
    assert_eq!(
        g.ancestors(&["f", "z"]),
        set(&["d", "src_x", "src_y", "x", "y", "z"])
    );
    assert_eq!(
        g.ancestors(&["e", "p"]),
        set(&["b", "c", "src_b", "src_x", "src_y", "x", "y", "z"])
    );
    assert!(g.ancestors(&["src_a"]).is_empty());
    assert!(g.ancestors(&["unknown"]).is_empty());
}

#[test]
fn p2_topo_order_is_parents_first_by_layer_then_name() {
    let g = p2();
    assert_eq!(
        g.topo_order(None).unwrap(),
        [
            "src_a", "src_b", "src_x", "src_y", "a", "b", "x", "y", "z", "c", "d", "e", "f", "p"
        ]
    );
}

#[test]
fn p2_waves_are_longest_path_layers() {
    let g = p2();
    assert_eq!(
        g.waves(None).unwrap(),
        vec![
            vec!["src_a", "src_b", "src_x", "src_y"],
            vec!["a", "b", "x", "y"],
            vec!["z"],
            vec!["c", "d", "p"],
            vec!["e", "f"],
        ]
    );
}

#[test]
fn subset_order_respects_paths_through_outside_tables() {
    let g = p2();
    // y -> z -> c: `c` sorts before `y` by name, but `y` is its ancestor through `z`.
    assert_eq!(g.topo_order(Some(&set(&["c", "y"]))).unwrap(), ["y", "c"]);
    assert_eq!(
        g.waves(Some(&set(&["a", "c", "y"]))).unwrap(),
        vec![vec!["a", "y"], vec!["c"]]
    );
    // f's ancestors plus f, as the planner asks for them.
    let mut plan = g.ancestors(&["f"]);
    plan.insert("f".into());
    assert_eq!(
        g.topo_order(Some(&plan)).unwrap(),
        ["src_x", "src_y", "x", "y", "z", "d", "f"]
    );
    assert_eq!(
        g.waves(Some(&set(&["src_b", "e", "f"]))).unwrap(),
        vec![vec!["src_b", "f"], vec!["e"]]
    );
    assert_eq!(
        g.topo_order(Some(&set(&["c", "nope"]))),
        Err(GraphError::UnknownTable {
            name: "nope".into()
        })
    );
}

#[test]
fn build_rejects_unknown_and_duplicate_tables() {
    let (nodes, mut edges) = p2_parts();
    edges.push(data("z", "ghost"));
    let err = PipelineGraph::build(nodes, edges).unwrap_err();
    assert_eq!(err.to_string(), "unknown table 'ghost' in edge z -> ghost");

    let (mut nodes, edges) = p2_parts();
    nodes.push(node("z", "fact", None));
    let err = PipelineGraph::build(nodes, edges).unwrap_err();
    assert_eq!(err.to_string(), "duplicate table 'z'");
}

#[test]
fn duplicate_edges_merge_and_data_wins_over_like() {
    let nodes = vec![
        node("base", "source", None),
        node("copy", "intermediate", None),
        node("twin", "intermediate", None),
    ];
    let edges = vec![
        like("base", "copy"),
        data("base", "copy"),
        like("base", "copy"),
        like("base", "twin"),
        like("base", "twin"),
    ];
    let g = PipelineGraph::build(nodes, edges).unwrap();
    assert_eq!(g.edges().count(), 2);
    assert_eq!(g.edge_kind("base", "copy"), Some(EdgeKind::Data));
    assert_eq!(g.edge_kind("base", "twin"), Some(EdgeKind::Like));
    assert_eq!(g.edge_kind("copy", "base"), None);
    // LIKE edges order deployments like data edges do.
    assert_eq!(g.topo_order(None).unwrap(), ["base", "copy", "twin"]);
    assert_eq!(g.ancestors(&["twin"]), set(&["base"]));
}

#[test]
fn self_loops_are_reported_and_never_a_cycle() {
    // INSERT INTO t SELECT … FROM s WHERE id NOT IN (SELECT id FROM t)
    let nodes = vec![node("s", "source", None), node("t", "fact", None)];
    let edges = vec![data("s", "t"), data("t", "t"), data("t", "t")];
    let g = PipelineGraph::build(nodes, edges).unwrap();
    assert_eq!(g.self_loops(), ["t"]);
    assert!(g.cycles().is_empty());
    assert_eq!(g.topo_order(None).unwrap(), ["s", "t"]);
    assert_eq!(g.waves(None).unwrap(), vec![vec!["s"], vec!["t"]]);
    assert_eq!(g.edge_kind("t", "t"), Some(EdgeKind::Data));
    assert!(g.parents("t") == ["s"] && g.children("t").is_empty());
    assert!(g.ancestors(&["t"]) == set(&["s"]));
}

fn cyclic() -> PipelineGraph {
    let nodes = ["a", "b", "c", "d", "m", "x", "y", "w"]
        .into_iter()
        .map(|n| node(n, "intermediate", None))
        .collect();
    let edges = vec![
        // a -> b -> c -> a, with d hanging below
        data("b", "c"),
        data("c", "a"),
        data("a", "b"),
        data("c", "d"),
        // {w, x, y}: w -> x -> y -> w plus the chord x -> w
        data("y", "w"),
        data("w", "x"),
        data("x", "y"),
        data("x", "w"),
        // m is independent
    ];
    PipelineGraph::build(nodes, edges).unwrap()
}

#[test]
fn cycles_name_a_concrete_path_per_component() {
    let g = cyclic();
    assert_eq!(g.cycles(), vec![vec!["a", "b", "c"], vec!["w", "x"]]);
    let err = g.topo_order(None).unwrap_err();
    assert_eq!(
        err,
        GraphError::Cycle {
            cycle: vec!["a".into(), "b".into(), "c".into()]
        }
    );
    assert_eq!(err.to_string(), "cycle: a -> b -> c -> a");
    assert_eq!(
        g.waves(None).unwrap_err().to_string(),
        "cycle: a -> b -> c -> a"
    );
    // A subset away from the cycles orders fine; one through a cycle names that cycle.
    assert_eq!(g.topo_order(Some(&set(&["d", "m"]))).unwrap(), ["d", "m"]);
    assert_eq!(
        g.topo_order(Some(&set(&["y", "m"])))
            .unwrap_err()
            .to_string(),
        "cycle: w -> x -> w"
    );
}

#[test]
fn output_does_not_depend_on_input_order() {
    let g = p2();
    let (nodes, edges) = p2_parts();
    let mut rng = Lcg(7);
    for _ in 0..20 {
        let (mut n, mut e) = (nodes.clone(), edges.clone());
        rng.shuffle(&mut n);
        rng.shuffle(&mut e);
        let h = PipelineGraph::build(n, e).unwrap();
        assert_eq!(h.topo_order(None), g.topo_order(None));
        assert_eq!(h.waves(None), g.waves(None));
        assert!(h.edges().eq(g.edges()));
        assert!(h.nodes().eq(g.nodes()));
    }
    let c = cyclic();
    let nodes: Vec<NodeInfo> = c.nodes().cloned().collect();
    let edges: Vec<_> = c
        .edges()
        .map(|(p, ch, k)| (p.to_string(), ch.to_string(), k))
        .collect();
    for _ in 0..20 {
        let (mut n, mut e) = (nodes.clone(), edges.clone());
        rng.shuffle(&mut n);
        rng.shuffle(&mut e);
        let h = PipelineGraph::build(n, e).unwrap();
        assert_eq!(h.cycles(), c.cycles());
        assert_eq!(h.topo_order(None), c.topo_order(None));
    }
}

/// 10,000 tables, about 25,000 edges, each from a table to a later one.
fn big_dag() -> PipelineGraph {
    const N: usize = 10_000;
    const LAYERS: [&str; 6] = [
        "source",
        "seed",
        "intermediate",
        "dimension",
        "fact",
        "view",
    ];
    let mut rng = Lcg(42);
    let nodes = (0..N)
        .map(|i| node(&format!("t{i:05}"), LAYERS[i % LAYERS.len()], Some("big")))
        .collect();
    let mut edges = Vec::new();
    for child in 1..N {
        let parents = 1 + rng.next() % 4; // 1..=4, mean 2.5
        for _ in 0..parents {
            let back = 1 + (rng.next() as usize % 200).min(child - 1);
            edges.push(data(
                &format!("t{:05}", child - back),
                &format!("t{child:05}"),
            ));
        }
    }
    PipelineGraph::build(nodes, edges).unwrap()
}

#[test]
fn ten_thousand_table_dag_orders_correctly() {
    let g = big_dag();
    assert_eq!(g.len(), 10_000);
    assert!(g.edges().count() > 20_000);
    assert!(g.cycles().is_empty());

    let order = g.topo_order(None).unwrap();
    assert_eq!(order.len(), 10_000);
    let pos: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    for (p, c, _) in g.edges() {
        assert!(pos[p] < pos[c], "{p} must come before {c}");
    }

    let waves = g.waves(None).unwrap();
    assert_eq!(waves.iter().map(Vec::len).sum::<usize>(), 10_000);
    let wave: HashMap<&str, usize> = waves
        .iter()
        .enumerate()
        .flat_map(|(k, w)| w.iter().map(move |n| (n.as_str(), k)))
        .collect();
    for n in g.nodes() {
        let parents = g.parents(&n.name);
        let highest = parents.iter().map(|p| wave[p]).max();
        assert_eq!(wave[n.name.as_str()], highest.map_or(0, |w| w + 1));
    }

    // A subset keeps the relative order of the whole graph's ancestor pairs.
    let subset: std::collections::BTreeSet<String> = order.iter().step_by(97).cloned().collect();
    let sub = g.topo_order(Some(&subset)).unwrap();
    assert_eq!(sub.len(), subset.len());
    let sub_pos: HashMap<&str, usize> = sub
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    for n in &sub {
        for a in g.ancestors(&[n.as_str()]) {
            if let Some(&ap) = sub_pos.get(a.as_str()) {
                assert!(ap < sub_pos[n.as_str()], "{a} is an ancestor of {n}");
            }
        }
    }

    let last = order.last().unwrap().as_str();
    let ancestors = g.ancestors(&[last]);
    assert!(!ancestors.is_empty());
    for a in ancestors.iter().step_by(50) {
        assert!(g.descendants(&[a.as_str()]).contains(last));
    }
}

#[test]
fn layers_accept_folder_names_and_rank_for_deploy_order() {
    assert_eq!(canonical_layer("facts"), "fact");
    assert_eq!(canonical_layer("Sources"), "source");
    assert_eq!(canonical_layer("stage"), "intermediate");
    assert_eq!(canonical_layer("mv"), "view");
    assert_eq!(canonical_layer("external"), "external_kafka");
    assert_eq!(canonical_layer("dead_letter"), "dead_letter");
    let ranks: Vec<u8> = [
        "sources",
        "seed",
        "intermediates",
        "dimension",
        "facts",
        "views",
        "external_kafka",
    ]
    .into_iter()
    .map(layer_rank)
    .collect();
    assert_eq!(ranks, [0, 1, 2, 3, 4, 5, 6]);
}
