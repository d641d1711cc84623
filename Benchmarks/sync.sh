#!/usr/bin/env bash
# Sync figures: first sync of 10,000 records (upload and download), latency from a change on one
# device to it being applied on another, round trips to PostgreSQL per sync, and the records a
# device pulls in the sync after its own upload (0: it does not read them back); for the folder
# backend and for PostgreSQL (a private server the benchmark starts: Debian's postgresql package,
# Scripts/setup.sh installs it). Usage: Benchmarks/sync.sh [RECORDS]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product termhost-sync-bench >/dev/null
"$(swift build -c release --show-bin-path)/termhost-sync-bench" "$@"
