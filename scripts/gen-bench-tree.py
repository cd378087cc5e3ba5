#!/usr/bin/env python3
"""Generate a synthetic flinkpipe pipelines tree for benchmarks.

    scripts/gen-bench-tree.py N OUTDIR [--seed S] [--products K] [--force]

Writes OUTDIR/pipelines/<layer>/<product>/<folder>/sql-scripts/ddl.<table>.sql (+ dml.<table>.sql
for every non-source table), the same folder contract as fixtures/pipelines, and
OUTDIR/expected_graph.json in the format of fixtures/expected_graph.json (layer, product, folder,
sorted parents, stateful), so a benchmark run can also check the graph it builds.

Shape: a layered DAG. About 20% sources (DDL only: datagen or kafka, with a WATERMARK), then
intermediates (35%), dimensions (15%), facts (20%) and views (10%). Every non-source table has
1-4 parents taken from earlier layers (intermediates may also read earlier intermediates, which
makes chains deeper), mostly from its own product, sometimes from another one. 3-10 products.
DDLs are 20-40 lines; DMLs mix projections, CTEs, joins, GROUP BY, UNION ALL, IN subqueries,
ROW_NUMBER dedup and TUMBLE windows. Updating queries write to upsert-kafka with a primary key.

Deterministic: the same N, --seed and --products give byte-identical output. Python 3 stdlib only.
The SQL is meant to be valid Flink 2.x: trees of 1,000 (seed 42) and 4 x 300 tables (seeds 1-4)
plan without error with fixtures/flink-check's Check.java (Flink 2.0.0 EXPLAIN).
"""

import argparse
import json
import os
import random
import shutil
import sys

PRODUCTS = ["sales", "c360", "inventory", "logistics", "finance", "marketing",
            "support", "pricing", "loyalty", "catalog"]
ENTITIES = ["orders", "customers", "payments", "shipments", "returns", "invoices", "carts",
            "sessions", "clicks", "products", "stores", "suppliers", "tickets", "campaigns",
            "coupons", "refunds", "deliveries", "accounts", "subscriptions", "reviews",
            "prices", "stock", "transfers", "devices", "visits", "leads", "contracts"]
LAYERS = [("sources", 0.20), ("intermediates", 0.35), ("dimensions", 0.15),
          ("facts", 0.20), ("views", 0.10)]
EXTRA_TYPES = ["STRING", "STRING", "STRING", "BIGINT", "INT", "DOUBLE", "DECIMAL(12, 2)",
               "BOOLEAN", "TIMESTAMP(3)"]
ATTR_WORDS = ["region", "channel", "tier", "label", "code", "score", "segment", "country",
              "category", "source", "flag", "rank", "note", "owner", "zone", "bucket"]
STATUSES = ["'new'", "'paid'", "'shipped'", "'cancelled'", "'open'", "'closed'"]

# Columns every generated table has, so any table can read any other one.
BASE_COLUMNS = [("id", "BIGINT"), ("customer_id", "BIGINT"), ("amount", "DECIMAL(12, 2)"),
                ("status", "STRING"), ("event_ts", "TIMESTAMP(3)")]


class Table:
    __slots__ = ("name", "layer", "product", "folder", "parents", "extras", "template",
                 "stateful", "updating", "connector")

    def __init__(self, name, layer, product, folder):
        self.name, self.layer, self.product, self.folder = name, layer, product, folder
        self.parents, self.extras = [], []
        self.template, self.stateful, self.connector = None, False, None
        self.updating = False  # emits updates: needs an upsert sink, cannot feed a window TVF


def layer_counts(n):
    """Tables per layer: the LAYERS shares, at least one source, rounding into intermediates."""
    counts = [int(n * share) for _, share in LAYERS]
    counts[0] = max(1, counts[0])
    counts[1] += n - sum(counts)
    if counts[1] < 0:  # n == 1
        counts = [1, 0, 0, 0, 0]
    return counts


