#!/usr/bin/env bash
# Client CPU per GiB, side by side with OpenSSH, against a local sshd on loopback (release
# build, same cipher and MAC, see sshd-env.sh). Where sftp.sh and ssh.sh say how fast, this
# says what each byte costs the client: user and system CPU seconds of the client process and
# its children (OpenSSH's sftp counts its ssh), scaled to 1 GiB.
#  1. SFTP download and upload of one N MiB file (default 512)
#  2. N MiB from a remote `cat` of that file to /dev/null (exec, no SFTP)
# Usage: Benchmarks/cpu.sh [MiB]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-512}
source Benchmarks/sshd-env.sh

head -c "${mib}M" /dev/urandom > "$work/big"

# Runs a command; prints "wall user sys" in seconds, the CPU of it and every child it waited for.
cpu() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.3f %.3f" % (wall, r.ru_utime, r.ru_stime))
PY
}

report() {  # what termhost-figures openssh-figures
  python3 - "$mib" "$@" <<'PY'
import sys
mib, what = int(sys.argv[1]), sys.argv[2]
t = [float(x) for x in sys.argv[3].split()]
o = [float(x) for x in sys.argv[4].split()]
per = 1024 / mib
print(what)
for name, (wall, user, system) in (("termhost", t), ("OpenSSH ", o)):
    print("  %s  %5.2f s wall  CPU per GiB: %5.2f s user + %5.2f s system = %5.2f s"
          % (name, wall, user * per, system * per, (user + system) * per))
print("  client CPU per byte, termhost / OpenSSH: %.2f" % ((t[1] + t[2]) / (o[1] + o[2])))
PY
}

t=$(cpu "$termhost" sftp get "$user@127.0.0.1:$work/big" "$work/t.get" -P "$port"); rm -f "$work/t.get"
o=$(cpu sh -c "echo 'get $work/big $work/o.get' | sftp ${sftp_opts[*]} -q -b - $user@127.0.0.1"); rm -f "$work/o.get"
report "SFTP download of $mib MiB" "$t" "$o"

t=$(cpu "$termhost" sftp put "$work/big" "$user@127.0.0.1:$work/t.put" -P "$port"); rm -f "$work/t.put"
o=$(cpu sh -c "echo 'put $work/big $work/o.put' | sftp ${sftp_opts[*]} -q -b - $user@127.0.0.1"); rm -f "$work/o.put"
report "SFTP upload of $mib MiB" "$t" "$o"

t=$(cpu "$termhost" exec "$user@127.0.0.1:$port" -- cat "$work/big")
o=$(cpu ssh "${ssh_opts[@]}" "$user@127.0.0.1" cat "$work/big")
report "$mib MiB from a remote cat (exec)" "$t" "$o"
