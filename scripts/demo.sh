#!/usr/bin/env bash
# The demo: runs the example scripts and the demo campaign (quick mode), and
# writes their outputs under reports/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=reports/demo
mkdir -p "$out"
lab() { cargo run --release --quiet -p bench-harness --bin lab -- "$@"; }
lab run examples/clicks_per_user.sql --changelog "$out/changelog.csv" --result "$out/result.csv" | tee "$out/clicks_per_user.txt"
lab explain examples/clicks_per_user.sql | tee "$out/clicks_per_user.plan.txt"
# Skewed group aggregate: heap vs RocksDB, 1 vs 4 subtasks, as the skew grows.
lab campaign campaigns/demo.toml --quick   # report: reports/demo/ (the name in the spec)
echo "demo: wrote $out/"
echo "demo: campaign report in $out/index.md (charts: $out/*.png, $out/*.svg; data: $out/results.csv)"
