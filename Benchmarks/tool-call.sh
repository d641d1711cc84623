#!/usr/bin/env bash
# Assistant: the cost of one tool call (the C example's local_time) called directly, through the
# host's ToolService, through termhost.tools/1 as a plugin calls it, and after the policy gate
# with its audit record (Benchmarks/ToolCallCost). Not a test: figures in us per call.
# Usage: Benchmarks/tool-call.sh [iterations]   (release build; stages hello-c in a scratch prefix)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/termhost-tool-call-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
Scripts/stage.sh --release --plugins org.termhost.examples.hello-c "$work/termhost" > /dev/null
swift build -c release --product termhost-tool-call-bench > /dev/null
export XDG_CONFIG_HOME="$work/config" TERMHOST_POLICY="$work/none.json"
.build/release/termhost-tool-call-bench "$work/termhost/lib/termhost/plugins" "${1:-20000}"
