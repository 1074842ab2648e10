#!/usr/bin/env bash
# readme-defaults.sh [--write]: the README's table of sweep defaults, made from each
# subcommand's --help (the same rows the options take); --write puts it into README.md between
# its markers. EFABENCH names the binary (default build/efabench).
set -euo pipefail
bin=${EFABENCH:-build/efabench}
table() {
	echo "| subcommand | mode | defaults |"
	echo "|---|---|---|"
	for cmd in write sendrecv alltoall proxy ipc moe; do
		"$bin" "$cmd" --help | awk -v cmd="$cmd" '
			/^Defaults/ { on = 1; by = ($2 == "by") ? $3 : ""; next }
			on && /^  / {
				if (by != "") { mode = "`" by " " $1 "`"; $1 = "" } else mode = "all"
				sub(/^ +/, ""); printf "| %s | %s | `%s` |\n", cmd, mode, $0; next }
			on { exit }'
	done
}
if [ "${1:-}" != --write ]; then
	table
	exit 0
fi
python3 - "$(table)" <<'PY'
import re, sys
path = "README.md"
s = open(path).read()
a, b = "<!-- defaults: scripts/readme-defaults.sh -->\n", "<!-- /defaults -->\n"
i, j = s.index(a) + len(a), s.index(b)
open(path, "w").write(s[:i] + sys.argv[1] + "\n" + s[j:])
PY
