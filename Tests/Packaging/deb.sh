#!/usr/bin/env bash
# Builds the Debian package (Scripts/package-deb.sh), checks it with lintian (no errors), installs
# it with dpkg, and runs /usr/bin/termhost doctor and hello on it with the Swift toolchain's
# directory hidden (a private mount namespace; where one cannot be made, ldd must resolve nothing
# there), checks the set's signature against the installed allowed_signers with ssh-keygen, then
# purges the package. Needs root. Usage: Tests/Packaging/deb.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d /tmp/termhost-deb-XXXXXX)
trap 'dpkg --purge termhost >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fail() { echo "deb: $*" >&2; exit 1; }

deb=$(Scripts/package-deb.sh "$work" | tail -1)
[ "$(basename "$deb")" = "termhost_$(dpkg-deb -f "$deb" Version)_amd64.deb" ] || fail "unexpected name $deb"
lintian --fail-on error "$deb" || fail "lintian found errors in $deb"
dpkg -i "$deb" >/dev/null

toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")
for f in /usr/bin/termhost /usr/bin/termhost-probe $(find /usr/lib/termhost -name '*.so*' -type f); do
  if ldd "$f" | grep -e "$toolchain/" -e 'not found'; then fail "$f needs the toolchain"; fi
done
# Full RELRO on what Termhost itself builds (the host, the probe, every plugin; not the bundled
# third-party libraries): bound at load (BIND_NOW) with a read-only relocation segment.
for f in /usr/bin/termhost /usr/bin/termhost-probe $(find /usr/lib/termhost/plugins -name '*.so' -type f); do
  readelf -l "$f" | grep -q GNU_RELRO || fail "$f has no RELRO segment"
  readelf -d "$f" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW' || fail "$f is not linked with -z now (partial RELRO only)"
done
# The operator policy and allowed signers are the installed ones, in /etc/termhost.
export HOME=$work/home XDG_DATA_HOME=$work/home/data XDG_CONFIG_HOME=$work/home/config \
  XDG_CACHE_HOME=$work/home/cache XDG_STATE_HOME=$work/home/state
unset TERMHOST_PLUGIN_PATH TERMHOST_POLICY
checks='/usr/bin/termhost doctor | grep -q "^No problems found\." && /usr/bin/termhost --safe-mode doctor | grep -q "^No problems found\." && /usr/bin/termhost hello Ada'
if unshare -m true 2>/dev/null; then
  out=$(unshare -m sh -c "mount -t tmpfs none '$toolchain' && $checks") || fail "the installed termhost failed without $toolchain: $out"
else
  out=$(sh -c "$checks") || fail "the installed termhost failed: $out"
fi
[ "$out" = "Hello, Ada! (greeting number 1, from C)" ] || fail "termhost hello said: $out"

set=/usr/lib/termhost/plugins/plugin-set.json
principal=$(awk '{ print $1; exit }' /etc/termhost/allowed_signers)
ssh-keygen -Y verify -f /etc/termhost/allowed_signers -I "$principal" -n termhost-plugin-set -s "$set.sig" < "$set" >/dev/null \
  || fail "$set.sig does not verify against /etc/termhost/allowed_signers"
if { /usr/bin/termhost plugins verify 2>&1 || true; } | grep -q 'usage: termhost plugins verify'; then
  /usr/bin/termhost plugins verify "$set" --allowed-signers /etc/termhost/allowed_signers >/dev/null \
    || fail "termhost plugins verify refuses $set"
fi
dpkg --purge termhost >/dev/null
[ ! -e /usr/bin/termhost ] && [ ! -e /etc/termhost/allowed_signers ] || fail "dpkg --purge left files behind"
echo "deb: ok ($(basename "$deb"))"