def build_tables(n, rng, n_products):
    products = PRODUCTS[:n_products]
    counts = layer_counts(n)
    tables, by_product, by_layer = [], {p: [] for p in products}, []
    serial = 0
    for (layer, _), count in zip(LAYERS, counts):
        this_layer = {}  # product -> tables of this layer so far
        for _ in range(count):
            serial += 1
            product = products[serial % n_products] if rng.random() < 0.7 else rng.choice(products)
            entity = rng.choice(ENTITIES)
            short = {"sources": "src", "intermediates": "int", "dimensions": "dim",
                     "facts": "fct", "views": "mv"}[layer]
            folder_name = f"{short}_{entity}_{serial}"
            if layer in ("sources", "intermediates"):
                name = f"{short}_{product}_{entity}_{serial}"
            else:
                name = f"{product}_{short}_{entity}_{serial}"
            t = Table(name, layer, product, f"pipelines/{layer}/{product}/{folder_name}")
            n_extra = rng.randint(8, 20)
            t.extras = [(f"{rng.choice(ATTR_WORDS)}_{i + 1}", rng.choice(EXTRA_TYPES))
                        for i in range(n_extra)]
            if layer != "sources":
                t.parents = pick_parents(rng, t, tables, by_product, by_layer, this_layer)
            tables.append(t)
            this_layer.setdefault(product, []).append(t)
            by_product[product].append(t)
        by_layer.append(this_layer)
    return tables


def pick_parents(rng, t, tables, by_product, by_layer, this_layer):
    """1-4 distinct parents: ~80% from the table's own product, preferring the previous layer
    (and, for intermediates, intermediates written just before: deeper chains)."""
    k = rng.choices((1, 2, 3, 4), weights=(35, 35, 20, 10))[0]
    own_prev = by_layer[-1].get(t.product, [])[-300:] if by_layer else []
    own_recent = this_layer.get(t.product, [])[-20:] if t.layer == "intermediates" else []
    own_any = by_product[t.product]
    chosen, seen = [], set()
    for _ in range(k * 4):
        if len(chosen) == k:
            break
        r = rng.random()
        if r < 0.40 and own_prev:
            pool = own_prev
        elif r < 0.55 and own_recent:
            pool = own_recent
        elif r < 0.82 and own_any:
            pool = own_any
        else:  # cross-product edge
            pool = tables
        p = pool[rng.randrange(len(pool))]
        if p.name not in seen:
            seen.add(p.name)
            chosen.append(p)
    if not chosen:
        chosen = [tables[rng.randrange(len(tables))]]
    return chosen


# ---------------------------------------------------------------- DDL

def kafka_with(topic, upsert):
    if upsert:
        return [") WITH (",
                "  'connector' = 'upsert-kafka',",
                f"  'topic' = '{topic}',",
                "  'properties.bootstrap.servers' = 'localhost:9092',",
                "  'key.format' = 'json',",
                "  'value.format' = 'json'",
                ");"]
    return [") WITH (",
            "  'connector' = 'kafka',",
            f"  'topic' = '{topic}',",
            "  'properties.bootstrap.servers' = 'localhost:9092',",
            "  'scan.startup.mode' = 'earliest-offset',",
            "  'format' = 'json'",
            ");"]


def datagen_options(t, rng):
    lines = [") WITH (", "  'connector' = 'datagen',",
             f"  'rows-per-second' = '{rng.choice((1, 2, 5, 10, 50))}',",
             "  'fields.id.min' = '1',",
             f"  'fields.id.max' = '{rng.choice((1000, 10000, 100000))}',",
             "  'fields.customer_id.min' = '1',",
             f"  'fields.customer_id.max' = '{rng.choice((500, 5000))}',",
             "  'fields.amount.min' = '1',",
             "  'fields.amount.max' = '500',",
             "  'fields.status.length' = '8'"]
    for col, typ in t.extras:
        if typ == "STRING":
            lines[-1] += ","
            lines.append(f"  'fields.{col}.length' = '{rng.choice((4, 8, 12))}'")
    lines.append(");")
    return lines


