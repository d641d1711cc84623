#!/usr/bin/env bash
# Builds Termhost and lays out a runnable distribution under a prefix (default .build/termhost):
#   bin/termhost, bin/termhost-probe
#   lib/termhost/plugins/<plugin-id>/{manifest.json,lib*.so}   the default plugin set
#   lib/termhost/plugins/plugin-set.json                        versions and sha256 of that set
#   lib/termhost/libssh2/libssh2.so.1                           when the plugins use libssh2 1.11
#                                                               built by Scripts/libssh2.sh
# Usage: Scripts/stage.sh [--release] [--scratch-path DIR] [PREFIX]
# --scratch-path: SwiftPM's build directory, for a second build beside the default one (e.g.
# TERMHOST_SYSTEM_LIBSSH2=1 with .build/system-libssh2, as .ci/run does).
set -euo pipefail
cd "$(dirname "$0")/.."
config=debug
if [ "${1:-}" = "--release" ]; then config=release; shift; fi
scratch=()
if [ "${1:-}" = "--scratch-path" ]; then scratch=(--scratch-path "$2"); shift 2; fi
prefix=${1:-.build/termhost}

swift build -c "$config" "${scratch[@]}" --product termhost
swift build -c "$config" "${scratch[@]}" --product termhost-probe
swift build -c "$config" "${scratch[@]}" --product HelloSwiftPlugin
swift build -c "$config" "${scratch[@]}" --product SSHPlugin
swift build -c "$config" "${scratch[@]}" --product SFTPPlugin
swift build -c "$config" "${scratch[@]}" --product MetricsPlugin
swift build -c "$config" "${scratch[@]}" --product ForwardingPlugin
swift build -c "$config" "${scratch[@]}" --product AssistantPlugin
bin=$(swift build -c "$config" "${scratch[@]}" --show-bin-path)

plugins="$prefix/lib/termhost/plugins"
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$plugins"
cp "$bin/termhost" "$bin/termhost-probe" "$prefix/bin/"
plugins=$(cd "$plugins" && pwd)
termhost="$(cd "$prefix/bin" && pwd)/termhost"

# libssh2 1.11 built into .build by Scripts/libssh2.sh (Package.swift links the SSH and SFTP
# plugins against it, with an rpath into .build): one copy goes beside the plugins, and each
# plugin that named the build tree in its RUNPATH names that copy instead, so both load the same
# one. The path is absolute: plugins are loaded as /proc/self/fd/N, where $ORIGIN would mean
# /proc/self/fd (Docs/Distributors.md), so a staged tree that is moved must be staged again.
private_libssh2=$(pwd)/.build/libssh2-1.11.1/lib
staged_libssh2="$(cd "$prefix" && pwd)/lib/termhost/libssh2"
names_private_libssh2() { patchelf --print-rpath "$1" | tr ':' '\n' | grep -xF "$private_libssh2" >/dev/null; }
if [ -e "$private_libssh2/libssh2.so.1" ] && names_private_libssh2 "$bin/libSSHPlugin.so"; then
  mkdir -p "$staged_libssh2"
  cp "$(readlink -f "$private_libssh2/libssh2.so.1")" "$staged_libssh2/libssh2.so.1"
fi
# Without a private libssh2 (a system with 1.11, say) the build tree's entry is dropped.
point_at_staged_libssh2() {
  names_private_libssh2 "$1" || return 0
  local edit="\\|^$private_libssh2\$|d" rpath
  [ -e "$staged_libssh2/libssh2.so.1" ] && edit="s|^$private_libssh2\$|$staged_libssh2|"
  rpath=$(patchelf --print-rpath "$1" | tr ':' '\n' | sed "$edit" | paste -sd:)
  patchelf --set-rpath "$rpath" "$1"
}

# Swift plugins built by SwiftPM: <bundle dir> <product library>. The manifest is derived from
# the library's own code by the staged host's probe (a plugin declares its features once).
bundle_swift() {
  local dir="$plugins/$1"
  mkdir -p "$dir"
  cp "$bin/$2" "$dir/"
  point_at_staged_libssh2 "$dir/$2"
  "$termhost" plugins manifest "$dir/$2" --output "$dir/manifest.json"
}
bundle_swift org.termhost.examples.hello-swift libHelloSwiftPlugin.so
bundle_swift org.termhost.ssh libSSHPlugin.so
bundle_swift org.termhost.sftp libSFTPPlugin.so
bundle_swift org.termhost.metrics libMetricsPlugin.so
bundle_swift org.termhost.forwarding libForwardingPlugin.so
bundle_swift org.termhost.assistant libAssistantPlugin.so

# C plugins built with make from the SDK header alone; their manifests come the same way.
make -s -C SDK/Examples/hello-c OUT="$plugins" TERMHOST="$termhost"
make -s -C SDK/Examples/remote-c OUT="$plugins" TERMHOST="$termhost"

# The plugin set pins each plugin's version and the sha256 of its library, and of the staged
# libssh2 for a plugin whose RUNPATH names it (the loader checks it before loading the plugin).
pinned_libraries() {
  [ -e "$staged_libssh2/libssh2.so.1" ] || return 0
  patchelf --print-rpath "$1" | tr ':' '\n' | grep -xF "$staged_libssh2" >/dev/null || return 0
  printf ', "libraries": [ { "path": "../libssh2/libssh2.so.1", "sha256": "%s" } ]' \
    "$(sha256sum "$staged_libssh2/libssh2.so.1" | cut -d' ' -f1)"
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
echo "staged Termhost in $prefix"
