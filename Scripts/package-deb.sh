#!/usr/bin/env bash
# Builds termhost_<version>_amd64.deb with dpkg-deb, from a release build staged into /usr
# (Scripts/stage.sh --install --swift-runtime with DESTDIR):
#   /usr/bin/termhost, /usr/bin/termhost-probe
#   /usr/lib/termhost/plugins/...           the default plugin set, plugin-set.json and its
#                                           signature plugin-set.json.sig
#   /usr/lib/termhost/libssh2/libssh2.so.1  the private libssh2 1.11, when the build uses one
#   /usr/lib/termhost/swift/                the Swift runtime libraries the binaries link (the
#                                           toolchain's, so no toolchain is needed to run)
#   /usr/include/termhost/, /usr/share/pkgconfig/termhost-sdk.pc, /usr/share/termhost/  the SDK
#   /etc/termhost/allowed_signers           a conffile: the key that signed the set
#   /usr/share/man/man1/termhost.1.gz       made from `termhost --help` by help2man
#   /usr/share/doc/termhost/                copyright, changelog.Debian.gz
# Usage: Scripts/package-deb.sh [--signing-key PRIVATE_KEY] [--signer PRINCIPAL]
#                               [--plugins ID,ID...] [--policy FILE] [OUTDIR]
# --plugins: the plugins of the set (Scripts/stage.sh --plugins), by default the whole default set.
# --policy: ship FILE as the operator policy /etc/termhost/policy.json, a conffile like
# allowed_signers (Docs/Operators.md).
# The set is signed with PRIVATE_KEY (an OpenSSH private key), by default an Ed25519 key the
# script generates once in .build/deb/plugin-set-key. OUTDIR defaults to .build/deb.
# DEBEMAIL and DEBFULLNAME name the maintainer, as for Debian's own tools.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
key=.build/deb/plugin-set-key signer=termhost-packager policy=
plugins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --signing-key) key=$(cd "$caller" && realpath "$2"); shift 2 ;;
    --signer) signer=$2; shift 2 ;;
    --plugins) plugins=(--plugins "$2"); shift 2 ;;
    --policy) policy=$(cd "$caller" && realpath "$2"); shift 2 ;;
    -*) echo "package-deb.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
out=$(cd "$caller" && realpath -m "${1:-$PWD/.build/deb}")
maintainer="${DEBFULLNAME:-Termhost packagers} <${DEBEMAIL:-$(git config user.email || echo termhost-packagers@example.org)}>"

root=$PWD/.build/deb/root
rm -rf "$root"
DESTDIR=$root Scripts/stage.sh --release --install --swift-runtime --strip "${plugins[@]}" /usr
termhost=$root/usr/bin/termhost
# termhost-sdk.pc names no library, so it is the same on every architecture: /usr/share/pkgconfig.
mv "$root/usr/lib/pkgconfig" "$root/usr/share/pkgconfig"
# A scratch home, so no user plugin or setting of the machine building the package shows up.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run_termhost() {
  env -i PATH=/usr/bin:/bin HOME="$scratch" XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config" \
    XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state" TERMHOST_POLICY="$scratch/policy.json" "$termhost" "$@"
}
version=$(run_termhost version | awk '{ print $2 }')
debversion=$version-1

# The plugin set's signature, in OpenSSH's SSHSIG format (namespace termhost-plugin-set), by
# termhost itself when it has `plugins sign`, else by ssh-keygen: the two write the same thing.
set=$root/usr/lib/termhost/plugins/plugin-set.json
mkdir -p "$(dirname "$key")"
[ -e "$key" ] || ssh-keygen -q -t ed25519 -N '' -C "$signer" -f "$key"
if { run_termhost plugins sign 2>&1 || true; } | grep -q 'usage: termhost plugins sign'; then
  run_termhost plugins sign --key "$key" "$set"
else
  ssh-keygen -q -Y sign -f "$key" -n termhost-plugin-set "$set"
fi
install -d "$root/etc/termhost"
printf '%s namespaces="termhost-plugin-set" %s\n' "$signer" "$(ssh-keygen -y -f "$key")" > "$root/etc/termhost/allowed_signers"
[ -z "$policy" ] || cp "$policy" "$root/etc/termhost/policy.json"

