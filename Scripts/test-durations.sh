#!/usr/bin/env bash
# Prints the ten slowest test suites of a `swift test` log (Swift Testing's "Suite NAME
# passed/failed after N seconds." lines), so the suite's time budget can be watched, then the
# run's closing line again, so that it stays the last line of the test command's output.
#   Scripts/test-durations.sh LOG
set -euo pipefail
log=$1
echo
echo "Slowest suites (seconds from start to end; suites run in parallel, so these overlap):"
# awk keeps the first ten itself and reads to the end: `head` would exit early and, under
# pipefail, the SIGPIPE of the writer before it made a green run exit 141 (seen once in CI-like
# runs under load).
sed -nE 's/^[^ ]+ Suite (.+) (passed|failed) after ([0-9.]+) seconds.*/\3 \1 \2/p' "$log" \
  | sort -rn | awk 'NR <= 10 { printf "%9.1f  %s", $1, $2; for (i = 3; i < NF; i++) printf " %s", $i; if ($NF == "failed") printf "  (failed)"; printf "\n" }'
grep -E "Test run with [0-9]+ tests? .*(passed|failed) after" "$log" | tail -1 || true
