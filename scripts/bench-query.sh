#!/usr/bin/env bash
# Query speed on the warm local stack (scripts/local-flink.sh up): a `table preview` of the fixtures'
# seed table (12 rows, read from the start of its own topic to its end), and an aggregate `sql query`
# over it. Prints, per run, the time to the first row and to the complete snapshot as the tool reports
# them, and the whole command's wall time; then the median of each. Goal: first row <= 5 s.
#   scripts/bench-query.sh [RUNS]        (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
cargo build --release -q
bin="$PWD/target/release/flinkpipe"
bash scripts/local-flink.sh status >/dev/null 2>&1 || { echo "bench-query.sh: the local stack is not up (scripts/local-flink.sh up)" >&2; exit 1; }
work="$(mktemp -d -t flinkpipe-bench-query.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="bq$$"
cp -r fixtures/pipelines "$work/"
sed -i "s/'topic' = 'seed_sales_stores'/'topic' = '${prefix}_seed_sales_stores'/" \
  "$work/pipelines/seeds/sales/seed_stores/sql-scripts/ddl.seed_sales_stores.sql"
printf 'flinkpipe:\n  statement_prefix: %s\n  gateway:\n    url: http://127.0.0.1:8083\n    jobmanager_url: http://127.0.0.1:8081\n' "$prefix" > "$work/config.yaml"
bash scripts/local-flink.sh topics "$work/pipelines" >/dev/null
"$bin" --config "$work/config.yaml" pipeline deploy "$work/pipelines" --table-name seed_sales_stores >/dev/null
agg="SELECT region, COUNT(*) AS stores FROM seed_sales_stores /*+ OPTIONS('scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset') */ GROUP BY region"
measure() {  # label, then the command's arguments
  local label="$1"; shift
  local firsts=() totals=() walls=()
  for _ in $(seq "$runs"); do
    local t0 t1 out
    t0=$(date +%s.%N)
    out=$("$bin" --config "$work/config.yaml" --output json "$@")
    t1=$(date +%s.%N)
    firsts+=("$(python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["first_row_seconds"])' <<<"$out")")
    totals+=("$(python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["complete"]; print("%.2f" % d["seconds"])' <<<"$out")")
    walls+=("$(python3 -c "print('%.2f' % ($t1 - $t0))")")
  done
  python3 - "$label" "${firsts[*]}" "${totals[*]}" "${walls[*]}" <<'PY'
import statistics, sys
label, *cols = sys.argv[1:]
f, t, w = ([float(x) for x in c.split()] for c in cols)
print(f"{label}: first row {statistics.median(f):.2f} s (min {min(f):.2f}, max {max(f):.2f}); "
      f"complete {statistics.median(t):.2f} s; command {statistics.median(w):.2f} s; {len(f)} runs")
PY
}
measure "table preview seed_sales_stores" table preview seed_sales_stores "$work/pipelines"
measure "sql query (aggregate with updates)" sql query "$agg" --pipelines "$work/pipelines"
"$bin" --config "$work/config.yaml" pipeline undeploy "$work/pipelines" --dir pipelines --no-ack >/dev/null
echo "$(nproc) cores; $("$bin" --version)"
