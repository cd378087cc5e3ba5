#!/usr/bin/env bash
# Deploy speed against the in-process fake: 100 generated tables, 50 ms per request, 1 s per statement
# to leave PENDING. Prints the times and the ratio to the critical-path bound (must be <= 1.2).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --test testsuite deploy_bench:: -- --ignored --nocapture 2>&1 | grep -Ev '^\s*$|Running|running 1 test'
