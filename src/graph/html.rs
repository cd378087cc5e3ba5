//! The graph as one self-contained HTML lineage page: the SVG picture of [`super::svg`] inline, the graph
//! JSON of [`super::to_json`] embedded, and a little inline script — search a table (or click it) to
//! highlight its ancestors and descendants and dim the rest. No external resource is referenced, so the
//! page works from `file://` without network access.

use std::collections::BTreeSet;

use super::model::PipelineGraph;
use super::svg::{Layout, xml};

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 0; color: #222; }
header { position: sticky; top: 0; background: #fafafa; border-bottom: 1px solid #ddd; padding: 8px 16px;
         display: flex; gap: 12px; align-items: center; z-index: 1; }
header h1 { font-size: 16px; margin: 0 12px 0 0; white-space: nowrap; }
#q { width: 320px; padding: 4px 8px; font-size: 14px; }
#info { font-size: 13px; color: #444; flex: 1; }
.key { font-size: 12px; color: #444; white-space: nowrap; }
.key span { display: inline-block; padding: 1px 6px; border-radius: 4px; margin-left: 6px; }
main { padding: 12px; overflow: auto; }
g.node { cursor: pointer; }
g.node.selected rect { stroke: #000; stroke-width: 3; }
g.node.ancestor rect { stroke: #1f6feb; stroke-width: 2.5; }
g.node.descendant rect { stroke: #d9480f; stroke-width: 2.5; }
g.node.dim, path.edge.dim { opacity: 0.18; }
path.edge.hl { stroke: #000; stroke-width: 2; }
"#;

const SCRIPT: &str = r#"
(function () {
  const data = JSON.parse(document.getElementById('graph-data').textContent);
  const parents = {}, children = {}, info = {};
  for (const n of data.nodes) { parents[n.name] = []; children[n.name] = []; info[n.name] = n; }
  for (const e of data.edges) {
    if (e.parent === e.child) continue;
    children[e.parent].push(e.child);
    parents[e.child].push(e.parent);
  }
  const walk = (start, next) => {
    const seen = new Set(), stack = [start];
    while (stack.length) {
      for (const m of next[stack.pop()] || []) if (!seen.has(m)) { seen.add(m); stack.push(m); }
    }
    return seen;
  };
  const nodes = Array.from(document.querySelectorAll('g.node'));
  const edges = Array.from(document.querySelectorAll('path.edge'));
  const out = document.getElementById('info');
  function clear() {
    for (const g of nodes) g.classList.remove('selected', 'ancestor', 'descendant', 'dim');
    for (const p of edges) p.classList.remove('hl', 'dim');
    out.textContent = data.nodes.length + ' tables, ' + data.edges.length + ' edges';
  }
  function select(name) {
    if (!(name in parents)) { clear(); if (name) out.textContent = 'no table named ' + name; return; }
    const anc = walk(name, parents), desc = walk(name, children);
    const up = n => n === name || anc.has(n), down = n => n === name || desc.has(n);
    for (const g of nodes) {
      const n = g.dataset.name;
      g.classList.toggle('selected', n === name);
      g.classList.toggle('ancestor', anc.has(n));
      g.classList.toggle('descendant', desc.has(n));
      g.classList.toggle('dim', !up(n) && !down(n));
    }
    for (const p of edges) {
      const on = (up(p.dataset.parent) && up(p.dataset.child)) || (down(p.dataset.parent) && down(p.dataset.child));
      p.classList.toggle('hl', on);
      p.classList.toggle('dim', !on);
    }
    const t = info[name];
    out.textContent = name + ' (' + t.layer + ', product ' + (t.product || 'None') + (t.path ? ', ' + t.path : '') +
      '): ' + anc.size + ' ancestor(s), ' + desc.size + ' descendant(s)';
    const g = nodes.find(g => g.dataset.name === name);
    if (g && g.scrollIntoView) g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  const q = document.getElementById('q');
  q.addEventListener('input', () => { if (q.value in parents || q.value === '') select(q.value); });
  q.addEventListener('keydown', e => { if (e.key === 'Enter') select(q.value.trim()); if (e.key === 'Escape') { q.value = ''; clear(); } });
  for (const g of nodes) g.addEventListener('click', () => { q.value = g.dataset.name; select(g.dataset.name); });
  document.getElementById('clear').addEventListener('click', () => { q.value = ''; clear(); });
  clear();
  const start = decodeURIComponent((location.hash || '').slice(1));
  if (start) { q.value = start; select(start); }
})();
"#;

/// The graph (or a subset, see [`super::to_json`]) as a self-contained HTML page. Open `page.html#t` to
/// start with table `t` selected.
pub fn to_html(graph: &PipelineGraph, subset: Option<&BTreeSet<String>>) -> String {
    let json = super::to_json(graph, subset);
    let svg = Layout::compute(&json).render(false);
    // `<` escaped as \u003c: nothing inside the JSON can close the script element.
    let data = serde_json::to_string(&json)
        .expect("JSON values serialise")
        .replace('<', "\\u003c");
    let mut names: Vec<&str> = json["nodes"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n["name"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    let options: String = names
        .iter()
        .map(|n| format!("<option value=\"{}\"></option>", xml(n)))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>flinkpipe lineage</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header><h1>flinkpipe lineage</h1><input id=\"q\" list=\"names\" placeholder=\"Search a table…\" autocomplete=\"off\"><datalist id=\"names\">{options}</datalist><button id=\"clear\" type=\"button\">Clear</button><span id=\"info\"></span><span class=\"key\">selected<span style=\"border:2px solid #000\">table</span><span style=\"border:2px solid #1f6feb\">ancestors</span><span style=\"border:2px solid #d9480f\">descendants</span></span></header>\n<main>\n{svg}</main>\n<script id=\"graph-data\" type=\"application/json\">{data}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}
