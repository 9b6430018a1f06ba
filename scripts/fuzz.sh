#!/usr/bin/env bash
# A long run of the fuzz harness (docs/fuzzing.md): generated and mutated
# input of every category until the time is up; each failure is saved,
# minimised, under fuzz/findings/<category>/<case>/ to be replayed and,
# once fixed, moved into fuzz/corpus/ (which the test suite replays).
#
# Usage: scripts/fuzz.sh [DURATION] [SEED] [lab-fuzz run flags...]
#   scripts/fuzz.sh 1h            # an hour, a seed from the clock
#   scripts/fuzz.sh 30m 7 --jobs 2
# Exits 1 when a failure was found.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-1h}"
seed="${2:-$(date +%s)}"
shift $(( $# < 2 ? $# : 2 ))

cargo build --release --quiet -p fuzz --bin lab-fuzz
echo "lab-fuzz: seed $seed for $duration; failures go to fuzz/findings/" >&2
exec "${CARGO_TARGET_DIR:-target}/release/lab-fuzz" run \
    --duration "$duration" --seed "$seed" --findings fuzz/findings "$@"
