//! The graph as an SVG picture, laid out in-process (no Graphviz): layers in columns (source → view, by
//! [`layer_rank`]; a table reading a table of its own layer goes one sub-column further right), products
//! as fill colours with a legend, external tables dashed, edges as cubic Béziers (`LIKE` edges dashed).
//!
//! Layout: columns as above; an edge spanning several columns gets a lane (a dummy vertex) in each
//! column it crosses, so it never runs through a box; rows start in (product, name) order, then four
//! barycenter sweeps (left to right on parents, right to left on children) reorder each column, lanes
//! included, to reduce crossings. Everything is
//! computed from sorted data with stable sorts, so the output is byte-for-byte deterministic.
//! Cost: O((N + E) log N) per sweep.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write;

use serde_json::Value;

use super::model::{PipelineGraph, layer_rank};

use super::colours::{NO_PRODUCT, product_colours};

/// Layer names of the column headers, by rank.
const LAYER_NAMES: [&str; 7] = [
    "sources",
    "seeds",
    "intermediates",
    "dimensions",
    "facts",
    "views",
    "other",
];

const CHAR_W: f64 = 7.2;
const NODE_H: f64 = 28.0;
const ROW_PITCH: f64 = 42.0;
/// The height of the lane a long edge takes in a column it crosses.
const DUMMY_PITCH: f64 = 12.0;
const COL_GAP: f64 = 90.0;
const MARGIN: f64 = 20.0;
const HEADER_H: f64 = 40.0;
const LEGEND_ROW: f64 = 22.0;

/// One placed table.
#[derive(Debug, Clone)]
pub(crate) struct PlacedNode {
    pub name: String,
    pub product: Option<String>,
    pub layer: String,
    pub external: bool,
    pub x: f64,
    pub y: f64,
    pub w: f64,
}

/// The laid-out picture: nodes, edges `(parent index, child index, like)` with their lanes, columns
/// `(x, header)`, size.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub nodes: Vec<PlacedNode>,
    pub edges: Vec<(usize, usize, bool)>,
    /// Per edge, the columns it crosses: `(column x, column width, lane y)`, left to right.
    pub lanes: Vec<Vec<(f64, f64, f64)>>,
    pub columns: Vec<(f64, &'static str)>,
    pub products: Vec<String>,
    /// Statement sets: the statement's owner and the indices of the tables it writes.
    pub statement_sets: Vec<(String, Vec<usize>)>,
    pub width: f64,
    pub height: f64,
}

