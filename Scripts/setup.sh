#!/usr/bin/env bash
# Installs what Termhost needs to build and test on Debian 12, if missing. Idempotent.
# The Swift toolchain itself (6.x, with swiftc and swift-build) must already be on PATH.
set -euo pipefail
packages=(libssh2-1-dev libsqlite3-dev libffi-dev libssl-dev sqlite3 openssh-server openssh-client make gcc g++ tmux procps python3 busybox)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The SSH tests log in with a password and keyboard-interactive (PAM) as this user.
if [ "$(id -u)" -eq 0 ] && ! id termhost-test >/dev/null 2>&1; then
  useradd -m -s /bin/sh termhost-test
  echo 'termhost-test:Termhost-Test-Pw1' | chpasswd
fi
command -v swift >/dev/null || { echo "setup: no Swift toolchain on PATH (Swift 6.x is required)" >&2; exit 1; }
