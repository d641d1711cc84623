#!/usr/bin/env bash
# The README's "test" command (and CI's): set up, build everything, run the whole test suite.
# Tests build real plugins with cc, dlopen them, and use real SQLite files under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
Scripts/unchecked-sendable.sh
log=$(mktemp)
if ! swift build --build-tests >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -q "warning:" "$log"; then grep -A3 "warning:" "$log"; echo "test: the build has warnings" >&2; exit 1; fi
# The README's run command builds in release mode (whole-module), which sees errors a debug
# build can miss: build it too.
if ! swift build -c release >"$log" 2>&1; then cat "$log"; exit 1; fi
if grep -q "warning:" "$log"; then grep -A3 "warning:" "$log"; echo "test: the release build has warnings" >&2; exit 1; fi
# A short run of every fuzz target (the parsers of untrusted input); Scripts/fuzz.sh with a
# longer time is the real campaign. Before the tests, so the test runner's summary stays last.
Scripts/fuzz.sh "${TERMHOST_FUZZ_SECONDS:-10}"
# The suite runs inside test-scope, which becomes the parent of every process a test left
# behind, however it detached (tmux servers, sshd sessions), and fails the run naming each one.
cc -std=c99 -O2 -Wall -Wextra -Werror -o .build/test-scope Scripts/test-scope.c
run_log=$(mktemp)
set +e
.build/test-scope swift test --skip-build 2>&1 | tee "$run_log"
status=${PIPESTATUS[0]}
set -e
Scripts/test-durations.sh "$run_log"
rm -f "$run_log"
exit "$status"