impl Layout {
    /// Lays out the graph JSON of [`super::to_json`].
    pub(crate) fn compute(json: &Value) -> Layout {
        let empty = vec![];
        let jnodes = json["nodes"].as_array().unwrap_or(&empty);
        let jedges = json["edges"].as_array().unwrap_or(&empty);
        let mut nodes: Vec<PlacedNode> = jnodes
            .iter()
            .map(|n| PlacedNode {
                name: n["name"].as_str().unwrap_or("").to_string(),
                product: n["product"].as_str().map(str::to_string),
                layer: n["layer"].as_str().unwrap_or("").to_string(),
                external: n["external"].as_bool().unwrap_or(false),
                x: 0.0,
                y: 0.0,
                w: 0.0,
            })
            .collect();
        let index: BTreeMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        let edges: Vec<(usize, usize, bool)> = jedges
            .iter()
            .filter_map(|e| {
                let p = *index.get(e["parent"].as_str()?)?;
                let c = *index.get(e["child"].as_str()?)?;
                Some((p, c, e["kind"].as_str() == Some("like")))
            })
            .collect();
        let (col, column_keys) = table_columns(&nodes, &edges);
        let lanes = Lanes::of(&col, &edges);
        let columns = lanes.ordered_rows(&nodes, column_keys.len());
        let geometry = Geometry::place(&mut nodes, &columns, &column_keys, lanes.item_col.len());
        // Each edge's way points: out of the parent's right side, across every crossed column at its
        // dummy's height, into the child's left side.
        let lane_points: Vec<Vec<(f64, f64, f64)>> = lanes
            .routes
            .iter()
            .map(|route| {
                route[1..route.len().saturating_sub(1)]
                    .iter()
                    .map(|&k| {
                        let c = lanes.item_col[k];
                        (geometry.col_x[c], geometry.col_w[c], geometry.centre[k])
                    })
                    .collect()
            })
            .collect();
        let products: Vec<String> = nodes
            .iter()
            .filter_map(|t| t.product.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let legend_rows = products.len() + 3;
        let width = (geometry.right - COL_GAP + MARGIN).max(320.0);
        let height = geometry.bottom + 10.0 + legend_rows as f64 * LEGEND_ROW + MARGIN;
        let statement_sets = json["statement_sets"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|set| {
                let owner = set["statement"].as_str()?.to_string();
                let tables: Vec<usize> = set["tables"]
                    .as_array()?
                    .iter()
                    .filter_map(|t| index.get(t.as_str()?).copied())
                    .collect();
                (tables.len() > 1).then_some((owner, tables))
            })
            .collect();
        Layout {
            nodes,
            edges,
            lanes: lane_points,
            columns: geometry.headers,
            products,
            statement_sets,
            width,
            height,
        }
    }

    /// Fill and stroke of a product.
    fn colours(&self, product: Option<&str>) -> (&'static str, &'static str) {
        match product {
            None => NO_PRODUCT,
            // A function of the name alone: the same colour in every picture (#22).
            Some(p) => product_colours(p),
        }
    }

    /// The picture. `standalone` adds the XML namespace (a `.svg` file); inline in HTML it is left out.
    pub(crate) fn render(&self, standalone: bool) -> String {
        let mut s = String::new();
        let xmlns = if standalone {
            " xmlns=\"http://www.w3.org/2000/svg\""
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<svg{xmlns} width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"Menlo, Consolas, 'DejaVu Sans Mono', monospace\" font-size=\"12\">",
            w = self.width,
            h = self.height
        );
        s.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555555\"/></marker></defs>\n");
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{:.0}\" height=\"{:.0}\" fill=\"#ffffff\"/>",
            self.width, self.height
        );
        for (x, name) in &self.columns {
            if !name.is_empty() {
                let _ = writeln!(
                    s,
                    "<text class=\"layer\" x=\"{x:.1}\" y=\"{:.1}\" font-weight=\"bold\" fill=\"#333333\">{name}</text>",
                    MARGIN + 14.0
                );
            }
        }
        s.push_str("<g class=\"edges\" fill=\"none\" stroke=\"#555555\" stroke-width=\"1.2\">\n");
        for (e, &(p, c, like)) in self.edges.iter().enumerate() {
            let (a, b) = (&self.nodes[p], &self.nodes[c]);
            let (x1, y1) = (a.x + a.w, a.y + NODE_H / 2.0);
            let d = if p == c {
                format!(
                    "M {x1:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {x1:.1} {:.1}",
                    y1 - 6.0,
                    x1 + 30.0,
                    a.y - 10.0,
                    x1 + 30.0,
                    a.y + NODE_H + 10.0,
                    y1 + 6.0
                )
            } else {
                let mut d = format!("M {x1:.1} {y1:.1}");
                let mut from = (x1, y1);
                for &(lx, lw, ly) in &self.lanes[e] {
                    curve(&mut d, from, (lx, ly));
                    let _ = write!(d, " L {:.1} {ly:.1}", lx + lw);
                    from = (lx + lw, ly);
                }
                curve(&mut d, from, (b.x, b.y + NODE_H / 2.0));
                d
            };
            let dash = if like {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<path class=\"edge\" data-parent=\"{}\" data-child=\"{}\" d=\"{d}\"{dash} marker-end=\"url(#arrow)\"><title>{} → {}{}</title></path>",
                xml(&a.name),
                xml(&b.name),
                xml(&a.name),
                xml(&b.name),
                if like { " (LIKE)" } else { "" }
            );
        }
        s.push_str("</g>\n<g class=\"nodes\">\n");
        for t in &self.nodes {
            let (fill, stroke) = if t.external {
                ("#ffffff", "#666666")
            } else {
                self.colours(t.product.as_deref())
            };
            let dash = if t.external {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<g class=\"node\" data-name=\"{n}\"><title>{n} ({}, product {})</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{NODE_H:.0}\" rx=\"6\" fill=\"{fill}\" stroke=\"{stroke}\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#111111\">{n}</text></g>",
                xml(&t.layer),
                xml(t.product.as_deref().unwrap_or("None")),
                t.x,
                t.y,
                t.w,
                t.x + 12.0,
                t.y + 18.0,
                n = xml(&t.name),
            );
        }
        s.push_str("</g>\n");
        // Statement sets: a bracket joining the tables one statement writes, labelled with its owner.
        for (owner, tables) in &self.statement_sets {
            let mut placed: Vec<&PlacedNode> = tables.iter().map(|&i| &self.nodes[i]).collect();
            placed.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
            let x = placed.iter().map(|t| t.x).fold(f64::INFINITY, f64::min) - 8.0;
            let mut d = String::new();
            for (k, t) in placed.iter().enumerate() {
                let y = t.y + NODE_H / 2.0;
                if k == 0 {
                    let _ = write!(d, "M {:.1} {y:.1} L {x:.1} {y:.1}", t.x);
                } else {
                    let _ = write!(d, " L {x:.1} {y:.1} L {:.1} {y:.1} M {x:.1} {y:.1}", t.x);
                }
            }
            let names: Vec<String> = placed.iter().map(|t| xml(&t.name)).collect();
            let _ = writeln!(
                s,
                "<g class=\"statement-set\" data-statement=\"{o}\"><title>one statement (the DML of {o}) writes {}</title><path d=\"{d}\" fill=\"none\" stroke=\"#5e35b1\" stroke-width=\"2.5\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#5e35b1\">statement set: {o}</text></g>",
                names.join(", "),
                placed[0].x,
                placed[0].y - 3.0,
                o = xml(owner),
            );
        }
        // Legend: products, then external tables and LIKE edges.
        let mut y = self.height - MARGIN - (self.products.len() + 3) as f64 * LEGEND_ROW + 10.0;
        let _ = writeln!(
            s,
            "<g class=\"legend\"><text x=\"{MARGIN:.1}\" y=\"{:.1}\" font-weight=\"bold\" fill=\"#333333\">products</text>",
            y + 12.0
        );
        let mut entries: Vec<(String, (&str, &str), &str)> = self
            .products
            .iter()
            .map(|p| (xml(p), self.colours(Some(p)), ""))
            .collect();
        if self
            .nodes
            .iter()
            .any(|t| t.product.is_none() && !t.external)
        {
            entries.push(("no product".into(), NO_PRODUCT, ""));
        }
        entries.push((
            "external table".into(),
            ("#ffffff", "#666666"),
            " stroke-dasharray=\"4 3\"",
        ));
        for (label, (fill, stroke), dash) in entries {
            y += LEGEND_ROW;
            let _ = writeln!(
                s,
                "<rect x=\"{MARGIN:.1}\" y=\"{:.1}\" width=\"28\" height=\"14\" rx=\"3\" fill=\"{fill}\" stroke=\"{stroke}\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333333\">{label}</text>",
                y,
                MARGIN + 36.0,
                y + 11.0
            );
        }
        s.push_str("</g>\n</svg>\n");
        s
    }
}

