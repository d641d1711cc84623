#!/usr/bin/env bash
# Installs what Termhost needs to build and test on Debian 12, if missing. Idempotent.
# The Swift toolchain itself (6.x, with swiftc and swift-build) must already be on PATH.
set -euo pipefail
# cmake, dpkg-dev, pkg-config and zlib1g-dev build libssh2 1.11 (Scripts/libssh2.sh); patchelf points the staged
# plugins at the copy staged beside them (Scripts/stage.sh). libcurl4-openssl-dev: the Assistant's model providers.
# help2man and lintian: the Debian package's man page and its check (Scripts/package-deb.sh, Tests/Packaging/deb.sh).
# python3-venv: the MCP client the tests drive `termhost mcp` with (below).
# libpq-dev: the Sync plugin's PostgreSQL backend; postgresql: the server the Sync tests and Benchmarks/sync.sh
# start themselves (a private data directory); openssl: the CLI those tests make the server's TLS certificates with.
# systemd: systemd-analyze, with which the daemon's tests check its user units (no systemd runs).
# python3-asyncssh: a server that is not OpenSSH and ends channels in another order (the exit status tests).
packages=(libssh2-1-dev libsqlite3-dev libffi-dev libssl-dev sqlite3 openssh-server openssh-client dropbear-bin make gcc g++ tmux procps python3 busybox
          cmake dpkg-dev pkg-config zlib1g-dev patchelf libcurl4-openssl-dev help2man lintian python3-venv
          libpq-dev postgresql openssl systemd python3-asyncssh)
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
# Debian 12's libssh2 is 1.10, which cannot sign with RSA SHA-2 (among others): build 1.11.1 from
# Debian 13's source package into .build, where Package.swift finds it. TERMHOST_SYSTEM_LIBSSH2=1
# keeps the system's library (and Package.swift then ignores a private one already built).
if [ "${TERMHOST_SYSTEM_LIBSSH2:-}" != 1 ] && dpkg --compare-versions "$(pkg-config --modversion libssh2)" lt 1.11; then
  "$(dirname "$0")/libssh2.sh"
fi
# The MCP tests drive `termhost mcp` with the official MCP client, PyPI's `mcp` package, in a
# venv of its own (Debian's python3 refuses pip installs outside one).
venv="$(dirname "$0")/../.build/mcp-client"
if ! "$venv/bin/python3" -c 'import mcp.client.stdio' 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check mcp
fi
