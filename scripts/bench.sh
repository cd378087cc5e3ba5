#!/usr/bin/env bash
# Benchmark flinkpipe's offline commands on generated trees.
#
#   scripts/bench.sh            # 1,000 and 10,000 tables, 3 runs each
#
# Builds `cargo build --release`, generates trees with scripts/gen-bench-tree.py, then for each
# size runs, RUNS times on a fresh copy of the tree:
#     flinkpipe table build-inventory <DIR>/pipelines
#     flinkpipe pipeline build-all-metadata <DIR>/pipelines
# under /usr/bin/time -v, and prints a markdown table (median wall time, peak RSS) to paste
# into BENCHMARKS.md. Progress goes to stderr, the table to stdout.
#
# Environment: BENCH_SIZES="1000 10000"  BENCH_RUNS=3  BENCH_SEED=42
#              BENCH_DIR=<scratch dir, default: mktemp -d, removed at the end>
#              FLINKPIPE=<binary> (skips the cargo build)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
sizes="${BENCH_SIZES:-1000 10000}"
runs="${BENCH_RUNS:-3}"
seed="${BENCH_SEED:-42}"

die() { echo "bench.sh: $*" >&2; exit 1; }

[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing: apt-get install -y time"
/usr/bin/time -v true 2>/dev/null || die "/usr/bin/time does not support -v (need GNU time): apt-get install -y time"
command -v python3 >/dev/null || die "python3 is missing"

if [ -z "${FLINKPIPE:-}" ]; then
  echo "building: cargo build --release" >&2
  (cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
  FLINKPIPE="$repo/target/release/flinkpipe"
fi
[ -x "$FLINKPIPE" ] || die "no binary at $FLINKPIPE"

# The commands are required; say exactly which one is missing.
missing=()
"$FLINKPIPE" table build-inventory --help >/dev/null 2>&1 || missing+=("flinkpipe table build-inventory")
"$FLINKPIPE" pipeline build-all-metadata --help >/dev/null 2>&1 || missing+=("flinkpipe pipeline build-all-metadata")
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'bench.sh: %s does not have: %s\n' "$FLINKPIPE" "$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" >&2
  exit 1
fi

if [ -n "${BENCH_DIR:-}" ]; then
  work="$BENCH_DIR"; mkdir -p "$work"
else
  work="$(mktemp -d -t flinkpipe-bench.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
fi

# wall seconds and max RSS (KB) from a `time -v` report
parse_time() {
  awk -F': ' '
    /Elapsed \(wall clock\) time/ {
      n = split($2, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]
      wall = s
    }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.3f %d\n", wall, rss }' "$1"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rows=()
for n in $sizes; do
  pristine="$work/tree-$n"
  echo "generating $n tables" >&2
  rm -rf "$pristine"
  python3 "$repo/scripts/gen-bench-tree.py" "$n" "$pristine" --seed "$seed" >&2

  declare -A walls=() rss=()
  for run in $(seq 1 "$runs"); do
    copy="$work/run-$n"
    rm -rf "$copy"
    cp -a "$pristine" "$copy"   # every run starts without inventory.json / pipeline_definition.json
    for cmd in "table build-inventory" "pipeline build-all-metadata"; do
      report="$work/time.txt"
      # shellcheck disable=SC2086
      if ! /usr/bin/time -v -o "$report" "$FLINKPIPE" $cmd "$copy/pipelines" >"$work/out.txt" 2>"$work/err.txt"; then
        echo "bench.sh: 'flinkpipe $cmd' failed on $n tables (run $run):" >&2
        tail -n 20 "$work/err.txt" >&2
        exit 1
      fi
      read -r w r < <(parse_time "$report")
      walls[$cmd]+="$w "
      rss[$cmd]+="$r "
      echo "  $n tables, run $run: flinkpipe $cmd  ${w}s  $((r / 1024)) MB" >&2
    done
  done
  for cmd in "table build-inventory" "pipeline build-all-metadata"; do
    med="$(tr ' ' '\n' <<<"${walls[$cmd]}" | grep . | median)"
    peak_kb="$(tr ' ' '\n' <<<"${rss[$cmd]}" | grep . | sort -g | tail -n 1)"
    rows+=("$(printf '| %s | `flinkpipe %s` | %.2f | %.1f |' \
      "$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$n")" "$cmd" "$med" "$(awk -v k="$peak_kb" 'BEGIN { print k / 1024 }')")")
  done
  unset walls rss
  rm -rf "$work/run-$n"
done

cpu="$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
echo "Median of $runs runs; peak RSS is the largest of the runs. $(nproc) cores${cpu:+, $cpu}${load:+, load average $load at the end}; $("$FLINKPIPE" --version 2>/dev/null || echo flinkpipe); trees from \`scripts/gen-bench-tree.py N DIR --seed $seed\`."
echo
echo "| tables | command | median wall s | peak RSS MB |"
echo "|---:|---|---:|---:|"
printf '%s\n' "${rows[@]}"
