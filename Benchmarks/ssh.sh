#!/usr/bin/env bash
# SSH figures, side by side with OpenSSH, against a local sshd on loopback (release build).
#  1. connect, authenticate (ed25519) and run `true`: termhost exec vs ssh
#  2. stream N MiB through a remote `cat` (stdin -> cat -> stdout): termhost exec vs ssh, the
#     median of `runs` alternating runs (single runs vary by ±10% here)
#  3. keystroke echo round trip in an interactive terminal: termhost ssh vs ssh -tt
# Which build, and the same cipher for both (aes128-ctr, hmac-sha2-256) or each side's default:
# see sshd-env.sh.
# Usage: [TERMHOST_BENCH_PREFIX=DIR] [TERMHOST_BENCH_CIPHERS=shared|default] Benchmarks/ssh.sh [runs] [MiB]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
mib=${2:-1024}
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
