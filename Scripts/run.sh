#!/usr/bin/env bash
# The README's "run" command: set up, build, stage the default plugin set, and start Termhost
# on its embedded store (SQLite under $XDG_DATA_HOME/termhost), showing what loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
Scripts/stage.sh --release .build/termhost >/dev/null
termhost=.build/termhost/bin/termhost
echo "== termhost doctor: what loaded, what did not and why"
"$termhost" doctor || true
echo
echo "== termhost hello (a command contributed by the C example plugin)"
"$termhost" hello
echo
echo "Termhost is staged in .build/termhost; run $termhost help for more."
