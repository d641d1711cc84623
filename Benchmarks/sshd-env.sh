# Sourced by the benchmark scripts: stages a release build, starts a private sshd on loopback,
# and sets up OpenSSH client options for the same server.
# Sets: termhost, work, port, user, ssh_opts (ssh), sftp_opts (sftp), and an EXIT trap.
# Which build and which cipher, from the environment:
#   TERMHOST_BENCH_PREFIX=DIR   a staged tree to measure instead of staging one, e.g. one built
#                               on the system's libssh2 1.10:
#                               TERMHOST_SYSTEM_LIBSSH2=1 Scripts/stage.sh --release \
#                                 --scratch-path .build/system-libssh2 .build/bench-termhost-1.10
#   TERMHOST_BENCH_CIPHERS=shared (default) the server offers only aes128-ctr and hmac-sha2-256,
#                               which both clients and both libssh2 versions have, so both use
#                               the same cipher and MAC;
#                        =default the server offers OpenSSH's defaults and each client proposes
#                               its own (OpenSSH: chacha20-poly1305; termhost on libssh2 1.11:
#                               aes128-gcm@openssh.com, on 1.10: what libssh2 proposes first).
#   TERMHOST_BENCH_POLICY=FILE  an operator policy for termhost (Docs/Operators.md), e.g. to
#                               measure under a feature setting; default: none.
# Optional, set before sourcing: bench_debug=1 (stage a debug build), sshd_extra (more
# sshd_config lines), bench_cleanup (shell code the EXIT trap runs first).
ciphers=${TERMHOST_BENCH_CIPHERS:-shared}
case $ciphers in shared|default) ;; *) echo "TERMHOST_BENCH_CIPHERS: shared or default, not $ciphers" >&2; exit 2;; esac
if [ -n "${TERMHOST_BENCH_PREFIX:-}" ]; then termhost=$(cd "$TERMHOST_BENCH_PREFIX" && pwd)/bin/termhost
elif [ "${bench_debug:-0}" = 1 ]; then Scripts/stage.sh .build/bench-termhost >/dev/null; termhost=$PWD/.build/bench-termhost/bin/termhost
else Scripts/stage.sh --release .build/bench-termhost >/dev/null; termhost=$PWD/.build/bench-termhost/bin/termhost; fi
[ -x "$termhost" ] || { echo "no termhost at $termhost" >&2; exit 2; }
work=$(mktemp -d)
trap 'eval "${bench_cleanup:-}" || true; kill $(cat "$work/sshd.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
unset SSH_AUTH_SOCK
export HOME=$work/home XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
export TERMHOST_POLICY=${TERMHOST_BENCH_POLICY:+$(readlink -f "$TERMHOST_BENCH_POLICY")}
TERMHOST_POLICY=${TERMHOST_POLICY:-$work/none.json}
mkdir -p "$HOME/.ssh"
ssh-keygen -q -t ed25519 -N "" -f "$work/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$HOME/.ssh/id_ed25519"
cp "$HOME/.ssh/id_ed25519.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel DEBUG1
$([ "$ciphers" = shared ] && printf 'Ciphers aes128-ctr\nMACs hmac-sha2-256\n')
Subsystem sftp /usr/lib/openssh/sftp-server
${sshd_extra:-}
CFG
# As root, sshd runs with an empty home of its own mounted over the real one (a private mount
# namespace), so the remote shell does not run this machine's ~/.bashrc in the timed commands.
mkdir -p "$work/remote-home"
if [ "$(id -u)" -eq 0 ] && [ -x /usr/bin/unshare ]; then
  mkdir -p /run/sshd
  /usr/bin/unshare --mount --propagation private -- /bin/sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' \
    sh "$work/remote-home" "$(getent passwd "$(id -u)" | cut -d: -f6)" /usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
else
  /usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
fi
sleep 0.5
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/host_key.pub")" > "$HOME/.ssh/known_hosts"
user=$(id -un)
# ssh reads ~ from the password database, not $HOME: name its files explicitly.
ssh_opts=(-p "$port" -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$HOME/.ssh/known_hosts"
          -i "$HOME/.ssh/id_ed25519")
# sftp takes the port as -P and the options through to ssh.
sftp_opts=(-P "$port" -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$HOME/.ssh/known_hosts"
           -i "$HOME/.ssh/id_ed25519")
if [ "$ciphers" = shared ]; then
  ssh_opts+=(-c aes128-ctr -m hmac-sha2-256)
  sftp_opts+=(-c aes128-ctr -o MACs=hmac-sha2-256)
fi

# The libssh2 the staged SSH plugin loads, and its version (asked of the library itself).
libssh2_file=$(ldd "$(dirname "$termhost")/../lib/termhost/plugins/org.termhost.ssh/libSSHPlugin.so" | awk '$1 == "libssh2.so.1" { print $3 }')
libssh2_version=$(python3 -c 'import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).libssh2_version; f.restype = ctypes.c_char_p; print(f(0).decode())' "$libssh2_file")
echo "termhost: $termhost, libssh2 $libssh2_version ($libssh2_file); ciphers: $ciphers"

# What the last connection of a client (libssh2: termhost; OpenSSH) negotiated with the sshd,
# "cipher MAC", from the server's log (the first kex line after that client's version line).
negotiated() {
  awk -v who="$1" '/remote software version/ { mine = index($0, "version " who) > 0 }
                   mine && /kex: client->server cipher:/ { used = $5 " " $7; mine = 0 }
                   END { print used }' "$work/sshd.log"
}