/// The graph (or a subset, see [`super::to_json`]) as a standalone SVG document.
pub fn to_svg(graph: &PipelineGraph, subset: Option<&BTreeSet<String>>) -> String {
    Layout::compute(&super::to_json(graph, subset)).render(true)
}

/// Appends a horizontal-tangent cubic Bézier from `from` to `to` (a loop of 60 px when going back).
fn curve(d: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) {
    let dx = if x2 > x1 { (x2 - x1) / 2.0 } else { 60.0 };
    let _ = write!(
        d,
        " C {:.1} {y1:.1}, {:.1} {y2:.1}, {x2:.1} {y2:.1}",
        x1 + dx,
        x2 - dx
    );
}

/// Text safe in XML content and attribute values.
pub(crate) fn xml(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => t.push_str("&amp;"),
            '<' => t.push_str("&lt;"),
            '>' => t.push_str("&gt;"),
            '"' => t.push_str("&quot;"),
            '\'' => t.push_str("&#39;"),
            _ => t.push(ch),
        }
    }
    t
}

/// Each table's column, and each column's `(layer rank, sub-level)`, left to right: a table's rank is
/// its layer's (externals at 0); within a rank, its sub-level is its longest path over same-rank edges
/// (Kahn; tables on cycles stay at 0).
fn table_columns(
    nodes: &[PlacedNode],
    edges: &[(usize, usize, bool)],
) -> (Vec<usize>, Vec<(u8, usize)>) {
    let n = nodes.len();
    let rank: Vec<u8> = nodes
        .iter()
        .map(|t| if t.external { 0 } else { layer_rank(&t.layer) })
        .collect();
    let mut level = vec![0usize; n];
    let mut indeg = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![vec![]; n];
    for &(p, c, _) in edges {
        if p != c && rank[p] == rank[c] {
            out[p].push(c);
            indeg[c] += 1;
        }
    }
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    while let Some(i) = queue.pop_front() {
        for &c in &out[i] {
            level[c] = level[c].max(level[i] + 1);
            indeg[c] -= 1;
            if indeg[c] == 0 {
                queue.push_back(c);
            }
        }
    }
    let keys: BTreeSet<(u8, usize)> = (0..n).map(|i| (rank[i], level[i])).collect();
    let col_of_key: BTreeMap<(u8, usize), usize> =
        keys.iter().enumerate().map(|(c, k)| (*k, c)).collect();
    let col: Vec<usize> = (0..n).map(|i| col_of_key[&(rank[i], level[i])]).collect();
    // By index: `keys.iter().nth(c)` per column was O(columns²), 10¹² steps for a 1,000,000-table
    // chain (one sub-column per table).
    (col, keys.into_iter().collect())
}

