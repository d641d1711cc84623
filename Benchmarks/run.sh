#!/usr/bin/env bash
# Prints Termhost's start-up and ABI figures (release build). Not a test: numbers, no verdicts.
#  1. cold and warm start of `termhost features` with every bundled plugin
#     (cold: empty probe cache, so every plugin is probed in a child; warm: cache current)
#  2. load and init time per plugin, in the host process (from --log-level debug) and in the probe
#  3. the cost of a call through an ABI service vtable against a direct Swift call, and of one C
#     function as a typed action through libffi, as a vtable command and called directly
# Usage: Benchmarks/run.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
Scripts/stage.sh --release .build/bench-termhost >/dev/null
swift build -c release --product termhost-bench >/dev/null
termhost=$PWD/.build/bench-termhost/bin/termhost
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_DATA_HOME=$scratch/data XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config XDG_STATE_HOME=$scratch/state
export TERMHOST_POLICY=$scratch/none.json

ms() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) / 1e6))' "$1"; }
stats() { sort -n | python3 -c '
import sys
v=[float(x)/1e6 for x in sys.stdin]
print("median %.1f ms, min %.1f ms, max %.1f ms (%d runs)" % (v[len(v)//2], v[0], v[-1], len(v)))'; }

plugins=$(ls -d .build/bench-termhost/lib/termhost/plugins/*/ | wc -l)
echo "Start-up of 'termhost features' with $plugins bundled plugins"
for mode in cold warm; do
  for _ in $(seq "$runs"); do
    [ "$mode" = cold ] && rm -rf "$scratch/cache"
    start=$(date +%s%N); "$termhost" features >/dev/null; end=$(date +%s%N)
    echo $((end - start))
  done | { printf '  %-5s ' "$mode"; stats; }
done
echo "  (cold includes one probe child per plugin; warm reads the probe cache)"

echo
echo "Load and init per plugin, in the host process ('termhost hello', debug log):"
"$termhost" --log-level debug hello 2>&1 >/dev/null | sed -n 's/.*host: debug: /  /p'
echo "In the probe child (termhost doctor --json):"
rm -rf "$scratch/cache"
"$termhost" doctor --json | python3 -c '
import json,sys
for p in json.load(sys.stdin)["plugins"]:
    print("  %-40s load %.3f ms, init %.3f ms, whole probe %.1f ms" % (p["id"], p.get("loadMs") or 0, p.get("initMs") or 0, p.get("probeMs") or 0))'

echo
"$(swift build -c release --show-bin-path)/termhost-bench"