def ddl_text(t, rng):
    head = [f"-- {t.layer[:-1] if t.layer != 'dimensions' else 'dimension'} {t.name} "
            f"(product {t.product}), generated by scripts/gen-bench-tree.py",
            f"CREATE TABLE IF NOT EXISTS {t.name} ("]
    cols = [f"  {c:<22}{ty}," for c, ty in BASE_COLUMNS + t.extras]
    if t.layer == "sources":
        cols.append("  WATERMARK FOR event_ts AS event_ts - INTERVAL '5' SECOND")
        body = datagen_options(t, rng) if t.connector == "datagen" else kafka_with(t.name, False)
    elif t.updating:
        cols.append("  PRIMARY KEY (id) NOT ENFORCED")
        body = kafka_with(t.name, True)
    else:
        cols.append("  WATERMARK FOR event_ts AS event_ts - INTERVAL '5' SECOND")
        body = kafka_with(t.name, False)
    return "\n".join(head + cols + body) + "\n"


# ---------------------------------------------------------------- DML

def extra_expr(col_type, alias, rng):
    """An expression of type col_type built from the base columns of `alias`."""
    a = alias
    if col_type == "STRING":
        return rng.choice((f"UPPER({a}.status)", f"CONCAT({a}.status, '-', CAST({a}.id AS STRING))",
                           f"COALESCE({a}.status, 'unknown')", f"CAST({a}.customer_id AS STRING)"))
    if col_type == "BIGINT":
        return rng.choice((f"{a}.id * 10", f"{a}.customer_id", f"{a}.id + {a}.customer_id"))
    if col_type == "INT":
        return rng.choice((f"CAST(MOD({a}.id, 100) AS INT)", f"CHAR_LENGTH({a}.status)"))
    if col_type == "DOUBLE":
        return f"CAST({a}.amount AS DOUBLE) * {rng.choice(('0.2', '1.5', '0.07'))}"
    if col_type == "DECIMAL(12, 2)":
        return f"CAST({a}.amount * {rng.choice(('1.2', '0.9', '2'))} AS DECIMAL(12, 2))"
    if col_type == "BOOLEAN":
        return f"{a}.amount > {rng.choice((10, 100, 250))}"
    # TIMESTAMP(3): a sink takes one rowtime column, so derived timestamps must not be time
    # attributes (arithmetic drops the attribute; a CAST to the same type does not)
    return rng.choice((f"{a}.event_ts - INTERVAL '1' HOUR", f"{a}.event_ts + INTERVAL '1' DAY"))


def agg_expr(col_type, alias, rng):
    if col_type == "STRING":
        return f"MAX({alias}.status)"
    if col_type in ("BIGINT", "INT"):
        return f"CAST(COUNT(*) AS {col_type})"
    if col_type == "DOUBLE":
        return f"AVG(CAST({alias}.amount AS DOUBLE))"
    if col_type == "DECIMAL(12, 2)":
        return f"CAST(MAX({alias}.amount) AS DECIMAL(12, 2))"
    if col_type == "BOOLEAN":
        return f"MAX({alias}.amount) > 100"
    return f"MAX({alias}.event_ts)"


def select_list(t, alias, rng, indent="  ", extra_aliases=None):
    """Base columns from `alias`; extra columns computed from `alias` or a joined alias."""
    pick = extra_aliases or [alias]
    items = [f"{alias}.id", f"{alias}.customer_id", f"{alias}.amount", f"{alias}.status",
             f"{alias}.event_ts"]
    items += [f"{extra_expr(ty, pick[rng.randrange(len(pick))], rng)} AS {c}"
              for c, ty in t.extras]
    return ",\n".join(indent + i for i in items)


def agg_select_list(t, alias, rng, indent="  "):
    items = [f"{alias}.id", f"MAX({alias}.customer_id) AS customer_id",
             f"CAST(SUM({alias}.amount) AS DECIMAL(12, 2)) AS amount",
             f"MAX({alias}.status) AS status", f"MAX({alias}.event_ts) AS event_ts"]
    items += [f"{agg_expr(ty, alias, rng)} AS {c}" for c, ty in t.extras]
    return ",\n".join(indent + i for i in items)


