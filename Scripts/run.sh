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
echo "== termhost sandbox start: a local sshd to try the SSH plugin with"
"$termhost" sandbox start
"$termhost" exec sandbox -- uname -sr
echo
echo "Termhost is staged in .build/termhost. Next: $termhost ssh sandbox (type ~. to leave),"
echo "$termhost help, and $termhost sandbox stop when done."
