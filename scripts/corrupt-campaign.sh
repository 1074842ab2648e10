#!/usr/bin/env bash
# corrupt-campaign.sh [TRIALS] [MEM-ARGS...]: corruption, counted. TRIALS times each, a random
# benchmark and size and a random fault: one byte flipped at a random offset of what lands
# (--corrupt-at), or one whole chunk written where the previous one belongs
# (--misplace-chunk, chunks of 4 KiB to 64 KiB); every run must fail with exit 1 and wrong
# words in its JSON. MEM-ARGS (e.g. --mem device --staged) go to every run. Prints one line
# per trial and the counts; exit 1 if any fault went unnoticed. EFABENCH names the binary.
set -u
cd "$(dirname "$0")/.."
bin=${EFABENCH:-build/efabench}
trials=${1:-20}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export EFABENCH_TESTING=1 # the testing aids refuse to run without it
caught=0 missed=0
for fault in flip misplace; do
	for t in $(seq "$trials"); do
		benches=(write alltoall sendrecv)
		[ $fault = misplace ] && benches=(write alltoall) # sends are not chunked writes
		bench=${benches[RANDOM % ${#benches[@]}]}
		size=$(((RANDOM % 64 + 2) * 4096 + RANDOM % 4096))
		chunk=$(((RANDOM % 16 + 1) * 4096))
		while [ $((size / chunk)) -lt 2 ]; do chunk=$((chunk / 2)); done
		case $fault in
		flip) aid=(--corrupt-at $((RANDOM * 32768 % size + RANDOM % size))) ;;
		misplace) aid=(--misplace-chunk $((1 + RANDOM % (size / chunk - 1)))) ;;
		esac
		np=2
		[ "$bench" = alltoall ] && np=3
		args=("$bench" --np $np --provider shm -b "$size" -e "$size" -n 3 -w 1 --chunk "$chunk"
			"${aid[@]}" "$@" -q --json "$work/out.json")
		"$bin" "${args[@]}" >/dev/null 2>"$work/err"
		rc=$?
		wrong=$(python3 -c 'import json,sys
try:
    print(min(r["wrong"] for r in json.load(open(sys.argv[1]))["results"]))
except Exception:
    print(-1)' "$work/out.json")
		rm -f "$work/out.json"
		if [ $rc -eq 1 ] && [ "$wrong" -gt 0 ]; then
			caught=$((caught + 1))
			verdict="caught (fewest wrong words in a variant: $wrong)"
		else
			missed=$((missed + 1))
			verdict="MISSED: exit $rc, wrong $wrong: $(tail -2 "$work/err")"
		fi
		echo "$fault $t: ${args[*]:0:14} -> $verdict"
	done
done
echo "$((caught + missed)) corrupted runs: $caught caught, $missed missed"
[ $missed -eq 0 ]
