#!/usr/bin/env bash
# Times the unit tests of fixtures/ on the warm local stack (scripts/local-flink.sh up):
# one table's test case, then every suite (project run-unit-tests). Writes nothing in the repository.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${FLINKPIPE:-$HERE/target/release/flinkpipe}"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
cp -r "$HERE/fixtures/pipelines" "$WORK/"
printf 'flinkpipe:\n  statement_prefix: bench-ut\n  gateway:\n    url: http://127.0.0.1:8083\n    jobmanager_url: http://127.0.0.1:8081\n' > "$WORK/config.yaml"
t0=$(date +%s.%N)
"$BIN" --config "$WORK/config.yaml" table run-unit-tests int_inventory_stock_levels "$WORK/pipelines"
t1=$(date +%s.%N)
"$BIN" --config "$WORK/config.yaml" project run-unit-tests "$WORK/pipelines"
t2=$(date +%s.%N)
printf 'one test case: %.1f s\nall fixture suites: %.1f s\n' "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
