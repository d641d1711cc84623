#!/usr/bin/env bash
# Assistant: time from the provider's first response byte to the first byte of the answer on
# the terminal (TERMHOST_ASSISTANT_TIMING=1 makes `termhost ask` print it), over RUNS asks
# against a loopback server streaming Chat Completions (Benchmarks/assistant_model.py). Also
# the wall time of a whole `termhost ask`. Not a test: figures (median, p90, max).
# Usage: Benchmarks/assistant-latency.sh [runs]   (stages a release build first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
work=$(mktemp -d /tmp/termhost-assistant-bench-XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
Scripts/stage.sh --release "$work/termhost" > /dev/null
termhost="$work/termhost/bin/termhost"
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache"

python3 Benchmarks/assistant_model.py "$work/port" & server=$!
while [ ! -s "$work/port" ]; do sleep 0.05; done
"$termhost" assistant provider add bench --kind openai-compatible --model bench \
  --url "http://127.0.0.1:$(cat "$work/port")/v1" > /dev/null

: > "$work/first-byte" ; : > "$work/wall"
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  TERMHOST_ASSISTANT_TIMING=1 "$termhost" ask "how full is the disk?" 2> "$work/err" > /dev/null
  echo $(( ($(date +%s%N) - start) / 1000 )) >> "$work/wall"
  sed -n 's/^termhost: timing: provider first byte to terminal \([0-9]*\) us$/\1/p' "$work/err" >> "$work/first-byte"
done

summary() {
  sort -n "$2" | awk -v name="$1" '{ v[NR] = $1 } END {
    if (NR == 0) { print name ": no samples"; exit 1 }
    printf "%-40s median %8d us   p90 %8d us   max %8d us   (%d runs)\n", name, v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR], NR }'
}
summary "provider first byte -> terminal" "$work/first-byte"
summary "whole termhost ask (start to exit)" "$work/wall"
