#!/usr/bin/env bash
# Host-key lookup in a large known_hosts, side by side with OpenSSH: connect, authenticate and
# run `true` against a local sshd with a known_hosts of N lines (default 20,000), all hashed as
# `ssh-keygen -H` writes them, the server's own line last (every line is read before it is found).
# Both clients read the same file. A 1-line file gives the baseline of a connection without it.
# Usage: Benchmarks/known_hosts.sh [runs] [lines]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
lines=${2:-20000}
source Benchmarks/sshd-env.sh

median_ms() { sort -n | python3 -c 'import sys; v=[float(x)/1e6 for x in sys.stdin]; print("%.1f" % v[len(v)//2])'; }
time_runs() { for _ in $(seq "$runs"); do s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $((e - s)); done | median_ms; }

# N-1 hashed lines for other hosts (ed25519 keys of random bytes: well-formed blobs), then the
# server's line, hashed too.
cp "$HOME/.ssh/known_hosts" "$work/one_line"
python3 - "$lines" "$port" "$(cut -d' ' -f2 "$work/host_key.pub")" > "$work/big" <<'PY'
import base64, hashlib, hmac, os, struct, sys
lines, port, server_key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def hashed(name):
    salt = os.urandom(20)
    return "|1|%s|%s" % (base64.b64encode(salt).decode(), base64.b64encode(hmac.new(salt, name.encode(), hashlib.sha1).digest()).decode())
def blob():
    t = b"ssh-ed25519"
    return base64.b64encode(struct.pack(">I", len(t)) + t + struct.pack(">I", 32) + os.urandom(32)).decode()
out = sys.stdout
for i in range(lines - 1):
    out.write("%s ssh-ed25519 %s\n" % (hashed("host%d.example.com" % i), blob()))
out.write("%s ssh-ed25519 %s\n" % (hashed("[127.0.0.1]:%s" % port), server_key))
PY
echo "known_hosts: $(wc -l < "$work/big") lines, $(wc -c < "$work/big") bytes, hashed; median of $runs runs"
for file in one_line big; do
  cp "$work/$file" "$HOME/.ssh/known_hosts"
  # Both clients must find the key (a failed run would time an error).
  "$termhost" exec "$user@127.0.0.1:$port" -- true
  ssh "${ssh_opts[@]}" "$user@127.0.0.1" true
  t=$(time_runs "$termhost" exec "$user@127.0.0.1:$port" -- true)
  o=$(time_runs ssh "${ssh_opts[@]}" "$user@127.0.0.1" true)
  label=$([ "$file" = big ] && echo "$lines lines" || echo "1 line")
  printf '  %-12s termhost exec %8s ms   ssh %8s ms   ratio %s\n' "$label" "$t" "$o" \
    "$(python3 -c "print('%.2fx' % ($t/$o))")"
done
