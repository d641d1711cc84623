#!/usr/bin/env bash
# The daemon's figures, side by side in one run, against a local sshd on loopback (release
# build; see sshd-env.sh). Not a test: figures, with the goals of Docs/Daemon.md beside them.
#  1. keystroke echo round trip: termhost ssh in the CLI (--in-process), termhost ssh --persist
#     (a persistent session in the daemon, through the attach protocol), termhost ssh run by the
#     daemon (a command in the daemon), tmux attach to a pane running OpenSSH's ssh; goal: the
#     persistent session within 1.1x of the CLI's
#  2. attach with a full ring (1 MiB): connect to the last replayed byte; goal: 50 ms or less
#  3. 50 sessions open: the daemon's memory and CPU
#  4. 20 mirrored clients on one session reading 64 MiB, then the same with one more client that
#     never reads; goal: the throughput with it at least 0.9 of that without
# Usage: Benchmarks/daemon.sh [keystrokes]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
keys=${1:-200}
command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 2; }
bench_cleanup='"$termhost" daemon stop >/dev/null 2>&1; tmux -S "$work/tmux.sock" kill-server 2>/dev/null'
source Benchmarks/sshd-env.sh
export XDG_RUNTIME_DIR=$work/run
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
target="$user@127.0.0.1:$port"
client() { python3 Benchmarks/daemon_client.py "$@"; }

"$termhost" daemon 2> "$work/daemon.log" &
for _ in $(seq 600); do "$termhost" daemon status >/dev/null 2>&1 && break; sleep 0.1; done
"$termhost" daemon status >/dev/null || { cat "$work/daemon.log"; exit 1; }

echo "Keystroke echo round trip (a pseudo-terminal types one character, waits for its echo)"
printf '  termhost ssh (CLI)         '; KEYSTROKE_MEDIAN_FILE=$work/direct.ms python3 Benchmarks/keystroke_echo.py "$keys" "$termhost" --in-process ssh "$target"
printf '  termhost ssh --persist     '; KEYSTROKE_MEDIAN_FILE=$work/persist.ms python3 Benchmarks/keystroke_echo.py "$keys" "$termhost" ssh --persist -q "$target"
printf '  termhost ssh (in daemon)   '; KEYSTROKE_MEDIAN_FILE=$work/indaemon.ms python3 Benchmarks/keystroke_echo.py "$keys" "$termhost" ssh "$target"
tmux -S "$work/tmux.sock" new-session -d -s bench -x 200 -y 50 ssh -tt "${ssh_opts[@]}" "$user@127.0.0.1"
printf '  tmux attach (OpenSSH ssh)  '; KEYSTROKE_MEDIAN_FILE=$work/tmux.ms python3 Benchmarks/keystroke_echo.py "$keys" tmux -S "$work/tmux.sock" attach -t bench
python3 - "$work" <<'PY'
import sys
d = lambda n: float(open(f"{sys.argv[1]}/{n}.ms").read())
print("  ratio persist/CLI: %.2fx (goal: 1.1x or less); in daemon/CLI: %.2fx; tmux/CLI: %.2fx"
      % (d("persist") / d("direct"), d("indaemon") / d("direct"), d("tmux") / d("direct")))
PY

echo
echo "Attach with a full ring"
id=$(client open "$target")
client fill "$id" 2000000
printf '  '; client attach-time "$id" 20
echo "  (goal: 50 ms or less)"

echo
echo "50 sessions"
printf '  before: '; client rss
for _ in $(seq 49); do client open "$target" > /dev/null; done
printf '  with 50 open: '; client rss
sleep 5
printf '  5 s later, idle: '; client rss

echo
echo "Mirrors (20 clients on one session, 64 MiB of output; three alternating rounds)"
for round in 1 2 3; do
  printf '  '; MIRROR_RATE_FILE=$work/without.$round client mirrors "$id" 20 64
  printf '  '; MIRROR_RATE_FILE=$work/with.$round client mirrors "$id" 20 64 --slow
done
python3 - "$work" <<'PY'
import statistics, sys
rate = lambda kind: statistics.median(float(open(f"{sys.argv[1]}/{kind}.{r}").read()) for r in (1, 2, 3))
print("  ratio with/without the slow client (medians): %.2f (goal: 0.9 or more)" % (rate("with") / rate("without")))
PY