/// Long edges get a dummy vertex in every column they cross (Sugiyama), so they take a lane of their
/// own instead of running through the boxes of those columns. Items: `0..n` are tables, `n..` are
/// dummies.
struct Lanes {
    /// Each item's column.
    item_col: Vec<usize>,
    /// Per edge, its items from parent to child (dummies between).
    routes: Vec<Vec<usize>>,
    /// The number of tables (the first items).
    tables: usize,
}

impl Lanes {
    fn of(col: &[usize], edges: &[(usize, usize, bool)]) -> Lanes {
        let mut item_col: Vec<usize> = col.to_vec();
        let mut routes: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
        for &(p, c, _) in edges {
            let mut route = vec![p];
            if col[p] < col[c] {
                for dc in col[p] + 1..col[c] {
                    route.push(item_col.len());
                    item_col.push(dc);
                }
            }
            route.push(c);
            routes.push(route);
        }
        Lanes {
            item_col,
            routes,
            tables: col.len(),
        }
    }

    /// The items of each column, top to bottom: tables in (product, name) order, dummies after
    /// them, then four barycenter sweeps (left to right on parents, right to left on children).
    fn ordered_rows(&self, nodes: &[PlacedNode], column_count: usize) -> Vec<Vec<usize>> {
        let (n, items) = (self.tables, self.item_col.len());
        let mut columns: Vec<Vec<usize>> = vec![vec![]; column_count];
        for (k, &c) in self.item_col.iter().enumerate() {
            columns[c].push(k);
        }
        for c in &mut columns {
            c.sort_by(|&a, &b| {
                let key = |k: usize| (k >= n, nodes.get(k).map(|t| (&t.product, &t.name)), k);
                key(a).cmp(&key(b))
            });
        }
        let mut row = vec![0usize; items];
        for c in &columns {
            for (r, &k) in c.iter().enumerate() {
                row[k] = r;
            }
        }
        let mut parents: Vec<Vec<usize>> = vec![vec![]; items];
        let mut children: Vec<Vec<usize>> = vec![vec![]; items];
        for route in &self.routes {
            for w in route.windows(2) {
                if self.item_col[w[0]] < self.item_col[w[1]] {
                    parents[w[1]].push(w[0]);
                    children[w[0]].push(w[1]);
                }
            }
        }
        for sweep in 0..4 {
            let forward = sweep % 2 == 0;
            let order: Vec<usize> = if forward {
                (1..columns.len()).collect()
            } else {
                (0..columns.len().saturating_sub(1)).rev().collect()
            };
            for c in order {
                let mut keyed: Vec<(f64, usize)> = columns[c]
                    .iter()
                    .map(|&k| {
                        let nb = if forward { &parents[k] } else { &children[k] };
                        let key = if nb.is_empty() {
                            row[k] as f64
                        } else {
                            nb.iter().map(|&j| row[j] as f64).sum::<f64>() / nb.len() as f64
                        };
                        (key, k)
                    })
                    .collect();
                keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
                columns[c] = keyed.into_iter().map(|(_, k)| k).collect();
                for (r, &k) in columns[c].iter().enumerate() {
                    row[k] = r;
                }
            }
        }
        columns
    }
}