doc=$root/usr/share/doc/termhost
install -d "$doc" "$root/usr/share/man/man1"
# help2man names the page after the program it runs: a termhost that runs run_termhost.
mkdir -p "$scratch/bin"
printf '#!/bin/sh
exec env -i PATH=/usr/bin:/bin HOME="%s" XDG_DATA_HOME="%s/data" XDG_CONFIG_HOME="%s/config" XDG_CACHE_HOME="%s/cache" XDG_STATE_HOME="%s/state" TERMHOST_POLICY="%s/policy.json" "%s" "$@"
' \
  "$scratch" "$scratch" "$scratch" "$scratch" "$scratch" "$scratch" "$termhost" > "$scratch/bin/termhost"
chmod +x "$scratch/bin/termhost"
help2man --no-info --no-discard-stderr --version-string="$version" --name="a plugin host for SSH tooling" \
  "$scratch/bin/termhost" | gzip -9n > "$root/usr/share/man/man1/termhost.1.gz"
{
  echo "termhost ($debversion) unstable; urgency=medium"
  echo
  echo "  * Termhost $version, built from its source tree by Scripts/package-deb.sh."
  echo
  echo " -- $maintainer  $(date -R -u)"
} | gzip -9n > "$doc/changelog.Debian.gz"
# Debian 12's libssh2 is 1.10 (README.md, "libssh2"): the package carries 1.11.1, privately.
install -d "$root/usr/share/lintian/overrides"
echo 'termhost: embedded-library libssh2 [usr/lib/termhost/libssh2/libssh2.so.1]' > "$root/usr/share/lintian/overrides/termhost"
cat > "$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: termhost
Comment: The Termhost source tree states no licence of its own; a distributor states theirs here.

Files: *
Copyright: The Termhost authors
License: unspecified
 The Termhost source tree states no licence.

Files: usr/lib/termhost/swift/*
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0 with Runtime Library Exception
 The Swift runtime libraries, copied from the toolchain that built Termhost.
 On Debian systems the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.

Files: usr/lib/termhost/libssh2/*
Copyright: The libssh2 project and its contributors
License: BSD-3-clause
 libssh2 1.11.1, built from Debian's source package by Scripts/libssh2.sh. Its licence is
 BSD-3-clause, as in /usr/share/doc/libssh2-1/copyright.
EOF

# Modes lintian and the loader expect: root's files (dpkg-deb --root-owner-group), shared
# libraries not executable, nothing group- or world-writable.
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0644 {} +
chmod 0755 "$root/usr/bin/termhost" "$root/usr/bin/termhost-probe"

# Depends: what dpkg-shlibdeps finds for the binaries and plugins. The private libraries (Swift
# runtime, libssh2) are part of the package: it tells them by the DEBIAN directory above them.
mkdir -p "$scratch/shlibs/debian" "$root/DEBIAN"
printf 'Source: termhost\n\nPackage: termhost\nArchitecture: amd64\n' > "$scratch/shlibs/debian/control"
depends=$(cd "$scratch/shlibs" && dpkg-shlibdeps -O -l"$root/usr/lib/termhost/swift" -l"$root/usr/lib/termhost/libssh2" \
  "$root/usr/bin/termhost" "$root/usr/bin/termhost-probe" $(find "$root/usr/lib/termhost" -name '*.so*' -type f) \
  2>"$scratch/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') || { cat "$scratch/shlibdeps.log" >&2; exit 1; }

(cd "$root" && find etc -type f | sed 's|^|/|' | sort) > "$root/DEBIAN/conffiles"
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) > "$root/DEBIAN/md5sums"
cat > "$root/DEBIAN/control" <<EOF
Package: termhost
Version: $debversion
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: plugin host for SSH tooling
 Termhost loads feature plugins (SSH terminal, SFTP, port forwarding,
 metrics, assistant) as shared libraries through a stable, versioned C ABI.
 This package ships the host, its default plugin set signed by the
 packager, and the SDK to build plugins in C (headers, pkg-config file
 termhost-sdk) or Swift (a SwiftPM package in /usr/share/termhost/swift-sdk).
EOF
chmod 0644 "$root/DEBIAN/"*
mkdir -p "$out"
deb=$out/termhost_${debversion}_amd64.deb
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "$deb"
