#!/usr/bin/env bash
# Benchmark `project list-modified-files` and `project list-impacted-tables` on a generated tree.
#
#   scripts/bench-changes.sh            # 10,000 tables, 300 commits, 3 runs each
#
# Generates a tree with scripts/gen-bench-tree.py, commits it on `main` as the baseline, then makes
# BENCH_COMMITS commits on branch `feature`, each touching 1-3 random table files with a typical
# edit (comment, keyword case, literal change, added column, WITH option, .properties), and times
# (best and median of BENCH_RUNS):
#   1. list-modified-files --since main
#   2. list-impacted-tables --since main, head graph from a full load (no pipeline_graph.json)
#   3. list-impacted-tables --since main, head graph from a fresh pipeline_graph.json
#      (written by `pipeline build-all-metadata` before the runs)
# and prints a markdown table. Progress goes to stderr, the table to stdout.
#
# Environment: BENCH_TABLES=10000 BENCH_COMMITS=300 BENCH_RUNS=3 BENCH_SEED=42
#              BENCH_DIR=<scratch dir, default: mktemp -d, removed at the end>
#              BENCH_REUSE=1 (with BENCH_DIR: reuse the repository made by an earlier run)
#              FLINKPIPE=<binary> (skips the cargo build)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
tables="${BENCH_TABLES:-10000}"
commits="${BENCH_COMMITS:-300}"
runs="${BENCH_RUNS:-3}"
seed="${BENCH_SEED:-42}"

die() { echo "bench-changes.sh: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is missing"
command -v git >/dev/null || die "git is missing"

if [ -z "${FLINKPIPE:-}" ]; then
  echo "building: cargo build --release" >&2
  (cd "$repo" && cargo build --release --quiet) || die "cargo build --release failed"
  FLINKPIPE="${CARGO_TARGET_DIR:-$repo/target}/release/flinkpipe"
fi
[ -x "$FLINKPIPE" ] || die "no binary at $FLINKPIPE"
"$FLINKPIPE" project list-modified-files --help >/dev/null 2>&1 \
  || die "$FLINKPIPE does not have: flinkpipe project list-modified-files"

if [ -n "${BENCH_DIR:-}" ]; then
  work="$BENCH_DIR"; mkdir -p "$work"
else
  work="$(mktemp -d -t flinkpipe-bench-changes.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
fi

if [ "${BENCH_REUSE:-0}" = 1 ] && [ -d "$work/.git" ]; then
  echo "reusing the repository in $work" >&2
  cd "$work"
else
echo "generating $tables tables in $work" >&2
python3 "$repo/scripts/gen-bench-tree.py" "$tables" "$work" --seed "$seed" --force >/dev/null
cd "$work"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
git init -q -b main
printf 'expected_graph.json\nout/\npipelines/**/pipeline_definition.json\npipelines/pipeline_graph.json\npipelines/inventory.json\n' > .gitignore
git add -A
GIT_AUTHOR_DATE="2025-01-01T12:00:00Z" GIT_COMMITTER_DATE="2025-01-01T12:00:00Z" git commit -qm baseline
git checkout -qb feature

echo "making $commits commits" >&2
python3 - "$commits" "$seed" <<'EOF'
import os, random, re, subprocess, sys
commits, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
files = []
for d, _, names in os.walk("pipelines"):
    for n in names:
        if n.endswith(".sql") and (n.startswith("ddl.") or n.startswith("dml.")):
            files.append(os.path.join(d, n))
files.sort()

def edit(path, kind):
    """Edits a table file; returns the path written."""
    text = open(path).read()
    if kind == "comment":
        text = f"-- edited {rng.randrange(10**6)}\n" + text
    elif kind == "case":
        text = text.replace("SELECT", "select", 1).replace("FROM", "from", 1)
    elif kind == "literal":
        nums = list(re.finditer(r"\b\d+\b", text))
        if nums:
            m = rng.choice(nums)
            text = text[:m.start()] + str(int(m.group()) + 1) + text[m.end():]
        else:
            text += "\n-- no literal\n"
    elif kind == "column" and os.path.basename(path).startswith("ddl."):
        text = re.sub(r"\(\n", f"(\n  bench_col_{rng.randrange(10**6)} STRING,\n", text, count=1)
    elif kind == "option" and "WITH (" in text:
        text = text.replace("WITH (", f"WITH (\n  'bench.option' = '{rng.randrange(10**6)}',", 1)
    elif kind == "properties":
        props = os.path.join(os.path.dirname(path), "bench.properties")
        with open(props, "a") as f:
            f.write(f"sql.state-ttl={rng.randrange(1, 48)} h\n")
        return props
    else:
        text = text + f"\n-- touched {rng.randrange(10**6)}\n"
    open(path, "w").write(text)
    return path

for i in range(commits):
    touched = [edit(rng.choice(files), rng.choice(["comment", "case", "literal", "column", "option", "properties"]))
               for _ in range(rng.randint(1, 3))]
    date = f"2025-02-{1 + i * 27 // commits:02d}T12:00:00Z"
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "add", "--"] + touched, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", f"change {i}"], check=True, env=env)
EOF
echo "changed files: $(git diff --name-only main...feature | wc -l)" >&2
# Clones are packed; loose objects would make every read an inflate of its own file.
git gc -q
fi

# time CMD… → seconds (best and median of $runs)
time_runs() {
  local ts=() t0 t1
  for _ in $(seq "$runs"); do
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; die "failed: $*"; }
    t1=$(date +%s.%N)
    ts+=("$(echo "$t1 - $t0" | bc)")
  done
  printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f\n", a[1], a[int((NR+1)/2)]}'
}

mkdir -p out
P="$work/pipelines"
rm -f "$P/pipeline_graph.json"
read -r lm_best lm_med < <(time_runs "$FLINKPIPE" project list-modified-files "$P" --since main --output-dir out)
read -r full_best full_med < <(time_runs "$FLINKPIPE" project list-impacted-tables "$P" --since main --output-dir out)
echo "writing pipeline_graph.json (pipeline build-all-metadata)" >&2
"$FLINKPIPE" pipeline build-all-metadata "$P" >/dev/null 2>&1 || echo "build-all-metadata reported errors (graph file still written: $( [ -f "$P/pipeline_graph.json" ] && echo yes || echo no))" >&2
read -r gf_best gf_med < <(time_runs "$FLINKPIPE" project list-impacted-tables "$P" --since main --output-dir out)
"$FLINKPIPE" -v project list-impacted-tables "$P" --since main --output-dir out 2>&1 >/dev/null | grep -E "changes listed|head graph loaded" | sed 's/\x1b\[[0-9;]*m//g' >&2 || true
rows=$(python3 -c 'import json; print(len(json.load(open("out/modified_flink_files.json"))["file_list"]))')
impacted=$(python3 -c 'import json; print(len(json.load(open("out/impacted_tables.json"))["impacted_tables"]))')

echo "| command ($tables tables, $commits commits, $rows changed files, $impacted impacted) | best (s) | median (s) |"
echo "|---|---|---|"
echo "| list-modified-files --since main | $lm_best | $lm_med |"
echo "| list-impacted-tables --since main (full load) | $full_best | $full_med |"
echo "| list-impacted-tables --since main (pipeline_graph.json) | $gf_best | $gf_med |"
