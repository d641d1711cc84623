#!/usr/bin/env bash
# SFTP figures, side by side with OpenSSH sftp, against a local sshd on loopback (release build;
# which build, and the same cipher for both or each side's default: see sshd-env.sh):
#  1. download and upload of one N MiB file (default 1024)
#  2. download and upload of a directory of 2,000 files of 4 KiB
# Every copy is checked with sha256sum before its time counts. Each figure is the median of
# `runs` (default 3) alternating runs of the two tools: single runs vary by ±20% here.
# Usage: [TERMHOST_BENCH_PREFIX=DIR] [TERMHOST_BENCH_CIPHERS=shared|default] Benchmarks/sftp.sh [MiB] [files] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-1024}
files=${2:-2000}
runs=${3:-3}
source Benchmarks/sshd-env.sh

source Benchmarks/transfer-data.sh

ns() { date +%s%N; }
run_termhost() { "$termhost" sftp "$@" -P "$port" > /dev/null; }
run_sftp() { printf '%s\n' "$1" | sftp "${sftp_opts[@]}" -q -b - "$user@127.0.0.1" > /dev/null; }

# Prints seconds taken by a command. Dirty pages are flushed first (untimed), so neither tool
# pays for writing back the test data or the other's copy: without it, whichever went first
# after creating 1 GiB took up to half again as long here.
timed() { local s e; sync; s=$(ns); "$@"; e=$(ns); echo $(( e - s )); }

report() {  # what bytes termhost_ns sftp_ns
  python3 - "$@" "$runs" <<'PY'
import sys
what, size, t, o = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1e9, int(sys.argv[4]) / 1e9
print("%s (median of %s runs)" % (what, sys.argv[5]))
print("  termhost sftp  %6.2f s  %7.1f MB/s" % (t, size / t / 1e6))
print("  OpenSSH sftp   %6.2f s  %7.1f MB/s" % (o, size / o / 1e6))
print("  ratio (termhost throughput / OpenSSH): %.2f" % (o / t))
PY
}
ciphers_used() { echo "  ciphers: termhost $(negotiated libssh2); OpenSSH $(negotiated OpenSSH)"; }

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# Each figure is the median of `runs` alternating runs of the two tools.
ts=(); os=()
for _ in $(seq "$runs"); do
  ts+=("$(timed run_termhost get "$user@127.0.0.1:$data/big" "$out/big.t")"); check_big "$out/big.t"
  os+=("$(timed run_sftp "get $data/big $out/big.o")"); check_big "$out/big.o"
done
report "Download of $mib MiB" $((mib * 1048576)) "$(median "${ts[@]}")" "$(median "${os[@]}")"
ciphers_used

ts=(); os=()
for _ in $(seq "$runs"); do
  ts+=("$(timed run_termhost put "$data/big" "$user@127.0.0.1:$out/big.t")"); check_big "$out/big.t"
  os+=("$(timed run_sftp "put $data/big $out/big.o")"); check_big "$out/big.o"
done
report "Upload of $mib MiB" $((mib * 1048576)) "$(median "${ts[@]}")" "$(median "${os[@]}")"

ts=(); os=()
for _ in $(seq "$runs"); do
  ts+=("$(timed run_termhost get -r "$user@127.0.0.1:$data/many" "$out/many.t")"); check_many "$out/many.t"
  os+=("$(timed run_sftp "get -r $data/many $out/many.o")"); check_many "$out/many.o"
done
report "Download of $files files of 4 KiB" $((files * 4096)) "$(median "${ts[@]}")" "$(median "${os[@]}")"

ts=(); os=()
for _ in $(seq "$runs"); do
  mkdir -p "$out/up.t" "$out/up.o"
  ts+=("$(timed run_termhost put -r "$data/many" "$user@127.0.0.1:$out/up.t")"); check_many "$out/up.t/many"
  os+=("$(timed run_sftp "put -r $data/many $out/up.o")"); check_many "$out/up.o/many"
done
report "Upload of $files files of 4 KiB" $((files * 4096)) "$(median "${ts[@]}")" "$(median "${os[@]}")"
