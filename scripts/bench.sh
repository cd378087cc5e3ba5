#!/usr/bin/env bash
# Benchmark flinkpipe's offline commands on generated trees.
#
#   scripts/bench.sh                                  # 1,000 and 10,000 tables, 3 runs each
#   BENCH_SIZES="1000 10000 100000" scripts/bench.sh  # also 100,000 tables (≈ 2 GB of scratch disk,
#                                                     # 10-20 minutes on 2 cores): `make bench-large`
#
# Builds `cargo build --release`, generates trees with scripts/gen-bench-tree.py, then for each
# size runs, RUNS times on a fresh copy of the tree:
#     flinkpipe table build-inventory <DIR>/pipelines
#     flinkpipe pipeline build-all-metadata <DIR>/pipelines
# under /usr/bin/time -v, and prints a markdown table (median wall time, median CPU time, peak RSS) to
# paste into BENCHMARKS.md. Progress goes to stderr, the table to stdout.
#
# Each size is measured in three analysis-cache modes (README "Cache"):
#   none  FLINKPIPE_NO_CACHE=1: both commands parse every file;
#   cold  an empty cache: build-inventory parses (and fills the cache), build-all-metadata reads it;
#   warm  a cache left by an earlier run on the same tree: neither command parses.
#   unchanged  both commands already ran on this very tree (untimed): nothing is rewritten, the run
#         reads the cache and stats the files.
# Sizes of 100,000 tables and more run only BENCH_CACHE_LARGE="none unchanged" (a first run without
# cache, and the unchanged tree), each with its peak memory.
#
# Environment: BENCH_SIZES="1000 10000" (default)  BENCH_RUNS=3  BENCH_SEED=42
#              BENCH_CACHE="none cold warm unchanged"  BENCH_CACHE_LARGE="none unchanged"
#              BENCH_DIR=<scratch dir, default: mktemp -d, removed at the end>
#              FLINKPIPE=<binary> (skips the cargo build)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
sizes="${BENCH_SIZES:-1000 10000}"
runs="${BENCH_RUNS:-3}"
modes_small="${BENCH_CACHE:-none cold warm unchanged}"
modes_large="${BENCH_CACHE_LARGE:-none unchanged}"
seed="${BENCH_SEED:-42}"

die() { echo "bench.sh: $*" >&2; exit 1; }