/// Where the columns and items went: tables take `ROW_PITCH`, dummies `DUMMY_PITCH`.
struct Geometry {
    /// `(x, header)` per column; the header is the layer's name on its first sub-column.
    headers: Vec<(f64, &'static str)>,
    col_x: Vec<f64>,
    col_w: Vec<f64>,
    /// Each item's y centre.
    centre: Vec<f64>,
    /// The x after the last column (its gap included).
    right: f64,
    /// The lowest y of any column.
    bottom: f64,
}

impl Geometry {
    /// Places the tables of `columns` (their x, y and width set in `nodes`) and the dummies.
    fn place(
        nodes: &mut [PlacedNode],
        columns: &[Vec<usize>],
        column_keys: &[(u8, usize)],
        items: usize,
    ) -> Geometry {
        let n = nodes.len();
        let mut g = Geometry {
            headers: Vec::with_capacity(columns.len()),
            col_x: Vec::with_capacity(columns.len()),
            col_w: Vec::with_capacity(columns.len()),
            centre: vec![0.0f64; items],
            right: MARGIN,
            bottom: MARGIN + HEADER_H,
        };
        for (c, members) in columns.iter().enumerate() {
            let x = g.right;
            let longest = members
                .iter()
                .filter(|&&k| k < n)
                .map(|&k| nodes[k].name.chars().count())
                .max()
                .unwrap_or(0);
            let w = (longest as f64 * CHAR_W + 24.0).max(110.0).round();
            let (r, lvl) = column_keys[c];
            g.headers.push((
                x,
                if lvl == 0 {
                    LAYER_NAMES[usize::from(r.min(6))]
                } else {
                    ""
                },
            ));
            let mut y = MARGIN + HEADER_H;
            for &k in members {
                if k < n {
                    nodes[k].x = x;
                    nodes[k].y = y;
                    nodes[k].w = w;
                    g.centre[k] = y + NODE_H / 2.0;
                    y += ROW_PITCH;
                } else {
                    g.centre[k] = y + DUMMY_PITCH / 2.0;
                    y += DUMMY_PITCH;
                }
            }
            g.bottom = f64::max(g.bottom, y);
            g.col_x.push(x);
            g.col_w.push(w);
            g.right = x + w + COL_GAP;
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layers_become_columns_and_same_layer_chains_sub_columns() {
        let g = json!({
            "nodes": [
                {"name": "fct_a", "product": "p", "layer": "fact", "external": false},
                {"name": "int_a", "product": "p", "layer": "intermediate", "external": false},
                {"name": "int_b", "product": "p", "layer": "intermediate", "external": false},
                {"name": "src_a", "product": null, "layer": "source", "external": false},
            ],
            "edges": [
                {"parent": "int_a", "child": "int_b", "kind": "data"},
                {"parent": "int_b", "child": "fct_a", "kind": "data"},
                {"parent": "src_a", "child": "int_a", "kind": "like"},
            ]
        });
        let l = Layout::compute(&g);
        let x = |n: &str| l.nodes.iter().find(|t| t.name == n).unwrap().x;
        assert!(x("src_a") < x("int_a") && x("int_a") < x("int_b") && x("int_b") < x("fct_a"));
        let headers: Vec<&str> = l.columns.iter().map(|c| c.1).collect();
        assert_eq!(headers, ["sources", "intermediates", "", "facts"]);
        let svg = l.render(true);
        assert!(svg.contains("stroke-dasharray=\"6 4\""), "LIKE edge dashed");
        assert_eq!(svg, Layout::compute(&g).render(true), "deterministic");
    }

    #[test]
    fn long_edges_take_a_lane_in_every_column_they_cross() {
        let node = |name: &str, layer: &str| json!({"name": name, "product": "p", "layer": layer, "external": false});
        let g = json!({
            "nodes": [node("v", "view"), node("f", "fact"), node("i", "intermediate"), node("s", "source")],
            "edges": [
                {"parent": "f", "child": "v", "kind": "data"},
                {"parent": "i", "child": "f", "kind": "data"},
                {"parent": "s", "child": "i", "kind": "data"},
                {"parent": "s", "child": "v", "kind": "data"},
            ]
        });
        let l = Layout::compute(&g);
        let lanes: Vec<usize> = l.lanes.iter().map(Vec::len).collect();
        assert_eq!(
            lanes,
            [0, 0, 0, 2],
            "s -> v crosses the intermediate and fact columns"
        );
        let f = l.nodes.iter().find(|t| t.name == "f").unwrap();
        let (x, _, y) = l.lanes[3][1];
        assert_eq!(x, f.x);
        assert!(
            y < f.y || y > f.y + NODE_H,
            "the lane passes beside the box, not through it"
        );
    }

    #[test]
    fn xml_escapes() {
        assert_eq!(xml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
