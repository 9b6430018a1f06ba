#!/usr/bin/env bash
# Writes examples/data/kv.csv (2M rows, 100k keys) once, then runs
# examples/kv_group_agg.sql three times and prints each run's wall time, the
# job thread's waits, and the aggregate's busy time.
set -euo pipefail
cd "$(dirname "$0")/.."
lab() { cargo run --release --quiet -p bench-harness --bin lab -- "$@"; }
mkdir -p examples/data
if [ ! -s examples/data/kv.csv ]; then
  lab run examples/kv_csv_gen.sql --quiet
fi
for i in 1 2 3; do
  # Wall time, how long the job's thread waited for the CSV reader and spent
  # in the sink, and how long the aggregate itself was busy.
  lab run examples/kv_group_agg.sql | grep -E "wall time|job thread|busy"
done
