#!/usr/bin/env bash
# Client instructions per MiB, side by side with OpenSSH, against a local sshd on loopback
# (release build; which build and cipher: see sshd-env.sh). Instruction counts, not seconds:
# they hold still on a loaded machine where wall-clock and CPU times do not.
# Each figure is the instructions the client executed (valgrind's cachegrind, no cache
# simulation; termhost's process, OpenSSH's sftp and the ssh it starts), for an N MiB transfer
# minus those for an N/8 MiB one, divided by the difference: start-up, key exchange and
# authentication cancel out, what is left is the cost per MiB moved. Valgrind's virtual CPU
# has AES-NI but not SHA-NI: HMAC-SHA-256 counts several times what the real CPU executes, for
# both clients alike.
#  1. SFTP download and upload of one file
#  2. exec, received: a remote `cat` of the file to /dev/null
#  3. exec, sent: the file on stdin to a remote `cat > /dev/null`
# Usage: Benchmarks/client-cpu.sh [MiB]   (default 64; at least 8)
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-64}
[ "$mib" -ge 8 ] 2>/dev/null || { echo "MiB: a whole number, at least 8" >&2; exit 2; }
small=$((mib / 8))
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
source Benchmarks/sshd-env.sh

head -c "${mib}M" /dev/urandom > "$work/big"
head -c "${small}M" "$work/big" > "$work/small"

# Runs a command under cachegrind (children too: OpenSSH's sftp runs ssh); prints the
# instructions of every process it ran, summed.
instructions() {
  local logs=$work/vg.$RANDOM
  mkdir "$logs"
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --trace-children=yes \
    --log-file="$logs/%p" "$@" > /dev/null 2>&1
  cat "$logs"/* | awk '/I +refs:/ { gsub(",", "", $NF); sum += $NF } END { printf "%d\n", sum }'
  rm -rf "$logs"
}

# Per MiB: the run with the large file minus the run with the small one. $1 is the function
# that makes one transfer, given the file's name (big or small).
per_mib() {
  local large few
  large=$(instructions_of "$@" big)
  few=$(instructions_of "$@" small)
  echo $(( (large - few) / (mib - small) ))
}
instructions_of() { local how=$1 file=$2; instructions bash -c "$(declare -f "$how"); $how \"\$@\"" _ "$file"; }

# Each operation: termhost's and OpenSSH's, given the file's name under $work.
export termhost work port user
export ssh_list="${ssh_opts[*]}" sftp_list="${sftp_opts[*]}"
t_get() { rm -f "$work/out"; exec "$termhost" sftp get "$user@127.0.0.1:$work/$1" "$work/out" -P "$port"; }
o_get() { rm -f "$work/out"; echo "get $work/$1 $work/out" | exec sftp $sftp_list -q -b - "$user@127.0.0.1"; }
t_put() { exec "$termhost" sftp put "$work/$1" "$user@127.0.0.1:$work/out.$1.t" -P "$port"; }
o_put() { echo "put $work/$1 $work/out.$1.o" | exec sftp $sftp_list -q -b - "$user@127.0.0.1"; }
t_recv() { exec "$termhost" exec "$user@127.0.0.1:$port" -- cat "$work/$1"; }
o_recv() { exec ssh $ssh_list "$user@127.0.0.1" cat "$work/$1"; }
t_send() { exec "$termhost" exec "$user@127.0.0.1:$port" -- "cat > /dev/null" < "$work/$1"; }
o_send() { exec ssh $ssh_list "$user@127.0.0.1" "cat > /dev/null" < "$work/$1"; }

# Once untimed, so that the runs measured find the plugins' probe cache as each other do.
(t_get small) > /dev/null 2>&1

echo "Client instructions per MiB ($mib MiB minus $small MiB runs; cachegrind)"
printf '  %-24s %14s %14s %10s   %s\n' "" termhost OpenSSH ratio "cipher, MAC (termhost; OpenSSH)"
row() {  # what termhost-function openssh-function
  local t o tc oc
  t=$(per_mib "$2"); tc=$(negotiated libssh2)
  o=$(per_mib "$3"); oc=$(negotiated OpenSSH)
  python3 - "$1" "$t" "$o" "$tc" "$oc" <<'PY'
import sys
what, t, o, tc, oc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
print("  %-24s %12.1f M %12.1f M %10.2f   %s; %s" % (what, t / 1e6, o / 1e6, t / o, tc, oc))
PY
}
row "SFTP download" t_get o_get
row "SFTP upload" t_put o_put
row "exec, received (cat)" t_recv o_recv
row "exec, sent (stdin)" t_send o_send
echo "  ratio: termhost's instructions per MiB / OpenSSH's (below 1 is cheaper)"
