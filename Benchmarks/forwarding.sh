#!/usr/bin/env bash
# Port forwarding figures, side by side with OpenSSH's `ssh -N -L`, against a local sshd on
# loopback (release build). Not a test: numbers, and the ratios to OpenSSH.
#  1. throughput of one stream of N MiB (default 1024) through a local forward
#  2. connection setup latency through the forward: connect + 1-byte echo (median of R runs)
#  3. throughput of 16 parallel streams sharing N MiB
# Throughput figures are the median of ROUNDS (default 3) alternating runs: single runs vary
# by ±20% here.
# Which build, and the same cipher for both (aes128-ctr, hmac-sha2-256) or each side's default:
# see sshd-env.sh. Ratios are written so that above 1.0 means Termhost is faster.
# Usage: [TERMHOST_BENCH_PREFIX=DIR] [TERMHOST_BENCH_CIPHERS=shared|default] Benchmarks/forwarding.sh [MiB] [latency runs] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-1024}
runs=${2:-200}
rounds=${3:-3}
pids=()
bench_cleanup='for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done'
source Benchmarks/sshd-env.sh
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

python3 Benchmarks/forward_load.py serve "$work/target.port" & pids+=($!)
while [ ! -s "$work/target.port" ]; do sleep 0.05; done
target=$(cat "$work/target.port")

wait_port() { for _ in $(seq 200); do python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1]))).close()' "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "forward on $1 did not come up" >&2; exit 1; }

tport=$(freeport)
"$termhost" forward run "$user@127.0.0.1:$port" -L "$tport:127.0.0.1:$target" > "$work/termhost.out" 2>&1 & pids+=($!)
oport=$(freeport)
ssh "${ssh_opts[@]}" -N -L "$oport:127.0.0.1:$target" "$user@127.0.0.1" & pids+=($!)
wait_port "$tport"
wait_port "$oport"
# termhost binds its listener at once and refuses clients until its connection is up: wait for
# the rule to say it is active.
for _ in $(seq 600); do grep -q ": active, listening on" "$work/termhost.out" && break; sleep 0.05; done
echo "ciphers: termhost $(negotiated libssh2); OpenSSH $(negotiated OpenSSH)"

load() { python3 Benchmarks/forward_load.py "$@"; }
ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
rate() { python3 -c 'import sys; print("%.0f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# Throughput figures are the median of `rounds` alternating runs of the two forwards.
both() {  # mode args...: sets t and o
  local ts=() os=()
  for _ in $(seq "$rounds"); do ts+=("$(load "$1" "$tport" "${@:2}")"); os+=("$(load "$1" "$oport" "${@:2}")"); done
  t=$(median "${ts[@]}"); o=$(median "${os[@]}")
}

echo "One stream of $mib MiB through -L (median of $rounds)"
both throughput "$mib"
echo "  termhost forward  $t s  $(rate "$mib" "$t") MiB/s"
echo "  ssh -N -L         $o s  $(rate "$mib" "$o") MiB/s"
echo "  ratio (ssh time / termhost time): $(ratio "$o" "$t")"

echo
echo "Connection setup through -L: connect + 1-byte echo (median of $runs)"
t=$(load latency "$tport" "$runs"); o=$(load latency "$oport" "$runs")
echo "  termhost forward  $t ms"
echo "  ssh -N -L         $o ms"
echo "  ratio (ssh / termhost): $(ratio "$o" "$t")"

echo
echo "16 parallel streams sharing $mib MiB through -L (median of $rounds)"
both parallel 16 "$mib"
echo "  termhost forward  $t s  $(rate "$mib" "$t") MiB/s"
echo "  ssh -N -L         $o s  $(rate "$mib" "$o") MiB/s"
echo "  ratio (ssh time / termhost time): $(ratio "$o" "$t")"
