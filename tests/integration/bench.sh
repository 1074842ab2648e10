#!/usr/bin/env bash
# bench.sh BENCH PROVIDER NP [extra efabench options]: a sweep with odd sizes and several chunks
# in flight; asserts exit 0, #wrong = 0 everywhere, valid JSON and CSV with a record per size
# and variant.
. "$(dirname "$0")/lib.sh"
bench=$1 prov=$2 np=$3
shift 3
iters=8
[ "$prov" = sockets ] && iters=3
# 1000 .. 2M by 8: sizes that are not multiples of 8 or of the chunk, so the partial last word
# and the remainder chunk are exercised.
"$EFABENCH" "$bench" --np "$np" --provider "$prov" -b 1000 -e 2M -f 8 -n $iters -w 2 \
	--chunk 64K --window 4 --timeout 20 --json "$WORK/out.json" --csv "$WORK/out.csv" "$@" \
	>"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
cat "$WORK/stdout"
cat "$WORK/stderr" >&2
[ $rc -eq 0 ] || fail "efabench exited $rc"
grep -q "Out of bounds values : 0 OK" "$WORK/stdout" || fail "table footer does not say 0 OK"
# The results table: the first run of table lines (the NICs' and stages' tables follow it).
rows=$(awk '/^\|[-:]/ {next} /^\| / {n++; next} n {exit} END {print n + 0}' "$WORK/stdout")
[ "$rows" -eq 6 ] || fail "want a header and 5 size rows, not $rows"
variants=$(python3 -c 'import json,sys; print(len({r["variant"] for r in json.load(open(sys.argv[1]))["results"]}))' "$WORK/out.json")
want=1
[ "$bench" = sendrecv ] || want=3
case " $* " in
*" --layout "*) want=$variants ;;
*" --rate "*)
	want=1
	python3 -c 'import json,sys; assert all(r["mmsg_per_s"] > 0 and r["phases"] == 4 for r in json.load(open(sys.argv[1]))["results"])' \
		"$WORK/out.json" || fail "a --rate record has no message rate, or not the 4 phases asked"
	# With --check every write of a burst has a slot of its own: one write of every phase
	# landing on its neighbour's slot is caught (with one slot for all it could not be).
	"$EFABENCH" "$bench" --np "$np" --provider "$prov" -b 1000 -e 1000 -n 40 -w 2 --timeout 20 \
		--json "$WORK/bad.json" --misplace-chunk 7 "$@" >"$WORK/bad" 2>&1 &&
		fail "a misplaced write of a rate burst went unnoticed"
	grep -q "wrong words received" "$WORK/bad" || fail "no wrong-words line for a misplaced write"
	# Without --check the writes of a phase go round --window slots: a write of the last
	# window landing on its neighbour's slot shows in the check after the phase (with one slot
	# for all it could not), and a clean run passes that check.
	for k in 37 38; do
		"$EFABENCH" "$bench" --np "$np" --provider "$prov" -b 1000 -e 1000 -n 40 -w 2 \
			--phases 1 --window 4 --rate --timeout 20 --misplace-chunk $k >"$WORK/bad" 2>&1 &&
			fail "unchecked: write $k of 40 landing on its neighbour's slot went unnoticed"
		grep -q "wrong words received" "$WORK/bad" || fail "unchecked: no wrong-words line"
	done
	run_ok "an unchecked rate run" "$EFABENCH" "$bench" --np "$np" --provider "$prov" \
		-b 1000 -e 64K -f 8 -n 40 -w 2 --phases 2 --window 4 --rate --timeout 20
	# One slot (--window 1, sizes past the inject size): each write re-posts the same request,
	# the path timed phases take at one slot; the bytes are checked after each phase.
	run_ok "a rate run of one slot" "$EFABENCH" "$bench" --np "$np" --provider "$prov" \
		-b 64K -e 256K -f 4 -n 40 -w 2 --phases 2 --window 1 --rate --timeout 20
	;;
esac
if [ "$bench" = sendrecv ]; then
	# Host messages within the provider's inject size (shm's is 4 KiB) go by fi_inject.
	python3 - "$WORK/out.json" "$prov" <<'PY' || fail "sendrecv's inject field is wrong"
import json, sys
res = json.load(open(sys.argv[1]))["results"]
assert all(isinstance(r["inject"], bool) for r in res)
assert not res[-1]["inject"], "2 MiB went by fi_inject"
assert sys.argv[2] != "shm" or res[0]["inject"], "1000 bytes on shm did not go by fi_inject"
PY
fi
[ "$variants" -eq "$want" ] || fail "$variants variants ran, want $want"
check_definitions "$WORK/out.json"
check_json "$WORK/out.json" $((5 * variants)) 0
[ "$(wc -l <"$WORK/out.csv")" -eq $((1 + 5 * variants)) ] || fail "CSV wants a header and a row per size and variant"
# Every CSV row names the build and run, as the JSON's stamp does.
python3 - "$WORK/out.csv" "$WORK/out.json" <<'PY' || fail "the CSV rows lack the JSON's stamp"
import csv, json, sys
stamp = json.load(open(sys.argv[2]))["stamp"]
for row in csv.DictReader(open(sys.argv[1])):
    for k in ("efabench", "commit", "libfabric_built", "libfabric_runtime", "host", "date"):
        assert row[k] == stamp[k], (k, row[k], stamp[k])
PY
echo "PASS"
