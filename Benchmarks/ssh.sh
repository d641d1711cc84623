#!/usr/bin/env bash
# SSH figures, side by side with OpenSSH, against a local sshd on loopback (release build).
#  1. connect, authenticate (ed25519) and run `true`: termhost exec vs ssh
#  2. stream N MiB through a remote `cat` (stdin -> cat -> stdout): termhost exec vs ssh, the
#     median of `runs` alternating runs (single runs vary by ±10% here)
#  3. keystroke echo round trip in an interactive terminal: termhost ssh vs ssh -tt
#  4. 10 x `exec HOST -- true` in a row, the first one connecting: through the daemon, which
#     keeps the connection (ConnectionPool), vs ssh with ControlMaster=auto and ControlPersist;
#     goal: 1.0x or less. Each round starts cold on both sides (daemon restarted, master ended).
# Which build, and the same cipher for both (aes128-ctr, hmac-sha2-256) or each side's default:
# see sshd-env.sh.
# Usage: [TERMHOST_BENCH_PREFIX=DIR] [TERMHOST_BENCH_CIPHERS=shared|default] Benchmarks/ssh.sh [runs] [MiB]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
mib=${2:-1024}
bench_cleanup='"$termhost" daemon stop >/dev/null 2>&1; ssh -O exit -o ControlPath="$work/cm.sock" x >/dev/null 2>&1'
source Benchmarks/sshd-env.sh

median_ms() { sort -n | python3 -c 'import sys; v=[float(x)/1e6 for x in sys.stdin]; print("%.1f" % v[len(v)//2])'; }
time_runs() { for _ in $(seq "$runs"); do s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $((e - s)); done | median_ms; }

echo "Connect + authenticate + true (median of $runs runs)"
t=$(time_runs "$termhost" exec "$user@127.0.0.1:$port" -- true)
o=$(time_runs ssh "${ssh_opts[@]}" "$user@127.0.0.1" true)
echo "  termhost exec  $t ms"
echo "  ssh            $o ms"
python3 -c "print('  ratio termhost/ssh: %.2fx' % ($t/$o))"

echo
echo "Stream $mib MiB through a remote cat (stdin -> cat -> stdout; median of $runs alternating runs)"
stream() { local s e; s=$(date +%s%N); head -c "${mib}M" /dev/zero | "$@" > /dev/null; e=$(date +%s%N); echo $((e - s)); }
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ts=(); os=()
for _ in $(seq "$runs"); do
  ts+=("$(stream "$termhost" exec "$user@127.0.0.1:$port" -- cat)")
  os+=("$(stream ssh "${ssh_opts[@]}" "$user@127.0.0.1" cat)")
done
tn=$(median "${ts[@]}"); on=$(median "${os[@]}")
echo "  ciphers: termhost $(negotiated libssh2); OpenSSH $(negotiated OpenSSH)"
python3 - "$mib" "$tn" "$on" <<'PY'
import sys
mib, t, o = int(sys.argv[1]), int(sys.argv[2]) / 1e9, int(sys.argv[3]) / 1e9
print("  termhost exec  %.2f s  %.0f MiB/s" % (t, mib / t))
print("  ssh            %.2f s  %.0f MiB/s" % (o, mib / o))
print("  ratio termhost/ssh (time): %.2fx" % (t / o))
PY

echo
echo "Keystroke echo round trip (a pseudo-terminal types one character, waits for its echo)"
printf '  termhost ssh   '; KEYSTROKE_MEDIAN_FILE=$work/t.ms python3 Benchmarks/keystroke_echo.py 200 "$termhost" ssh "$user@127.0.0.1:$port"
printf '  ssh -tt        '; KEYSTROKE_MEDIAN_FILE=$work/o.ms python3 Benchmarks/keystroke_echo.py 200 ssh -tt "${ssh_opts[@]}" "$user@127.0.0.1"
python3 -c "import sys; print('  ratio termhost/ssh (median): %.2fx' % (float(open(sys.argv[1]).read()) / float(open(sys.argv[2]).read())))" "$work/t.ms" "$work/o.ms"

echo
echo "10 x exec true in a row, the first one connecting (median of $runs rounds, each cold)"
export XDG_RUNTIME_DIR=$work/run
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
cm_opts=(-o ControlMaster=auto -o ControlPath="$work/cm.sock" -o ControlPersist=60)
ten() { local s e; s=$(date +%s%N); for _ in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null; done; e=$(date +%s%N); echo $((e - s)); }
ts=(); os=()
for _ in $(seq "$runs"); do
  "$termhost" daemon 2>> "$work/daemon.log" &
  for _ in $(seq 600); do "$termhost" daemon status >/dev/null 2>&1 && break; sleep 0.1; done
  ts+=("$(ten "$termhost" exec "$user@127.0.0.1:$port" -- true)")
  "$termhost" daemon stop >/dev/null 2>&1
  os+=("$(ten ssh "${ssh_opts[@]}" "${cm_opts[@]}" "$user@127.0.0.1" true)")
  ssh -O exit -o ControlPath="$work/cm.sock" x >/dev/null 2>&1 || true
done
tn=$(median "${ts[@]}"); on=$(median "${os[@]}")
python3 - "$tn" "$on" <<'PY'
import sys
t, o = int(sys.argv[1]) / 1e6, int(sys.argv[2]) / 1e6
print("  termhost exec (daemon)       %.0f ms" % t)
print("  ssh (ControlMaster=auto)     %.0f ms" % o)
print("  ratio termhost/ssh: %.2fx (goal: 1.0x or less)" % (t / o))
PY
