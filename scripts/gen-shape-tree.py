#!/usr/bin/env python3
"""Generate a pipelines tree of an extreme shape, for the scale benchmarks of scripts/bench-shapes.sh.

    scripts/gen-shape-tree.py chain N OUTDIR    # src_c_0 -> int_c_1 -> ... -> int_c_<N-1>: one path, N deep
    scripts/gen-shape-tree.py fanout N OUTDIR   # src_f_hub read by int_f_0 ... int_f_<N-1>: N + 1 tables

Writes OUTDIR/pipelines/sources/<p>/<folder>/sql-scripts/ddl.<table>.sql for the source and
OUTDIR/pipelines/intermediates/<p>/<folder>/sql-scripts/{ddl,dml}.<table>.sql for every other table
(the folder contract of fixtures/pipelines). The SQL is small and valid Flink: a Kafka DDL with a
primary key, and `INSERT INTO t SELECT id, amount FROM parent`. Deterministic; Python 3 stdlib only.
OUTDIR must not exist (or be empty).
"""

import os
import sys

DDL = """CREATE TABLE IF NOT EXISTS {name} (
  id BIGINT,
  amount DOUBLE,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{name}',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);
"""

DML = """INSERT INTO {name}
SELECT id, amount FROM {parent};
"""


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def table(root, layer, product, folder, name, parent):
    scripts = os.path.join(root, layer, product, folder, "sql-scripts")
    os.makedirs(scripts)
    write(os.path.join(scripts, f"ddl.{name}.sql"), DDL.format(name=name))
    if parent is not None:
        write(os.path.join(scripts, f"dml.{name}.sql"), DML.format(name=name, parent=parent))


def main(argv):
    if len(argv) != 4 or argv[1] not in ("chain", "fanout") or not argv[2].isdigit():
        sys.stderr.write(__doc__)
        return 2
    shape, n, out = argv[1], int(argv[2]), argv[3]
    if n < 1:
        sys.stderr.write("gen-shape-tree.py: N must be at least 1\n")
        return 2
    if os.path.exists(out) and os.listdir(out):
        sys.stderr.write(f"gen-shape-tree.py: {out} exists and is not empty\n")
        return 2
    root = os.path.join(out, "pipelines")
    os.makedirs(root, exist_ok=True)
    if shape == "chain":
        table(root, "sources", "c", "src_c_0", "src_c_0", None)
        parent = "src_c_0"
        for i in range(1, n):
            name = f"int_c_{i}"
            table(root, "intermediates", "c", name, name, parent)
            parent = name
    else:
        table(root, "sources", "f", "src_f_hub", "src_f_hub", None)
        for i in range(n):
            name = f"int_f_{i}"
            table(root, "intermediates", "f", name, name, "src_f_hub")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
