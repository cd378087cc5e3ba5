//! dbt-style selection on shift_left's p2 fixture graph.

use crate::graph_fixture::{p2, set};
use flinkpipe::graph::{SelectError, select};

fn sel(expr: &str) -> Vec<String> {
    select(&p2(), expr)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .into_iter()
        .collect()
}

fn err(expr: &str) -> String {
    select(&p2(), expr).unwrap_err().to_string()
}

#[test]
fn a_table_and_its_graph_operators() {
    assert_eq!(sel("f"), ["f"]);
    assert_eq!(sel("table:f"), ["f"]);
    assert_eq!(sel("+f"), ["d", "f", "src_x", "src_y", "x", "y", "z"]);
    assert_eq!(sel("z+"), ["c", "d", "e", "f", "p", "z"]);
    assert_eq!(
        sel("+z+"),
        ["c", "d", "e", "f", "p", "src_x", "src_y", "x", "y", "z"]
    );
    assert_eq!(
        sel("@x"),
        [
            "b", "c", "d", "e", "f", "p", "src_b", "src_x", "src_y", "x", "y", "z"
        ]
    );
}

#[test]
fn depth_limits_count_edges() {
    assert_eq!(sel("1+z"), ["x", "y", "z"]);
    assert_eq!(sel("2+d"), ["d", "src_y", "x", "y", "z"]);
    assert_eq!(sel("z+1"), ["c", "d", "p", "z"]);
    assert_eq!(sel("0+z+0"), ["z"]);
    assert_eq!(sel("1+z+1"), ["c", "d", "p", "x", "y", "z"]);
    assert_eq!(sel("src_x+2"), ["a", "src_x", "x", "z"]);
}

#[test]
fn methods_products_layers_paths_and_wildcards() {
    assert_eq!(sel("product:p2").len(), 14);
    assert_eq!(sel("product:p*").len(), 14);
    assert_eq!(sel("layer:fact"), ["e", "f", "p"]);
    assert_eq!(sel("layer:facts"), ["e", "f", "p"]);
    assert_eq!(sel("layer:sources"), ["src_a", "src_b", "src_x", "src_y"]);
    assert_eq!(sel("layer:Intermediates,x+"), ["c", "d", "x", "z"]);
    assert_eq!(sel("path:pipelines/facts"), ["e", "f", "p"]);
    assert_eq!(sel("path:facts/p2/"), ["e", "f", "p"]);
    assert_eq!(sel("path:facts/p2/p"), ["p"]);
    assert_eq!(sel("src_*"), ["src_a", "src_b", "src_x", "src_y"]);
    assert_eq!(sel("+layer:fact,layer:source"), ["src_b", "src_x", "src_y"]);
}

#[test]
fn space_unites_and_comma_intersects() {
    assert_eq!(sel("+c,layer:intermediate"), ["b", "c", "x", "y", "z"]);
    assert_eq!(sel("a e"), ["a", "e"]);
    assert_eq!(sel("+a z+1"), ["a", "c", "d", "p", "src_a", "src_x", "z"]);
    assert_eq!(sel("src_*,+a"), ["src_a", "src_x"]);
    assert_eq!(sel("+f,+e"), ["src_x", "src_y", "x", "y", "z"]);
    // An empty intersection is an answer, not an error.
    assert!(sel("a,e").is_empty());
    assert_eq!(sel("  a\te  a "), ["a", "e"]);
}

#[test]
fn unknown_names_get_a_suggestion_and_a_column() {
    assert_eq!(
        select(&p2(), "a +src_q"),
        Err(SelectError::UnknownTable {
            name: "src_q".into(),
            column: 3,
            suggestion: Some("src_a".into())
        })
    );
    assert_eq!(
        err("+src_q"),
        "unknown table 'src_q' at column 1 (did you mean 'src_a'?)"
    );
    assert_eq!(err("qwertyuiop"), "unknown table 'qwertyuiop' at column 1");
    assert_eq!(
        err("product:p9"),
        "'product:p9' at column 1 matches no table (did you mean 'p2'?)"
    );
    assert_eq!(
        err("f layer:fcts"),
        "'layer:fcts' at column 3 matches no table (did you mean 'fact'?)"
    );
    // Paths match whole components: `facts/p` is not a prefix of `facts/p2`.
    assert_eq!(
        err("path:facts/p"),
        "'path:facts/p' at column 1 matches no table"
    );
    assert_eq!(err("nope_*"), "'nope_*' at column 1 matches no table");
    // Nothing close: the known values are listed.
    assert!(
        err("layer:bogus").starts_with("'layer:bogus' at column 1 matches no table (known: "),
        "{}",
        err("layer:bogus")
    );
}

#[test]
fn bad_tokens_are_named_with_their_column() {
    assert_eq!(
        err("a b,foo:x"),
        "bad selector 'foo:x' at column 5: unknown method 'foo' (expected table, product, layer or path)"
    );
    assert_eq!(
        err("a,"),
        "bad selector '' at column 3: empty selector (stray ',')"
    );
    assert_eq!(
        err("@+a"),
        "bad selector '@+a' at column 1: '@' cannot be combined with '+'"
    );
    assert_eq!(
        err("a+b"),
        "bad selector 'a+b' at column 1: '+' and '@' only go at the start or the end"
    );
    assert_eq!(
        err("+"),
        "bad selector '+' at column 1: missing table or method:value"
    );
    assert_eq!(
        err("layer:"),
        "bad selector 'layer:' at column 1: missing value after ':'"
    );
    assert_eq!(select(&p2(), " \t"), Err(SelectError::Empty));
    assert_eq!(set(&["a"]), select(&p2(), "a").unwrap());
}
