#!/usr/bin/env bash
# Scale benchmarks on trees of extreme shape (BENCHMARKS.md, "Extreme shapes").
#
#   scripts/bench-shapes.sh            # a 1,000,000-table chain and one source read by 10,000 tables
#   BENCH_CHAIN=100000 BENCH_FANOUT=1000 scripts/bench-shapes.sh   # smaller
#
# Builds `cargo build --release` (or uses $FLINKPIPE), generates the trees with
# scripts/gen-shape-tree.py, then runs each command once under /usr/bin/time -v and prints a markdown
# table (wall s, CPU s, peak RSS MB, exit status) to paste into BENCHMARKS.md; for the fan-out it also
# prints the sizes of the metadata files. Progress goes to stderr, the tables to stdout.
#
# Disk: the 1,000,000-table chain is 2,000,000 folders and 3,000,000 files (about 20 GB on ext4 with
# 4 KB blocks, metadata included); generating it takes 10-30 minutes. The trees are removed at the end
# unless BENCH_KEEP=1.
#
# Environment: BENCH_CHAIN=1000000  BENCH_FANOUT=10000  BENCH_DIR=<scratch dir, default mktemp -d>
#              FLINKPIPE=<binary>  BENCH_KEEP=1  BENCH_SKIP_CHAIN=1  BENCH_SKIP_FANOUT=1
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
chain="${BENCH_CHAIN:-1000000}"
fanout="${BENCH_FANOUT:-10000}"

die() { echo "bench-shapes.sh: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing: apt-get install -y time"
/usr/bin/time -v true 2>/dev/null || die "/usr/bin/time does not support -v (need GNU time)"
command -v python3 >/dev/null || die "python3 is missing"

if [ -z "${FLINKPIPE:-}" ]; then
  echo "building: cargo build --release" >&2
  (cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
  FLINKPIPE="${CARGO_TARGET_DIR:-$repo/target}/release/flinkpipe"
fi
[ -x "$FLINKPIPE" ] || die "no binary at $FLINKPIPE"

if [ -n "${BENCH_DIR:-}" ]; then
  work="$BENCH_DIR"; mkdir -p "$work"
else
  work="$(mktemp -d -t flinkpipe-shapes.XXXXXX)"
fi
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'rm -rf "$work/chain" "$work/fanout"' EXIT
fi
# The analysis cache of these trees goes to the scratch folder, not the user's cache.
export XDG_CACHE_HOME="$work/cache"

# One command under time -v: prints a table row; the command's stdout goes to $work/out.
row() {
  local label="$1"; shift
  local rc=0
  /usr/bin/time -v -o "$work/time" "$FLINKPIPE" "$@" >"$work/out" 2>"$work/err" || rc=$?
  awk -F': ' -v label="$label" -v rc="$rc" '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = (n == 3) ? p[1]*3600 + p[2]*60 + p[3] : p[1]*60 + p[2] }
    /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { rss = $2 }
    END { printf "| %s | %.1f | %.1f | %.0f | %d |\n", label, wall, u + s, rss / 1024, rc }' "$work/time"
  if [ "$rc" != 0 ]; then sed 's/^/    /' "$work/err" | tail -5 >&2; fi
}

header() {
  echo
  echo "| command | wall s | CPU s | peak RSS MB | exit |"
  echo "|---|---:|---:|---:|---:|"
}

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $("$FLINKPIPE" version 2>/dev/null | head -1)"

if [ "${BENCH_SKIP_CHAIN:-0}" != 1 ]; then
  dir="$work/chain"
  if [ ! -d "$dir/pipelines" ]; then
    echo "generating a chain of $chain tables in $dir" >&2
    python3 "$repo/scripts/gen-shape-tree.py" chain "$chain" "$dir"
  fi
  p="$dir/pipelines"
  last="int_c_$((chain - 1))"
  echo
  echo "Chain of $chain tables (src_c_0 -> int_c_1 -> ... -> $last):"
  header
  row "pipeline validate (empty cache)" pipeline validate "$p"
  row "table build-inventory" table build-inventory "$p"
  row "pipeline build-all-metadata" pipeline build-all-metadata "$p"
  row "pipeline validate" pipeline validate "$p"
  row "pipeline report $last (text)" pipeline report "$last" "$p"
  echo "    report: $(wc -l <"$work/out") lines, $(wc -c <"$work/out") bytes" >&2
  row "pipeline report $last --output json (refused: too deep)" pipeline report "$last" "$p" --output json
  row "pipeline build-execution-plan --table-name $last" pipeline build-execution-plan "$p" --table-name "$last" --offline
  row "pipeline build-execution-plan --table-name src_c_0 --may-start-descendants" pipeline build-execution-plan "$p" --table-name src_c_0 --may-start-descendants --offline
  row "pipeline graph --select +$last --format json" pipeline graph "$p" --select "+$last" --format json
  row "pipeline graph --format svg" pipeline graph "$p" --format svg
fi

if [ "${BENCH_SKIP_FANOUT:-0}" != 1 ]; then
  dir="$work/fanout"
  if [ ! -d "$dir/pipelines" ]; then
    echo "generating one source read by $fanout tables in $dir" >&2
    python3 "$repo/scripts/gen-shape-tree.py" fanout "$fanout" "$dir"
  fi
  p="$dir/pipelines"
  echo
  echo "One source read by $fanout tables:"
  header
  row "pipeline validate (empty cache)" pipeline validate "$p"
  row "pipeline build-all-metadata" pipeline build-all-metadata "$p"
  row "pipeline report src_f_hub --children-too" pipeline report src_f_hub "$p" --children-too
  row "pipeline build-execution-plan --table-name src_f_hub --may-start-descendants" pipeline build-execution-plan "$p" --table-name src_f_hub --may-start-descendants --offline
  reader="$p/intermediates/f/int_f_0/pipeline_definition.json"
  hub="$p/sources/f/src_f_hub/pipeline_definition.json"
  total=$(find "$p" -name pipeline_definition.json -printf '%s\n' | awk '{ s += $1 } END { print s }')
  echo
  echo "metadata: a reader's pipeline_definition.json $(stat -c %s "$reader") bytes, the source's $(stat -c %s "$hub") bytes, all $((fanout + 1)) files $total bytes"
fi
