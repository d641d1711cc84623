# Sourced by the benchmark scripts: stages a release build, starts a private sshd on loopback
# offering only aes128-ctr and hmac-sha2-256 (libssh2 1.10 has no AES-GCM or chacha20, so both
# clients use the same cipher and MAC), and sets up OpenSSH client options for the same server.
# Sets: termhost, work, port, user, ssh_opts (ssh), sftp_opts (sftp), and an EXIT trap.
# Optional, set before sourcing: bench_debug=1 (stage a debug build), sshd_extra (more
# sshd_config lines), bench_cleanup (shell code the EXIT trap runs first).
if [ "${bench_debug:-0}" = 1 ]; then Scripts/stage.sh .build/bench-termhost >/dev/null
else Scripts/stage.sh --release .build/bench-termhost >/dev/null; fi
termhost=$PWD/.build/bench-termhost/bin/termhost
work=$(mktemp -d)
trap 'eval "${bench_cleanup:-}" || true; kill $(cat "$work/sshd.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
unset SSH_AUTH_SOCK
export HOME=$work/home XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
export TERMHOST_POLICY=$work/none.json
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
Ciphers aes128-ctr
MACs hmac-sha2-256
Subsystem sftp /usr/lib/openssh/sftp-server
${sshd_extra:-}
CFG
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd
/usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
sleep 0.5
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/host_key.pub")" > "$HOME/.ssh/known_hosts"
user=$(id -un)
# ssh reads ~ from the password database, not $HOME: name its files explicitly.
ssh_opts=(-p "$port" -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$HOME/.ssh/known_hosts"
          -i "$HOME/.ssh/id_ed25519" -c aes128-ctr -m hmac-sha2-256)
# sftp takes the port as -P and the options through to ssh.
sftp_opts=(-P "$port" -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$HOME/.ssh/known_hosts"
           -i "$HOME/.ssh/id_ed25519" -c aes128-ctr -o MACs=hmac-sha2-256)