[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing: apt-get install -y time"
/usr/bin/time -v true 2>/dev/null || die "/usr/bin/time does not support -v (need GNU time): apt-get install -y time"
command -v python3 >/dev/null || die "python3 is missing"

if [ -z "${FLINKPIPE:-}" ]; then
  echo "building: cargo build --release" >&2
  (cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
  FLINKPIPE="${CARGO_TARGET_DIR:-$repo/target}/release/flinkpipe"
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
    /User time \(seconds\)/ { cpu += $2 }
    /System time \(seconds\)/ { cpu += $2 }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.3f %.3f %d\n", wall, cpu, rss }' "$1"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

trash="$work/trash"
mkdir -p "$trash"
rows=()
fmt_n() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }
for n in $sizes; do
  pristine="$work/tree-$n"
  echo "generating $n tables" >&2
  rm -rf "$pristine"
  python3 "$repo/scripts/gen-bench-tree.py" "$n" "$pristine" --seed "$seed" >&2

  copy="$work/run-$n"
  # The warm cache: one earlier run over the same tree at the same path (as on a second invocation).
  rm -rf "$copy" "$work/cache-warm" && cp -a "$pristine" "$copy"
  XDG_CACHE_HOME="$work/cache-warm" "$FLINKPIPE" table build-inventory "$copy/pipelines" >/dev/null 2>&1 || true

  modes="$modes_small"
  [ "$n" -ge 100000 ] && modes="$modes_large"
  for mode in $modes; do
    declare -A walls=() cpus=() rss=()
    for run in $(seq 1 "$runs"); do
      # The previous run's copy is moved aside, not deleted: on ext4 without a journal (this machine's
      # disk) new inodes skip recently deleted ones one by one, so deleting 38,000 files right before a
      # run bills the kernel's scan to the measured commands.
      [ -e "$copy" ] && mv "$copy" "$trash/$n-$mode-$run"
      cp -a "$pristine" "$copy"   # every run starts without inventory.json / pipeline_definition.json
      sync                        # the copy's writeback must not land in the measured commands' time
      case "$mode" in
        none) env_args=(FLINKPIPE_NO_CACHE=1) ;;
        cold) rm -rf "$work/cache-cold"; env_args=(XDG_CACHE_HOME="$work/cache-cold") ;;
        warm) env_args=(XDG_CACHE_HOME="$work/cache-warm") ;;
        unchanged)
          env_args=(XDG_CACHE_HOME="$work/cache-warm")
          for cmd in "table build-inventory" "pipeline build-all-metadata"; do
            # shellcheck disable=SC2086
            env "${env_args[@]}" "$FLINKPIPE" $cmd "$copy/pipelines" >/dev/null 2>&1 \
              || die "'flinkpipe $cmd' failed on $n tables (unchanged, setup run)"
          done
          sync ;;
      esac
      tw=0; tc=0
      for cmd in "table build-inventory" "pipeline build-all-metadata"; do
        report="$work/time.txt"
        # shellcheck disable=SC2086
        if ! env "${env_args[@]}" /usr/bin/time -v -o "$report" "$FLINKPIPE" $cmd "$copy/pipelines" >"$work/out.txt" 2>"$work/err.txt"; then
          echo "bench.sh: 'flinkpipe $cmd' failed on $n tables (run $run, cache $mode):" >&2
          tail -n 20 "$work/err.txt" >&2
          exit 1
        fi
        read -r w c r < <(parse_time "$report")
        walls[$cmd]+="$w "; cpus[$cmd]+="$c "; rss[$cmd]+="$r "
        tw="$(awk -v a="$tw" -v b="$w" 'BEGIN { print a + b }')"
        tc="$(awk -v a="$tc" -v b="$c" 'BEGIN { print a + b }')"
        echo "  $n tables, cache $mode, run $run: flinkpipe $cmd  ${w}s wall  ${c}s cpu  $((r / 1024)) MB" >&2
      done
      walls[both]+="$tw "; cpus[both]+="$tc "
    done
    for cmd in "table build-inventory" "pipeline build-all-metadata" both; do
      med="$(tr ' ' '\n' <<<"${walls[$cmd]}" | grep . | median)"
      medc="$(tr ' ' '\n' <<<"${cpus[$cmd]}" | grep . | median)"
      if [ "$cmd" = both ]; then
        label="both, end to end"; peak="$(tr ' ' '\n' <<<"${rss["table build-inventory"]} ${rss["pipeline build-all-metadata"]}" | grep . | sort -g | tail -n 1)"
      else
        label="\`flinkpipe $cmd\`"; peak="$(tr ' ' '\n' <<<"${rss[$cmd]}" | grep . | sort -g | tail -n 1)"
      fi
      rows+=("$(printf '| %s | %s | %s | %.2f | %.2f | %.1f |' "$(fmt_n "$n")" "$mode" "$label" "$med" "$medc" \
        "$(awk -v k="$peak" 'BEGIN { print k / 1024 }')")")
    done
    unset walls cpus rss
  done

  # The floor: what creating one file per table folder (temporary name + rename, as build-all-metadata
  # does for pipeline_definition.json) costs on this disk right now, with a trivial Python loop.
  mv "$copy" "$trash/$n-floor"
  cp -a "$pristine" "$copy" && sync
  read -r fw fc < <(python3 - "$copy/pipelines" <<'PY'
import os, sys, time
folders = [os.path.dirname(d) for d, _, _ in os.walk(sys.argv[1]) if os.path.basename(d) == "sql-scripts"]
body = b"x" * 9000
t0, c0 = time.monotonic(), os.times()
for folder in folders:
    tmp = os.path.join(folder, ".floor.json.tmp")
    with open(tmp, "xb") as f:
        f.write(body)
    os.rename(tmp, os.path.join(folder, "floor.json"))
c1 = os.times()
print(f"{time.monotonic() - t0:.3f} {c1.user - c0.user + c1.system - c0.system:.3f}")
PY
)
  echo "  $n tables, floor: create $n files  ${fw}s wall  ${fc}s cpu" >&2
  rows+=("$(printf '| %s | — | floor: create one 9 KB file per table folder (Python loop) | %.2f | %.2f | — |' "$(fmt_n "$n")" "$fw" "$fc")")
done
rm -rf "$trash"

cpu="$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)"
echo "Median of $runs runs; peak RSS is the largest of the runs. $(nproc) cores${cpu:+, $cpu}${load:+, load average $load at the end}; $("$FLINKPIPE" --version 2>/dev/null || echo flinkpipe); trees from \`scripts/gen-bench-tree.py N DIR --seed $seed\`."
echo
echo "| tables | cache | command | median wall s | median CPU s (user+sys) | peak RSS MB |"
echo "|---:|---|---|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
