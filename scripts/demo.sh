#!/usr/bin/env bash
# The demo: runs the example scripts and writes their outputs under reports/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=reports/demo
mkdir -p "$out"
lab() { cargo run --release --quiet -p bench-harness --bin lab -- "$@"; }
lab run examples/clicks_per_user.sql --changelog "$out/changelog.csv" --result "$out/result.csv" | tee "$out/clicks_per_user.txt"
lab explain examples/clicks_per_user.sql | tee "$out/clicks_per_user.plan.txt"
echo "demo: wrote $out/"
