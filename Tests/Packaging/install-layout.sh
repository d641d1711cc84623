#!/usr/bin/env bash
# Stages Termhost with its SDK (Scripts/stage.sh --install) and checks what distributors and
# plugin authors rely on:
# - staged to an absolute prefix, every plugin of the default set is there and loads (doctor);
# - a relative prefix is the caller's, not the source tree's;
# - a plugin that fails to build fails the staging, naming the plugin;
# - hello-c, copied outside the tree, builds with cc $(pkg-config ... termhost-sdk), and
#   hello-swift, copied outside the tree, builds against share/termhost/swift-sdk; the staged
#   termhost loads both and runs their commands.
# The copies get IDs and commands of their own: the staged set pins the examples' IDs, so a
# rebuilt library under the same ID would be refused, as it should be.
# Usage: Tests/Packaging/install-layout.sh (from CI, after the build; takes about two minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
work=$(mktemp -d /tmp/termhost-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "install-layout: $*" >&2; exit 1; }
export HOME=$work/home XDG_DATA_HOME=$work/home/data XDG_CONFIG_HOME=$work/home/config \
  XDG_CACHE_HOME=$work/home/cache XDG_STATE_HOME=$work/home/state TERMHOST_POLICY=$work/policy.json
unset TERMHOST_PLUGIN_PATH

prefix=$work/opt/termhost
Scripts/stage.sh --install "$prefix" >/dev/null
termhost=$prefix/bin/termhost
doctor=$("$termhost" doctor) || fail "doctor failed: $doctor"
grep -q '^No problems found\.' <<<"$doctor" || fail "doctor found problems: $doctor"
for id in org.termhost.examples.hello-c org.termhost.examples.hello-swift org.termhost.examples.remote-c \
          org.termhost.ssh org.termhost.sftp org.termhost.metrics org.termhost.forwarding org.termhost.assistant org.termhost.sync; do
  grep -q "\"id\": \"$id\"" "$prefix/lib/termhost/plugins/plugin-set.json" || fail "the set lacks $id"
  grep -q "✓  $id " <<<"$doctor" || fail "$id did not load from $prefix: $doctor"
done
for f in include/termhost/termhost.h include/termhost/services/tools.h lib/pkgconfig/termhost-sdk.pc \
         share/termhost/plugin-exports.map share/termhost/swift-sdk/Package.swift; do
  [ -f "$prefix/$f" ] || fail "no $f in $prefix"
done

(cd "$work" && "$repo/Scripts/stage.sh" relative >/dev/null)
[ -f "$work/relative/lib/termhost/plugins/org.termhost.examples.hello-c/libhello-c.so" ] || fail "a relative prefix missed the C plugins"
[ ! -e "$repo/relative" ] || fail "a relative prefix was taken from the source tree"

# MAKEFLAGS reaches make alone (SwiftPM would compile its own C targets with a CC).
if broken=$(MAKEFLAGS=CC=false Scripts/stage.sh "$work/broken" 2>&1); then fail "staging succeeded without hello-c"; fi
grep -q 'org.termhost.examples.hello-c' <<<"$broken" || fail "the failed staging does not name hello-c: $broken"

plugins=$work/plugins
mkdir -p "$work/hello-c" "$plugins/com.example.installed-c" "$plugins/com.example.installed-swift"
sed -e 's/org\.termhost\.examples\.hello-c/com.example.installed-c/' -e 's/"hello", "Greet/"hello-installed-c", "Greet/' \
  SDK/Examples/hello-c/hello.c > "$work/hello-c/hello.c"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
(cd "$work/hello-c" && cc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -D_POSIX_C_SOURCE=200809L -fPIC -shared \
  $(pkg-config --cflags termhost-sdk) -o "$plugins/com.example.installed-c/libhello-c.so" hello.c $(pkg-config --libs termhost-sdk))
"$termhost" plugins manifest "$plugins/com.example.installed-c/libhello-c.so" --output "$plugins/com.example.installed-c/manifest.json"

# The package a plugin author writes (Docs/PluginGuide.md, "Against an installed Termhost").
swift=$work/hello-swift
mkdir -p "$swift/Sources/HelloSwift"
sed -e 's/org\.termhost\.examples\.hello-swift/com.example.installed-swift/' -e 's/Command("hello-swift"/Command("hello-installed-swift"/' \
  SDK/Examples/hello-swift/Sources/HelloSwift.swift > "$swift/Sources/HelloSwift/HelloSwift.swift"
cat > "$swift/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription

let termhost = Context.environment["TERMHOST_PREFIX"] ?? "/usr"
let package = Package(
    name: "HelloSwift",
    products: [.library(name: "HelloSwiftPlugin", type: .dynamic, targets: ["HelloSwift"])],
    dependencies: [.package(path: "\(termhost)/share/termhost/swift-sdk")],
    targets: [
        .target(name: "HelloSwift", dependencies: [.product(name: "TermhostSDK", package: "swift-sdk")],
                swiftSettings: [.swiftLanguageMode(.v6)],
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(termhost)/share/termhost/plugin-exports.map"])]),
    ]
)
SWIFT
log=$work/swift-build.log
TERMHOST_PREFIX=$prefix swift build --package-path "$swift" >"$log" 2>&1 || { cat "$log"; fail "hello-swift did not build against $prefix/share/termhost/swift-sdk"; }
cp "$swift/.build/debug/libHelloSwiftPlugin.so" "$plugins/com.example.installed-swift/"
"$termhost" plugins manifest "$plugins/com.example.installed-swift/libHelloSwiftPlugin.so" --output "$plugins/com.example.installed-swift/manifest.json"

export TERMHOST_PLUGIN_PATH=$plugins
out=$("$termhost" hello-installed-c Ada) || fail "hello-installed-c failed: $out"
[ "$out" = "Hello, Ada! (greeting number 1, from C)" ] || fail "hello-installed-c said: $out"
out=$("$termhost" hello-installed-swift Ada) || fail "hello-installed-swift failed: $out"
[ "$out" = "Hello, Ada! (greeting number 1, from Swift)" ] || fail "hello-installed-swift said: $out"
echo "install-layout: ok ($prefix: every plugin of the set loads; hello-c and hello-swift built outside the tree load)"
