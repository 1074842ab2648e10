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
	# output files: a directory, a full device, an unwritable path, an empty name
	"write --json /tmp"
	"write --csv /dev/full"
	"write --csv /proc/version"
	"write --json /nonexistent-dir/sub/x.json"
	"write --csv="
	# sizes, counts and ranks
	"write -b 1T -e 2T"
	"write -f 0"
	"write -n 99999999999999999999"
	"write --window 99999999999"
	"write --timeout nan"
	"write --timeout inf"
	"write --link-gbps nan"
	"matrix --np 1"
	"matrix -s 0"
	"matrix -n 0"
	"matrix --flag 2"
	"matrix --expect -1"
	"doctor --np 0"
	"doctor --expect-gpus -2"
	"doctor --min-link 0"
	"doctor --peers 0"
	# memory kinds and GPU ids (no GPU here, or one that does not exist)
	"write --mem gpu"
	"write --staged"
	"write --mem host --staged"
	"write --stage-serial"
	"write --mem device"
	"write --gpu -1"
	"write --gpu 99999"
	"sendrecv --mem pinned --gpu 1023"
	# producer shapes and GPU-only subcommands
	"proxy --mode rate --producers 0b"
	"proxy --mode rate --producers 3x"
	"proxy --active 999999999"
	"proxy --mode fast"
	"queue --producers 1t,1x"
	"ipc --grid 0"
	"ipc --methods foo"
	"write --poll fast"
	# --cpu-map: its syntax, an entry per local rank, CPUs we may run on, not with a rendezvous
	"write --cpu-map x"
	"write --cpu-map 0,"
	"write --cpu-map 0"
	"write --np 3 --cpu-map 0,1"
	"write --cpu-map 0,1023"
	"write --cpu-map 0,1 --root 127.0.0.1:5000 --rank 0 --ranks 2"
	"alltoall --layout single,bogus"
	# the rendezvous: options and environment (no token, bad root, rank out of range)
	"write --root host --rank 0 --ranks 2"
	"write --root 1.2.3:99999 --rank 0 --ranks 2"
	"write --rank 2 --ranks 2 --root 127.0.0.1:5000"
	"write --np 2 --root 127.0.0.1:5000 --rank 0 --ranks 2"
	"EFABENCH_ROOT=nohost EFABENCH_RANK=0 EFABENCH_SIZE=2 write"
	"EFABENCH_ROOT=127.0.0.1:5999 EFABENCH_RANK=x EFABENCH_SIZE=2 write"
	"EFABENCH_ROOT=127.0.0.1:5999 EFABENCH_RANK=0 EFABENCH_SIZE=0 write"
	"EFABENCH_ROOT=127.0.0.1:5999 EFABENCH_RANK=0 EFABENCH_SIZE=2 write"
	"EFABENCH_TOKEN= EFABENCH_ROOT=127.0.0.1:5999 EFABENCH_RANK=0 EFABENCH_SIZE=2 write"
	"FI_PROVIDER=nosuch write"
	# testing aids need EFABENCH_TESTING=1 too, so that none is turned on by accident
	"EFABENCH_TESTING=0 write --corrupt-at 5"
	"EFABENCH_TESTING=0 write --corrupt-key"
	"EFABENCH_TESTING=0 write --misplace-chunk 1"
	"EFABENCH_TESTING=0 proxy --producers-on cpu --bad-put"
	"EFABENCH_TESTING=0 proxy --producers-on cpu --stall-proxy"
	"write --misplace-chunk 0"
	"write --rate --phases 0"
	"write --rate --phases many"
	"write --rounds 0"
	"write --rounds 30 -n 20"
	"moe --rounds 2"
	"report -o /tmp/eb-badinput-report --mem gpu"
)
# check ENV=... ARGS...: start the case in a directory of its own, 8 at a time (a refusal takes
# little more than the process's start, which Debian's libfabric makes 0.2 s of sleep: its
# PSM library calibrates a clock as it loads). judge N: exit 2, one line on stderr, nothing on
# stdout, no rank, no file left.
check() {
	local envs=() dir=$WORK/case.$n
	mkdir -p "$dir/cwd"
	printf '%s' "$*" >"$dir/label"
	while [ $# -gt 0 ] && [[ $1 == *=* ]] && [[ $1 != -* ]]; do
		envs+=("$1")
		shift
	done
	( (cd "$dir/cwd" && timeout 20 env "${envs[@]}" "$EFABENCH" "$@" -v) >"$dir/out" 2>"$dir/err"
		echo $? >"$dir/rc") &
	n=$((n + 1))
	[ $((n % 8)) -ne 0 ] || wait
}
judge() {
	local dir=$WORK/case.$1 label rc
	label=$(cat "$dir/label")
	rc=$(cat "$dir/rc")
	[ "$rc" -eq 2 ] || fail "'$label' exited $rc, want 2: $(head -c 300 "$dir/err")"
	if [ -n "$label" ]; then
		[ "$(wc -l <"$dir/err")" -eq 1 ] || fail "'$label' printed $(wc -l <"$dir/err") lines on stderr, want 1: $(cat "$dir/err")"
		[ ! -s "$dir/out" ] || fail "'$label' printed on stdout"
		# -v makes the launcher name every rank it starts: none may have started.
		! grep -q "is pid" "$dir/err" || fail "'$label' started ranks"
	fi
	[ -z "$(ls -A "$dir/cwd")" ] || fail "'$label' left $(ls -A "$dir/cwd")"
	echo "ok: efabench ${label:0:100} -> $(head -c 150 "$dir/err")"
}
n=0
for args in "${cases[@]}"; do
	# shellcheck disable=SC2086
	check $args
done
# Arguments no list can hold: very long, not UTF-8, a file name in a directory that is not.
long=$(printf 'x%.0s' $(seq 5000))
check write --nics "$long"
check write --provider "$(printf '\xff\xfe')"
check "$(printf '\xff')"
check write --json "$(printf '/tmp/\xff-no-such-dir/x.json')"
check write -b "$long"
# Output files named relative to the working directory are not created by a refused run.
check write --json out.json --provider nosuch
check write --csv out.csv --mem gpu
wait
for ((i = 0; i < n; i++)); do
	judge $i
done
[ "$n" -ge 60 ] || fail "only $n cases"
echo "PASS: $n cases"
