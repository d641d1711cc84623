#!/usr/bin/env bash
# Builds Termhost and lays out a runnable distribution under a prefix (default .build/termhost):
#   bin/termhost, bin/termhost-probe
#   lib/termhost/plugins/<plugin-id>/{manifest.json,lib*.so}   the default plugin set
#   lib/termhost/plugins/plugin-set.json                        versions and sha256 of that set
#   lib/termhost/libssh2/libssh2.so.1                           when the plugins use libssh2 1.11
#                                                               built by Scripts/libssh2.sh
#   lib/systemd/user/termhostd.{socket,service}                 the daemon's systemd user units
# Usage: Scripts/stage.sh [--release] [--scratch-path DIR] [--install] [--swift-runtime] [--strip]
#                        [--plugins ID,ID...] [PREFIX]
# PREFIX may be absolute or relative (to the caller's directory); every plugin of the set lands
# there or the script fails, naming the plugin.
# --scratch-path: SwiftPM's build directory, for a second build beside the default one (e.g.
# TERMHOST_SYSTEM_LIBSSH2=1 with .build/system-libssh2, as .ci/run does).
# --install: the SDK too, for plugin authors (Scripts/install-sdk.sh): include/termhost/,
# lib/pkgconfig/termhost-sdk.pc, share/termhost/plugin-exports.map, share/termhost/swift-sdk/.
# --swift-runtime: the toolchain's Swift runtime libraries that the binaries link go to
# lib/termhost/swift, so the tree runs on a machine without the toolchain (Scripts/package-deb.sh).
# --plugins: the plugins of the set, by ID; by default all of the default set (below).
# --strip: strip --strip-unneeded every binary and library before the set pins them. That keeps
# .comment, where the loader reads a Swift image's toolchain (Docs/Distributors.md).
# DESTDIR, as in make: the files go under $DESTDIR$PREFIX, while the paths written into them
# (RUNPATH, pkg-config) name PREFIX, which must then be absolute.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
config=debug install=0 runtime=0 strip=0
wanted=org.termhost.ssh,org.termhost.sftp,org.termhost.metrics,org.termhost.forwarding,org.termhost.assistant,org.termhost.sync,org.termhost.examples.hello-c,org.termhost.examples.hello-swift,org.termhost.examples.remote-c
scratch=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) config=release; shift ;;
    --scratch-path) scratch=(--scratch-path "$2"); shift 2 ;;
    --install) install=1; shift ;;
    --swift-runtime) runtime=1; shift ;;
    --strip) strip=1; shift ;;
    --plugins) wanted=$2; shift 2 ;;
    -*) echo "stage.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
prefix=${1:-.build/termhost}
if [ -n "${DESTDIR:-}" ] && [ "${prefix#/}" = "$prefix" ]; then
  echo "stage.sh: with DESTDIR the prefix must be absolute, not $prefix" >&2; exit 2