def dml_projection(t, rng):
    p = t.parents[0]
    return (f"INSERT INTO {t.name}\nSELECT\n{select_list(t, 's', rng)}\n"
            f"FROM {p.name} AS s\nWHERE s.status <> {rng.choice(STATUSES)}\n"
            f"  AND s.amount >= {rng.choice((0, 1, 5))};\n")


def dml_union(t, rng):
    parts = []
    for i, p in enumerate(t.parents):
        parts.append(f"SELECT\n{select_list(t, f'u{i}', rng)}\nFROM {p.name} AS u{i}\n"
                     f"WHERE u{i}.status <> {rng.choice(STATUSES)}")
    return f"INSERT INTO {t.name}\n" + "\nUNION ALL\n".join(parts) + ";\n"


def dml_group_by(t, rng):
    p = t.parents[0]
    return (f"INSERT INTO {t.name}\nSELECT\n{agg_select_list(t, 'g', rng)}\n"
            f"FROM {p.name} AS g\nWHERE g.amount > 0\nGROUP BY g.id;\n")


def dml_join(t, rng):
    base, others = t.parents[0], t.parents[1:]
    aliases = ["b"] + [f"j{i}" for i in range(1, len(t.parents))]
    lines = [f"INSERT INTO {t.name}", "SELECT", select_list(t, "b", rng, extra_aliases=aliases),
             f"FROM {base.name} AS b"]
    for i, p in enumerate(others, 1):
        kind = rng.choice(("JOIN", "LEFT JOIN", "INNER JOIN"))
        key = rng.choice(("id", "customer_id"))
        lines.append(f"{kind} {p.name} AS j{i}")
        lines.append(f"  ON b.{key} = j{i}.{key}")
    lines.append(f"WHERE b.status <> {rng.choice(STATUSES)};")
    return "\n".join(lines) + "\n"


def dml_cte_join_group(t, rng):
    ctes = []
    for i, p in enumerate(t.parents):
        if i == 0 and rng.random() < 0.5:
            ctes.append(f"c{i} (id, customer_id, amount, status, event_ts) AS (\n"
                        f"  SELECT id, customer_id, amount, status, event_ts\n"
                        f"  FROM {p.name}\n  WHERE amount > {rng.choice((0, 10, 50))}\n)")
        else:
            ctes.append(f"c{i} AS (\n  SELECT id, customer_id, amount, status, event_ts\n"
                        f"  FROM {p.name}\n  WHERE status IS NOT NULL\n)")
    ctes.append("joined AS (\n  SELECT c0.*\n  FROM c0"
                + "".join(f"\n  LEFT JOIN c{i} ON c0.customer_id = c{i}.customer_id"
                          for i in range(1, len(t.parents)))
                + "\n)")
    return (f"INSERT INTO {t.name}\nWITH " + ",\n".join(ctes) + "\n"
            f"SELECT\n{agg_select_list(t, 'j', rng)}\nFROM joined AS j\nGROUP BY j.id;\n")


def dml_in_subquery(t, rng):
    base, others = t.parents[0], t.parents[1:]
    conds = []
    for p in others:
        if rng.random() < 0.5:
            conds.append(f"s.customer_id IN (SELECT customer_id FROM {p.name} WHERE amount > 0)")
        else:
            conds.append(f"EXISTS (SELECT 1 FROM {p.name} AS x WHERE x.id = s.id)")
    return (f"INSERT INTO {t.name}\nSELECT\n{select_list(t, 's', rng)}\n"
            f"FROM {base.name} AS s\nWHERE " + "\n  AND ".join(conds) + ";\n")


def dml_dedup(t, rng):
    p = t.parents[0]
    return (f"INSERT INTO {t.name}\nSELECT\n{select_list(t, 'd', rng)}\nFROM (\n"
            f"  SELECT *,\n    ROW_NUMBER() OVER (PARTITION BY id ORDER BY event_ts DESC) AS rn\n"
            f"  FROM {p.name}\n) AS d\nWHERE d.rn = 1;\n")


