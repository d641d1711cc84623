#!/usr/bin/env bash
# Builds libssh2 1.11.1 from Debian 13 (trixie)'s source package into a private prefix
# (default .build/libssh2-1.11.1/{include,lib}), for a Debian 12 system whose own libssh2 is 1.10.
# Package.swift links the SSH and SFTP plugins against that prefix when it exists, and
# Scripts/stage.sh ships its libssh2.so.1 beside the plugins.
#
# Why from Debian's source package: it is signed (apt checks the .dsc and the tarballs against the
# trixie Sources index, whose InRelease is signed by the Debian archive key already on this
# machine) and carries Debian's security patches. Only a PRIVATE apt configuration knows about
# trixie (a sources file, lists and cache under a temporary directory), so the system never sees
# trixie binaries and nothing is upgraded.
#
# Termhost's own patches (Scripts/libssh2-patches/*.patch, in name order) are applied on top of
# Debian's: hmac-keyed-context.patch keys each direction's HMAC once instead of per packet
# (Docs/SSH.md, "Bulk data and the cipher"); sftp-write-size.patch lets an upload send write
# requests as large as the server allows (Docs/SFTP.md, "Speed"); whole-cipher-runs.patch hands
# the cipher whole runs of blocks instead of one 16-byte block per call (Docs/SSH.md, same
# section); exit-reported.patch records whether the server sent exit-status or exit-signal, so a
# channel closed without either is told from one that exited 0, and bounds an exit-signal's
# name by its packet (Docs/SSH.md, "termhost exec"); host-certificates.patch lets the handshake
# take an OpenSSH host certificate as the host key and exports a signature check for its CA
# (Docs/SSH.md, "The files read"); receive-window.patch lets a channel's receive window grow
# after it is open, libssh2's own reads keeping it advertised (Docs/SSH.md, "Receive windows").
#
# Idempotent: nothing is fetched or built when the prefix already holds 1.11.1 built with the
# same patches (their SHA-256, recorded in PREFIX/PATCHES).
# Needs: apt-get, dpkg-source (dpkg-dev), patch, cmake, cc, libssl-dev, zlib1g-dev (Scripts/setup.sh).
# Usage: Scripts/libssh2.sh [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.11.1
prefix=${1:-.build/libssh2-$version}

patches=(Scripts/libssh2-patches/*.patch)
patches_id=$(cat "${patches[@]}" | sha256sum | cut -d' ' -f1)

installed_version() {
  sed -n 's/^#define LIBSSH2_VERSION *"\(.*\)"$/\1/p' "$prefix/include/libssh2.h" 2>/dev/null || true
}
if [ "$(installed_version)" = "$version" ] && [ -f "$prefix/lib/libssh2.so.1" ] \
   && [ "$(cat "$prefix/PATCHES" 2>/dev/null)" = "$patches_id" ]; then
  exit 0
fi
for tool in apt-get dpkg-source patch cmake cc; do
  command -v "$tool" >/dev/null || { echo "libssh2.sh: $tool is missing; run Scripts/setup.sh" >&2; exit 1; }
done

started=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/termhost-libssh2.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt downloads as the unprivileged _apt user when run as root: let it write where it downloads.
chmod 0755 "$work"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/src"
if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then
  chown _apt "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$work/sources.list" <<EOF
deb-src [signed-by=$keyring] http://deb.debian.org/debian trixie main
deb-src [signed-by=$keyring] http://deb.debian.org/debian-security trixie-security main
EOF
apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
             -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")

echo "libssh2.sh: fetching Debian trixie's libssh2 source package"
apt-get -qq "${apt_private[@]}" update
(cd "$work/src" && apt-get -qq "${apt_private[@]}" source libssh2 >/dev/null)
dsc=$(cd "$work/src" && ls libssh2_*.dsc)
case "$dsc" in
  libssh2_"$version"-*) ;;
  *) echo "libssh2.sh: trixie offers $dsc, not libssh2 $version; update this script" >&2; exit 1 ;;
esac

for p in "${patches[@]}"; do
  patch -s -p1 -d "$work/src/libssh2-$version" <"$p" || { echo "libssh2.sh: $p does not apply" >&2; exit 1; }
done

echo "libssh2.sh: building ${dsc%.dsc} with ${#patches[@]} Termhost patch(es) (OpenSSL, zlib) into $prefix"
cmake -S "$work/src/libssh2-$version" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$work/install" -DCMAKE_INSTALL_LIBDIR=lib \
  -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF \
  -DCRYPTO_BACKEND=OpenSSL -DENABLE_ZLIB_COMPRESSION=ON >"$work/cmake.log" 2>&1 \
  || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/build" --parallel "$(nproc)" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
cmake --install "$work/build" >/dev/null

# Swap the finished prefix in whole, so an interrupted run never leaves a half-filled one.
rm -rf "$prefix.new"
mkdir -p "$prefix.new"
cp -a "$work/install/include" "$work/install/lib" "$prefix.new/"
echo "${dsc%.dsc} from Debian trixie, sha256 of the .dsc: $(sha256sum "$work/src/$dsc" | cut -d' ' -f1)" \
  >"$prefix.new/SOURCE"
echo "$patches_id" >"$prefix.new/PATCHES"
rm -rf "$prefix"
mv "$prefix.new" "$prefix"
echo "libssh2.sh: libssh2 $(installed_version) in $prefix ($(( $(date +%s) - started )) s)"
