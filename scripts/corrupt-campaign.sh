#!/usr/bin/env bash
# corrupt-campaign.sh [TRIALS] [MEM-ARGS...]: corruption, counted. TRIALS times each, a random
# benchmark (write, alltoall, sendrecv; moe with CPU producers and its all-to-all-v, on 2 or 3
# ranks and a random token count) and size and a random fault: one byte flipped at a random
# offset of what lands (--corrupt-at), or one whole chunk written where the previous one belongs
# (--misplace-chunk, chunks of 4 KiB to 64 KiB; write and alltoall only); every run must fail
# with exit 1 and wrong words (or values) in every row of its JSON. MEM-ARGS (e.g. --mem device
# --staged) go to every run. Prints one line per trial and the counts; exit 1 if any fault went
# unnoticed. EFABENCH names the binary; ONLY a list of the benchmarks to draw from (ONLY=moe).
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
	all=(write alltoall sendrecv moe)
	# Sends are not chunked writes; moe's puts are a token each (only its all-to-all-v rows
	# could show a misplaced chunk, and every row must).
	[ $fault = misplace ] && all=(write alltoall)
	benches=()
	for b in "${all[@]}"; do
		# moe writes registered memory only: it refuses --staged.
		[ "$b" = moe ] && [[ " $* " == *" --staged "* ]] && continue
		[ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $b "* ]] && benches+=("$b")
	done
	[ ${#benches[@]} -gt 0 ] || continue
	for t in $(seq "$trials"); do
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
		case $bench in
		moe) # sizes from the shape; the flipped byte is taken modulo what lands on the rank
			args=(moe --initiators "cpu,a2av" --np $((RANDOM % 2 + 2)) --experts 96 --provider shm
				--tokens $((RANDOM % 64 + 16)) --hidden 1024) ;;
		*) args=("$bench" --np $np --provider shm -b "$size" -e "$size") ;;
		esac
		# alltoall's Split draws chunks from one pool over the channels: give it several
		[ "$bench" = alltoall ] && args+=(--channels $((RANDOM % 3 + 1)))
		args+=(-n 3 -w 1 --chunk "$chunk" "${aid[@]}")
		shown=${args[*]}
		args+=("$@" -q --json "$work/out.json")
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
		echo "$fault $t: $shown -> $verdict"
	done
done
echo "$((caught + missed)) corrupted runs: $caught caught, $missed missed"
[ $missed -eq 0 ]
