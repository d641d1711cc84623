#!/usr/bin/env bash
# The ratchet on `@unchecked Sendable` in product code (Host, Plugins, SDK, Registry): each one
# is thread safety argued in a comment instead of checked by the compiler. Fails when the count
# rises above the recorded value in Scripts/unchecked-sendable.count; lower that value whenever
# one goes (the goal is 30 or fewer, each with a one-line reason).
set -euo pipefail
cd "$(dirname "$0")/.."
recorded=$(tr -d '[:space:]' < Scripts/unchecked-sendable.count)
count=$(grep -rn "@unchecked Sendable" Host Plugins SDK Registry --include=*.swift | wc -l)
if [ "$count" -gt "$recorded" ]; then
  echo "unchecked-sendable: $count uses of @unchecked Sendable, more than the recorded $recorded:" >&2
  grep -rn "@unchecked Sendable" Host Plugins SDK Registry --include=*.swift >&2
  echo "make the new type checked (Mutex, an actor, ExecutorCheck) instead" >&2
  exit 1
fi
echo "unchecked-sendable: $count (at most $recorded)"
