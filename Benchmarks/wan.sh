#!/usr/bin/env bash
# Figures over a long path, side by side with OpenSSH, in one run: a private sshd on loopback
# reached through Benchmarks/delay-proxy.c (each direction held for half the round trip; the
# kernel here has no netem), for each round trip asked:
#  - the path's ceiling: raw TCP through the same proxy, each way
#  - SFTP download and upload of one MIB MiB file (default 256)
#  - SFTP download and upload of FILES files of 4 KiB (default 2000)
#  - one stream through -L, each way (client -> server and server -> client)
#  - exec: MIB MiB through stdin -> cat -> stdout, and MIB MiB of stdout alone (cat FILE)
# Each figure is the median of RUNS (default 3) alternating runs of the two tools; every copy is
# checked with sha256sum before its time counts. Ratios are OpenSSH's time / termhost's (above
# 1.0: termhost is faster); "of ceiling" is the throughput over the raw TCP one that way.
# Which build and which cipher: see sshd-env.sh (default: both on aes128-ctr + hmac-sha2-256).
# Usage: Benchmarks/wan.sh ["RTT_MS ..."] [MIB] [FILES] [RUNS] [RATE_MBIT]
#   e.g. Benchmarks/wan.sh "20 50 100" 256 2000 3      RATE_MBIT caps the proxy (default none);
#   FILES 0 leaves the small files out
set -euo pipefail
cd "$(dirname "$0")/.."
rtts=${1:-20 50 100}
mib=${2:-256}
files=${3:-2000}
runs=${4:-3}
rate=${5:-}
pids=()
bench_cleanup='for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done'
source Benchmarks/sshd-env.sh

cc -std=c99 -O2 -Wall -Wextra -Werror -o "$work/delay-proxy" Benchmarks/delay-proxy.c
python3 Benchmarks/forward_load.py serve "$work/target.port" & pids+=($!)
while [ ! -s "$work/target.port" ]; do sleep 0.05; done
target=$(cat "$work/target.port")

source Benchmarks/transfer-data.sh

ns() { date +%s%N; }
timed() { local s e; sync; s=$(ns); "$@"; e=$(ns); python3 -c 'import sys; print("%.3f" % (int(sys.argv[1]) / 1e9))' $(( e - s )); }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1]))).close()' "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }

# A delay proxy to $1 with one-way delay $2 ms; sets proxy_port.
start_proxy() {
  local file=$work/proxy.$RANDOM
  "$work/delay-proxy" --target "$1" --delay "$2" ${rate:+--rate "$rate"} > "$file" & pids+=($!)
  while [ ! -s "$file" ]; do sleep 0.02; done
  proxy_port=$(cat "$file")
}

# One line: what, bytes (0: no throughput), termhost seconds, OpenSSH seconds, ceiling MB/s (or "").
row() {
  python3 - "$@" <<'PY'
import sys
what, size, t, o, ceiling = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
line = "  %-34s termhost %7.2f s   OpenSSH %7.2f s   ratio %5.2f" % (what, t, o, o / t)
if size:
    line += "   %6.1f vs %6.1f MB/s" % (size / t / 1e6, size / o / 1e6)
    if ceiling:
        line += "   of ceiling %.2f" % (size / t / 1e6 / float(ceiling))
print(line)
PY
}
mbs() { python3 -c 'import sys; print("%.1f" % (int(sys.argv[1]) / float(sys.argv[2]) / 1e6))' "$1" "$2"; }

