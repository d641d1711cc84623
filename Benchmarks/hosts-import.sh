#!/usr/bin/env bash
# Times `termhost hosts import` of a generated ssh_config (release build). Not a test: numbers,
# no verdicts. Each host has HostName and Port; a wildcard block and `Host *` supply User and
# IdentityFile to all, so every host is looked up against the pattern blocks too.
#  1. parse + save of N hosts into an empty store (--yes)
#  2. the same file again: every host already saved, nothing written (the saved-name check)
# Usage: Benchmarks/hosts-import.sh [hosts ...]     default: 4000 20000
set -euo pipefail
cd "$(dirname "$0")/.."
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(4000 20000)
Scripts/stage.sh --release .build/bench-termhost >/dev/null
termhost=$PWD/.build/bench-termhost/bin/termhost
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config XDG_STATE_HOME=$scratch/state
export TERMHOST_POLICY=$scratch/none.json
mkdir -p "$HOME/.ssh"
"$termhost" features >/dev/null   # the probe cache, so that start-up is not timed as import

seconds() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / 1e9))' "$1"; }
for n in "${counts[@]}"; do
  export XDG_DATA_HOME=$scratch/data-$n
  config=$scratch/config-$n
  python3 - "$n" >"$config" <<'PY'
import sys
n = int(sys.argv[1])
out = []
for i in range(n):
    out.append("Host h%d\n  HostName 10.%d.%d.%d\n  Port %d\n" % (i, i >> 16, (i >> 8) & 255, i & 255, 1024 + i % 60000))
out.append("Host h1*\n  User ops\nHost *\n  User everyone\n  IdentityFile ~/.ssh/id_all\n")
sys.stdout.write("".join(out))
PY
  size=$(stat -c %s "$config")
  s=$(date +%s%N); "$termhost" hosts import "$config" --yes >"$scratch/out" 2>"$scratch/err"; e=$(date +%s%N)
  tail -1 "$scratch/out" | grep -q "Imported $n host(s)." || { echo "import of $n hosts failed:"; tail -3 "$scratch/out" "$scratch/err"; exit 1; }
  first=$(seconds $((e - s)))
  s=$(date +%s%N); "$termhost" hosts import "$config" --yes >/dev/null 2>&1; e=$(date +%s%N)
  again=$(seconds $((e - s)))
  echo "hosts import, $n hosts ($((size / 1024)) KiB): $first s into an empty store; $again s again (all already saved)"
done
