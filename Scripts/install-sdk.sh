#!/usr/bin/env bash
# Lays out the plugin SDK for a staged or installed Termhost, so a plugin builds without the
# host's source tree (Scripts/stage.sh --install runs it):
#   include/termhost/*.h                      the C ABI, the whole header tree
#   lib/pkgconfig/termhost-sdk.pc             cc $(pkg-config --cflags --libs termhost-sdk)
#   share/termhost/plugin-exports.map         the linker version script every plugin links with
#   share/termhost/swift-sdk/                 a SwiftPM package: the CTermhost module (a module
#                                             map over the installed headers) and TermhostSDK
# Usage: Scripts/install-sdk.sh PREFIX [DEST]
# PREFIX is the absolute path the files name (the pkg-config prefix, the module map's header);
# DEST is where they are written, PREFIX by default (DESTDIR$PREFIX when packaging).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: Scripts/install-sdk.sh PREFIX [DEST]}
dest=${2:-$prefix}
case "$prefix" in /*) ;; *) echo "install-sdk.sh: PREFIX must be absolute, not $prefix" >&2; exit 2 ;; esac

mkdir -p "$dest/include" "$dest/lib/pkgconfig" "$dest/share/termhost"
rm -rf "$dest/include/termhost" "$dest/share/termhost/swift-sdk"
cp -R SDK/include/termhost "$dest/include/"
cp SDK/Swift/plugin-exports.map "$dest/share/termhost/"

abi=$(awk '/#define TERMHOST_ABI_(MAJOR|MINOR|PATCH) / { v = v (v ? "." : "") $3 } END { print v }' SDK/include/termhost/version.h)
cat > "$dest/lib/pkgconfig/termhost-sdk.pc" <<EOF
prefix=$prefix
includedir=\${prefix}/include
datadir=\${prefix}/share
# The linker version script every plugin links with: it exports termhost_plugin_entry only.
plugin_exports=\${datadir}/termhost/plugin-exports.map
swift_sdk=\${datadir}/termhost/swift-sdk

Name: termhost-sdk
Description: Termhost plugin SDK: the C ABI headers (termhost/termhost.h) and plugin link flags
Version: $abi
Cflags: -I\${includedir}
Libs: -Wl,--version-script=\${plugin_exports}
EOF

sdk="$dest/share/termhost/swift-sdk"
mkdir -p "$sdk/Sources/CTermhost" "$sdk/Sources/TermhostSDK"
cp SDK/Swift/TermhostSDK/*.swift "$sdk/Sources/TermhostSDK/"
cat > "$sdk/Sources/CTermhost/module.modulemap" <<EOF
// The C ABI as a Clang module for Swift: the installed headers, not a copy.
module CTermhost {
    header "$prefix/include/termhost/termhost.h"
    export *
}
EOF
cat > "$sdk/Package.swift" <<'EOF'
// swift-tools-version: 6.0
// The Termhost Swift SDK, installed: a plugin's package depends on it by path, e.g.
//   .package(path: "/usr/share/termhost/swift-sdk")
// and links with the version script beside it (../plugin-exports.map). Build the plugin with
// the toolchain that built the host: Swift has no stable ABI on Linux.
import PackageDescription

let package = Package(
    name: "TermhostSDK",
    products: [.library(name: "TermhostSDK", targets: ["TermhostSDK"])],
    targets: [
        .systemLibrary(name: "CTermhost", path: "Sources/CTermhost"),
        .target(name: "TermhostSDK", dependencies: ["CTermhost"], path: "Sources/TermhostSDK",
                swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
EOF