def dml_tumble(t, rng):
    p = t.parents[0]
    body = agg_select_list(t, "w", rng).split(",\n")
    body[4] = "  w.window_start AS event_ts"
    return (f"INSERT INTO {t.name}\nSELECT\n" + ",\n".join(body) + "\n"
            f"FROM TABLE(\n  TUMBLE(TABLE {p.name}, DESCRIPTOR(event_ts), INTERVAL "
            f"'{rng.choice((1, 5, 10))}' MINUTE)\n) AS w\n"
            f"GROUP BY w.id, w.window_start, w.window_end;\n")


# (template, generator, stateful): SINGLE for one parent, MULTI for 2-4
SINGLE = [("projection", dml_projection, False), ("group_by", dml_group_by, True),
          ("dedup", dml_dedup, True), ("tumble", dml_tumble, True)]
MULTI = [("join", dml_join, True), ("cte_join_group", dml_cte_join_group, True),
         ("union_all", dml_union, False), ("in_subquery", dml_in_subquery, True)]
GENERATORS = {name: fn for name, fn, _ in SINGLE + MULTI}


def choose_template(t, rng):
    if t.layer == "sources":
        t.connector = "datagen" if rng.random() < 0.6 else "kafka"
        return
    pool = SINGLE if len(t.parents) == 1 else MULTI
    name, _, stateful = pool[rng.randrange(len(pool))]
    if name == "tumble" and t.parents[0].updating:
        name = "group_by"  # a window TVF needs an append-only input with a watermark
    if name == "union_all" and len({p.updating for p in t.parents}) > 1:
        # UNION ALL branches must agree on event_ts being a time attribute: only append-only
        # tables (kafka, datagen) declare a watermark, upsert tables do not
        name, stateful = "join", True
    t.template, t.stateful = name, stateful
    # window aggregates emit final rows only; other stateful queries and anything reading an
    # updating table emit updates
    t.updating = (stateful and name != "tumble") or any(p.updating for p in t.parents)


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of tables")
    ap.add_argument("outdir", help="output directory (pipelines/ is created inside)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--products", type=int, default=None,
                    help="number of products, 3-10 (default: grows with N)")
    ap.add_argument("--force", action="store_true", help="replace an existing OUTDIR/pipelines")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("N must be >= 1")
    n_products = args.products or min(10, 3 + args.n // 1500)
    if not 3 <= n_products <= 10:
        ap.error("--products must be between 3 and 10")

    root = os.path.join(args.outdir, "pipelines")
    if os.path.exists(root):
        if not args.force:
            sys.exit(f"{root} exists (use --force to replace it)")
        shutil.rmtree(root)

    rng = random.Random(args.seed)
    tables = build_tables(args.n, rng, n_products)
    for t in tables:
        choose_template(t, rng)

    expected = {}
    for t in tables:
        scripts = os.path.join(args.outdir, t.folder, "sql-scripts")
        os.makedirs(scripts)
        with open(os.path.join(scripts, f"ddl.{t.name}.sql"), "w") as f:
            f.write(ddl_text(t, rng))
        if t.layer != "sources":
            with open(os.path.join(scripts, f"dml.{t.name}.sql"), "w") as f:
                f.write(f"-- {t.template} over {len(t.parents)} parent(s)\n")
                f.write(GENERATORS[t.template](t, rng))
        expected[t.name] = {"layer": t.layer, "product": t.product, "folder": t.folder,
                            "parents": sorted(p.name for p in t.parents),
                            "stateful": t.stateful}
    with open(os.path.join(args.outdir, "expected_graph.json"), "w") as f:
        json.dump({"tables": dict(sorted(expected.items()))}, f, indent=1)
        f.write("\n")
    edges = sum(len(t.parents) for t in tables)
    print(f"{len(tables)} tables, {edges} edges, {n_products} products -> {root}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
