#!/usr/bin/env bash
# Metrics figures against a local sshd on loopback (release build unless --debug):
#  1. remote CPU cost of one sample (the loop's body: one head of six procfs files) against
#     `cat` of the same files, and of one detailed sample (plus df and every process's stat)
#  2. bytes transferred per sample, from the sampler's own count
#  3. one process sampling 50 monitors of the local sshd every second: CPU % of termhost and
#     of the remote side (sshd and the loops), and local CPU time per sample per host
# Usage: Benchmarks/metrics.sh [--debug] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
bench_debug=0
if [ "${1:-}" = "--debug" ]; then shift; bench_debug=1; fi
seconds=${1:-30}
serve_pid=
bench_cleanup='[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true'
# 50 sessions at once on one sshd.
sshd_extra=$'MaxSessions 100\nMaxStartups 100'
source Benchmarks/sshd-env.sh

# 1. Remote cost: the loop body N times in sh, CPU of sh and its children (rusage).
n=500
cpu_of() { python3 - "$1" <<'PY'
import resource, subprocess, sys
subprocess.run(["sh", "-c", sys.argv[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/proc", check=False)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{(r.ru_utime + r.ru_stime):.3f}")
PY
}
loop() { echo "i=0; while [ \$i -lt $n ]; do $1; i=\$((i+1)); done"; }
base=$(cpu_of "$(loop 'echo @@sample; head -n 4096 uptime stat meminfo loadavg net/dev diskstats 2>/dev/null; echo @@blocks; echo /sys/block/*; echo @@end')")
cat=$(cpu_of "$(loop 'cat uptime stat meminfo loadavg net/dev diskstats')")
detail=$(cpu_of "$(loop 'echo @@sample; head -n 4096 uptime stat meminfo loadavg net/dev diskstats 2>/dev/null; echo /sys/block/*; timeout 2 df -P -k >/dev/null 2>&1; head -n 1 [0-9]*/stat [0-9]*/statm 2>/dev/null; echo @@end')")
procs=$(ls -d /proc/[0-9]* | wc -l)
python3 - "$n" "$base" "$cat" "$detail" "$procs" <<'PY'
import sys
n, base, cat, detail, procs = int(sys.argv[1]), *map(float, sys.argv[2:5]), sys.argv[5]
print(f"remote CPU per sample (sh, {n} runs): base {base/n*1000:.2f} ms, cat of the same files {cat/n*1000:.2f} ms, "
      f"with details (df + {procs} processes) {detail/n*1000:.2f} ms")
PY

# 2 and 3. One `metrics serve` process with 50 monitors of this sshd.
for i in $(seq 1 50); do
  "$termhost" hosts add "m$i" 127.0.0.1 --port "$port" --user "$user" --identity "$HOME/.ssh/id_ed25519" >/dev/null
  "$termhost" metrics add "m$i" >/dev/null
done
"$termhost" metrics serve --listen 127.0.0.1:0 > "$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
sshd_pid=$(cat "$work/sshd.pid")
python3 - "$serve_pid" "$sshd_pid" "$seconds" "$work/serve.out" <<'PY'
import os, re, sys, time, urllib.request
serve, sshd, seconds, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tick = os.sysconf("SC_CLK_TCK")
def url():
    for _ in range(100):
        m = re.search(r"(http://\S+/metrics)", open(out).read())
        if m: return m.group(1)
        time.sleep(0.1)
    sys.exit("serve did not start")
def scrape(u):
    return urllib.request.urlopen(u, timeout=5).read().decode()
def cpu(pid):
    try:
        s = open(f"/proc/{pid}/stat").read()
        f = s[s.rindex(")") + 2:].split()
        return (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / tick   # self + waited-for children
    except (OSError, ValueError): return 0.0
def tree(root):
    parent = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                s = open(f"/proc/{p}/stat").read(); parent[int(p)] = int(s[s.rindex(")") + 2:].split()[1])
            except OSError: pass
    def under(p):
        for _ in range(64):
            p = parent.get(p)
            if p is None: return False
            if p == root: return True
        return False
    return [p for p in parent if under(p)]
u = url()
deadline = time.time() + 120
while time.time() < deadline:
    text = scrape(u)
    live = len(re.findall(r'^termhost_metrics_up\{host="m\d+"\} 1$', text, re.M))
    if live == 50: break
    time.sleep(1)
print(f"50 monitors live after start: {live}/50")
if live < 50:
    sys.exit(f"only {live} of 50 monitors became live within 120 s: the figures would not mean what they say")
sizes = [float(v) for v in re.findall(r'^termhost_metrics_sample_bytes\{host="m\d+"\} (\S+)$', text, re.M)]
print(f"bytes per sample (base metrics): {sum(sizes)/max(len(sizes),1):.0f}")
remote0 = sum(cpu(p) for p in tree(sshd)); local0 = cpu(serve); t0 = time.time()
time.sleep(seconds)
remote1 = sum(cpu(p) for p in tree(sshd)); local1 = cpu(serve); t1 = time.time()
elapsed = t1 - t0
print(f"termhost (50 monitors, 1 s interval): {100*(local1-local0)/elapsed:.1f} % of one core over {elapsed:.0f} s "
      f"({(local1-local0)/(50*elapsed)*1000:.2f} ms CPU per sample per host)")
print(f"remote side (sshd sessions + 50 loops): {100*(remote1-remote0)/elapsed:.1f} % of one core "
      f"(approximate: loops that exited are not counted)")
PY