bytes=$((mib * 1048576))
echo "runs: $runs per figure (median), $mib MiB, $files files of 4 KiB${rate:+, rate cap $rate Mbit/s}"
for rtt in $rtts; do
  one=$(python3 -c 'import sys; print(float(sys.argv[1]) / 2)' "$rtt")
  start_proxy "$port" "$one"; sport=$proxy_port
  start_proxy "$target" "$one"; tport=$proxy_port
  echo "[127.0.0.1]:$sport $(cut -d' ' -f1,2 "$work/host_key.pub")" >> "$HOME/.ssh/known_hosts"
  s_opts=("${sftp_opts[@]:2}" -P "$sport")
  x_opts=("${ssh_opts[@]:2}" -p "$sport")
  echo
  echo "RTT $rtt ms"

  ups=(); downs=()
  for _ in $(seq "$runs"); do
    ups+=("$(python3 Benchmarks/forward_load.py throughput "$tport" "$mib")")
    downs+=("$(python3 Benchmarks/forward_load.py download "$tport" "$mib")")
  done
  ceiling_up=$(mbs "$bytes" "$(median "${ups[@]}")"); ceiling_down=$(mbs "$bytes" "$(median "${downs[@]}")")
  echo "  path ceiling (raw TCP)             client -> server $ceiling_up MB/s, server -> client $ceiling_down MB/s"

  th() { "$termhost" sftp "$@" -P "$sport" > /dev/null; }
  os() { printf '%s\n' "$1" | sftp "${s_opts[@]}" -q -b - "$user@127.0.0.1" > /dev/null; }
  ts=(); o=()
  for _ in $(seq "$runs"); do
    ts+=("$(timed th get "$user@127.0.0.1:$data/big" "$out/big.t")"); check_big "$out/big.t"
    o+=("$(timed os "get $data/big $out/big.o")"); check_big "$out/big.o"
  done
  row "SFTP download $mib MiB" "$bytes" "$(median "${ts[@]}")" "$(median "${o[@]}")" "$ceiling_down"
  ts=(); o=()
  for _ in $(seq "$runs"); do
    ts+=("$(timed th put "$data/big" "$user@127.0.0.1:$out/big.t")"); check_big "$out/big.t"
    o+=("$(timed os "put $data/big $out/big.o")"); check_big "$out/big.o"
  done
  row "SFTP upload $mib MiB" "$bytes" "$(median "${ts[@]}")" "$(median "${o[@]}")" "$ceiling_up"
  if [ "$files" -gt 0 ]; then
  ts=(); o=()
  for _ in $(seq "$runs"); do
    ts+=("$(timed th get -r "$user@127.0.0.1:$data/many" "$out/many.t")"); check_many "$out/many.t"
    o+=("$(timed os "get -r $data/many $out/many.o")"); check_many "$out/many.o"
  done
  row "SFTP download $files x 4 KiB" "$((files * 4096))" "$(median "${ts[@]}")" "$(median "${o[@]}")" ""
  ts=(); o=()
  for _ in $(seq "$runs"); do
    mkdir -p "$out/up.t" "$out/up.o"
    ts+=("$(timed th put -r "$data/many" "$user@127.0.0.1:$out/up.t")"); check_many "$out/up.t/many"
    o+=("$(timed os "put -r $data/many $out/up.o")"); check_many "$out/up.o/many"
  done
  row "SFTP upload $files x 4 KiB" "$((files * 4096))" "$(median "${ts[@]}")" "$(median "${o[@]}")" ""
  fi

  lt=$(freeport); lo=$(freeport)
  "$termhost" forward run "$user@127.0.0.1:$sport" -L "$lt:127.0.0.1:$target" > "$work/forward.$rtt.out" 2>&1 & fpid=$!; pids+=($fpid)
  ssh "${x_opts[@]}" -N -L "$lo:127.0.0.1:$target" "$user@127.0.0.1" & spid=$!; pids+=($spid)
  wait_port "$lt"; wait_port "$lo"
  # termhost binds its listener at once and refuses clients until its connection is up (ssh
  # binds only then): wait for the rule to say it is active, or the first stream is refused.
  for _ in $(seq 600); do grep -q ": active, listening on" "$work/forward.$rtt.out" && break; sleep 0.05; done
  grep -q ": active, listening on" "$work/forward.$rtt.out" || { echo "the forward did not become active:" >&2; cat "$work/forward.$rtt.out" >&2; exit 1; }
  for way in throughput download; do
    ts=(); o=()
    for _ in $(seq "$runs"); do
      ts+=("$(python3 Benchmarks/forward_load.py "$way" "$lt" "$mib")")
      o+=("$(python3 Benchmarks/forward_load.py "$way" "$lo" "$mib")")
    done
    if [ "$way" = throughput ]; then
      row "-L client -> server $mib MiB" "$bytes" "$(median "${ts[@]}")" "$(median "${o[@]}")" "$ceiling_up"
    else
      row "-L server -> client $mib MiB" "$bytes" "$(median "${ts[@]}")" "$(median "${o[@]}")" "$ceiling_down"
    fi
  done
  kill "$fpid" "$spid" 2>/dev/null || true

  # exec: the file to cat through stdin (stdin -> cat -> stdout) or named (stdout alone).
  exec_row() {
    local what=$1 through_stdin=$2 tcmd ocmd ts=() o=()
    if [ "$through_stdin" = yes ]; then
      tcmd='"$1" exec "$2" -- cat < "$3" > "$4"'; ocmd='in=$1 to=$2; shift 2; ssh "$@" cat < "$in" > "$to"'
    else
      tcmd='"$1" exec "$2" -- cat "$3" > "$4"'; ocmd='in=$1 to=$2; shift 2; ssh "$@" cat "$in" > "$to"'
    fi
    for _ in $(seq "$runs"); do
      ts+=("$(timed sh -c "$tcmd" sh "$termhost" "$user@127.0.0.1:$sport" "$data/big" "$out/exec.t")"); check_big "$out/exec.t"
      o+=("$(timed sh -c "$ocmd" sh "$data/big" "$out/exec.o" "${x_opts[@]}" "$user@127.0.0.1")"); check_big "$out/exec.o"
    done
    row "$what $mib MiB" "$bytes" "$(median "${ts[@]}")" "$(median "${o[@]}")" "$ceiling_down"
  }
  exec_row "exec stdin -> cat -> stdout" yes
  exec_row "exec stdout (cat FILE)" no
done