fi
case "$prefix" in /*) ;; *) [ $# -eq 0 ] || prefix="$caller/$prefix" ;; esac
destdir=
[ -z "${DESTDIR:-}" ] || destdir=$(cd "$caller" && realpath -m "$DESTDIR")
dest=$destdir$prefix

swift build -c "$config" "${scratch[@]}" --product termhost
swift build -c "$config" "${scratch[@]}" --product termhost-probe
swift build -c "$config" "${scratch[@]}" --product HelloSwiftPlugin
swift build -c "$config" "${scratch[@]}" --product SSHPlugin
swift build -c "$config" "${scratch[@]}" --product SFTPPlugin
swift build -c "$config" "${scratch[@]}" --product MetricsPlugin
swift build -c "$config" "${scratch[@]}" --product ForwardingPlugin
swift build -c "$config" "${scratch[@]}" --product AssistantPlugin
swift build -c "$config" "${scratch[@]}" --product SyncPlugin
bin=$(swift build -c "$config" "${scratch[@]}" --show-bin-path)

plugins="$dest/lib/termhost/plugins"
# The prefix is deleted first: only a new, empty or earlier staged one.
if [ -n "$(ls -A "$dest" 2>/dev/null)" ] && [ ! -e "$plugins/plugin-set.json" ]; then
  echo "stage.sh: $dest holds something other than a staged Termhost, and staging deletes it first; choose a new or empty prefix" >&2
  exit 2
fi
rm -rf "$dest"
mkdir -p "$dest/bin" "$plugins"
cp "$bin/termhost" "$bin/termhost-probe" "$dest/bin/"
plugins=$(cd "$plugins" && pwd)
termhost="$(cd "$dest/bin" && pwd)/termhost"
# The prefix as the staged files name it: PREFIX itself with DESTDIR, else its absolute path.
# A path the files name, $installed/..., is found on this machine at $destdir$installed/....
installed=$prefix
[ -n "$destdir" ] || installed=$(cd "$dest" && pwd)
# With DESTDIR those paths do not exist yet: the staged host that derives each plugin's manifest
# finds the staged libraries here instead.
[ -z "$destdir" ] || export LD_LIBRARY_PATH="$destdir$installed/lib/termhost/libssh2:$destdir$installed/lib/termhost/swift${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --swift-runtime: the Swift runtime libraries the binaries link (those ldd finds in the
# toolchain's directory) go to lib/termhost/swift. The executables find them through
# $ORIGIN/../lib/termhost/swift. A plugin finds those the host loaded by soname, and any other
# through its RUNPATH, which names the directory absolutely (plugins load as /proc/self/fd/N).
toolchain_runtime=$(dirname "$(ldd "$bin/termhost" | awk '$1 == "libswiftCore.so" { print $3 }')")
staged_swift="$installed/lib/termhost/swift"
point_at_staged_swift() {
  [ $runtime = 1 ] || return 0
  local rpath
  rpath=$(patchelf --print-rpath "$1" | tr ':' '\n' | sed "s|^$toolchain_runtime\$|$2|" | paste -sd:)
  patchelf --set-rpath "$rpath" "$1"
}
if [ $runtime = 1 ]; then
  mkdir -p "$destdir$staged_swift"
  ldd "$bin/termhost" "$bin/termhost-probe" "$bin"/lib*Plugin.so \
    | awk -v d="$toolchain_runtime/" 'index($3, d) == 1 { print $3 }' | sort -u | xargs cp -t "$destdir$staged_swift"
  for exe in termhost termhost-probe; do point_at_staged_swift "$dest/bin/$exe" '$ORIGIN/../lib/termhost/swift'; done
fi

# libssh2 1.11 built into .build by Scripts/libssh2.sh (Package.swift links the SSH and SFTP
# plugins against it, with an rpath into .build): one copy goes beside the plugins, and each
# plugin that named the build tree in its RUNPATH names that copy instead, so both load the same
# one. The path is absolute: plugins are loaded as /proc/self/fd/N, where $ORIGIN would mean
# /proc/self/fd (Docs/Distributors.md), so a staged tree that is moved must be staged again.
private_libssh2=$(pwd)/.build/libssh2-1.11.1/lib
staged_libssh2="$installed/lib/termhost/libssh2"
names_private_libssh2() { patchelf --print-rpath "$1" | tr ':' '\n' | grep -xF "$private_libssh2" >/dev/null; }
if [ -e "$private_libssh2/libssh2.so.1" ] && names_private_libssh2 "$bin/libSSHPlugin.so"; then
  mkdir -p "$destdir$staged_libssh2"
  cp "$(readlink -f "$private_libssh2/libssh2.so.1")" "$destdir$staged_libssh2/libssh2.so.1"
fi
# Without a private libssh2 (a system with 1.11, say) the build tree's entry is dropped.
point_at_staged_libssh2() {
  names_private_libssh2 "$1" || return 0
  local edit="\\|^$private_libssh2\$|d" rpath
  [ -e "$destdir$staged_libssh2/libssh2.so.1" ] && edit="s|^$private_libssh2\$|$staged_libssh2|"
  rpath=$(patchelf --print-rpath "$1" | tr ':' '\n' | sed "$edit" | paste -sd:)
  patchelf --set-rpath "$rpath" "$1"
}

# Swift plugins built by SwiftPM: <bundle dir> <product library>. The manifest is derived from
# the library's own code by the staged host's probe (a plugin declares its features once).
is_wanted() { [[ ",$wanted," == *",$1,"* ]]; }
bundle_swift() {
  is_wanted "$1" || return 0
  local dir="$plugins/$1"
  mkdir -p "$dir"
  cp "$bin/$2" "$dir/"
  point_at_staged_libssh2 "$dir/$2"
  point_at_staged_swift "$dir/$2" "$staged_swift"
  "$termhost" plugins manifest "$dir/$2" --output "$dir/manifest.json"
}
bundle_swift org.termhost.examples.hello-swift libHelloSwiftPlugin.so
bundle_swift org.termhost.ssh libSSHPlugin.so
bundle_swift org.termhost.sftp libSFTPPlugin.so
bundle_swift org.termhost.metrics libMetricsPlugin.so
bundle_swift org.termhost.forwarding libForwardingPlugin.so
bundle_swift org.termhost.assistant libAssistantPlugin.so
bundle_swift org.termhost.sync libSyncPlugin.so

# C plugins built with make from the SDK header alone; their manifests come the same way.
! is_wanted org.termhost.examples.hello-c || make -s -C SDK/Examples/hello-c OUT="$plugins" TERMHOST="$termhost"
! is_wanted org.termhost.examples.remote-c || make -s -C SDK/Examples/remote-c OUT="$plugins" TERMHOST="$termhost"

[ $strip = 0 ] || find "$dest/bin" "$dest/lib/termhost" -type f \( -path "$dest/bin/*" -o -name '*.so*' \) -exec strip --strip-unneeded {} +

# The systemd user units of the daemon (Docs/Daemon.md), naming the staged binary.
mkdir -p "$dest/lib/systemd/user"
cp Scripts/systemd/termhostd.socket "$dest/lib/systemd/user/"
sed "s|@BINDIR@|$installed/bin|" Scripts/systemd/termhostd.service > "$dest/lib/systemd/user/termhostd.service"

# Every plugin of the set must be there: a bundle that a build or make left out fails here,
# naming the plugin, rather than leaving a set without it.
for id in ${wanted//,/ }; do
  library=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["library"])' "$plugins/$id/manifest.json" 2>/dev/null) \
    && [ -f "$plugins/$id/$library" ] \
    || { echo "stage.sh: plugin $id is missing from $plugins (no manifest.json or library)" >&2; exit 1; }
done

# The plugin set pins each plugin's version and the sha256 of its library, and of the staged
# libssh2 for a plugin whose RUNPATH names it (the loader checks it before loading the plugin).
pinned_libraries() {
  [ -e "$destdir$staged_libssh2/libssh2.so.1" ] || return 0
  patchelf --print-rpath "$1" | tr ':' '\n' | grep -xF "$staged_libssh2" >/dev/null || return 0
  printf ', "libraries": [ { "path": "../libssh2/libssh2.so.1", "sha256": "%s" } ]' \
    "$(sha256sum "$destdir$staged_libssh2/libssh2.so.1" | cut -d' ' -f1)"
}
{
  echo '{ "name": "termhost-default", "version": "'"$(date -u +%Y.%m.%d)"'", "plugins": ['
  first=1
  for manifest in "$plugins"/*/manifest.json; do
    dir=$(dirname "$manifest")
    id=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["id"], m["version"], m["library"])' "$manifest")
    set -- $id
    sum=$(sha256sum "$dir/$3" | cut -d' ' -f1)
    [ $first = 1 ] || echo ','
    first=0
    printf '  { "id": "%s", "version": "%s", "sha256": "%s"%s }' "$1" "$2" "$sum" "$(pinned_libraries "$dir/$3")"
  done
  echo; echo '] }'
} > "$plugins/plugin-set.json"
[ $install = 0 ] || Scripts/install-sdk.sh "$installed" "$dest"
echo "staged Termhost in $dest"
