#!/usr/bin/env bash
# Bad input: one line on stderr, nothing on stdout, exit status 2, and no rank started.
. "$(dirname "$0")/lib.sh"
cases=(
	"write -b 1X"
	"write -b 4M -e 1M"
	"write -e 0"
	"write -b -1"
	"write -n 0"
	"write -n -3"
	"write --iters abc"
	"write -w -1"
	"write --window 0"
	"write --chunk 0"
	"write -f 1"
	"write --np 0"
	"write --np 1"
	"sendrecv --np 1"
	"write --np 300 --provider shm"
	"write --provider nosuch"
	"write --channels 65"
	"sendrecv --layout split"
	"write --layout diagonal"
	"write --nics nosuch0 --provider tcp"
	"write --timeout 0"
	"write --link-gbps -5"
	"write --bogus"
	"write -b"
	"write stray"
	"write --json /nonexistent-dir/out.json"
	"queue --slots 3"
	"queue --producers-on cpu --producers 1t"
	"queue --producers 0b"
	"queue --placement disk"
	"queue --batch 0"
	"frobnicate"
	""
)
for args in "${cases[@]}"; do
	# shellcheck disable=SC2086
	timeout 20 "$EFABENCH" $args -v >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ $rc -eq 2 ] || fail "'efabench $args' exited $rc, want 2"
	if [ -n "$args" ]; then
		[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "'efabench $args' printed $(wc -l <"$WORK/err") lines on stderr, want 1: $(cat "$WORK/err")"
		[ ! -s "$WORK/out" ] || fail "'efabench $args' printed on stdout"
		# -v makes the launcher name every rank it starts: none may have started.
		! grep -q "is pid" "$WORK/err" || fail "'efabench $args' started ranks"
	fi
	echo "ok: efabench $args -> $(head -c 150 "$WORK/err")"
done
echo "PASS"
