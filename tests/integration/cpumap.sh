#!/usr/bin/env bash
# cpumap.sh [mpi]: --cpu-map pins each local rank, and the wait policy counts the CPUs of every
# rank on the host together: ranks pinned one per core spin, ranks sharing one core yield, and
# so do ranks that a launcher or taskset bound to one core between them. mpi: ranks Open MPI
# binds one per core spin (its own test: the sanitizer run treats MPI ranks apart).
. "$(dirname "$0")/lib.sh"
FLOOR=${FLOOR:-}
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (this process may use $(nproc))"
# The first two CPUs this test may run on.
read -r a b < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')

if [ "${1:-}" = mpi ]; then
	# Open MPI binds 2 ranks one per core by default: one core each, not oversubscription.
	[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
	command -v mpirun >/dev/null || skip "mpirun not found"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	timeout 120 mpirun -np 2 --bind-to core "$EFABENCH" sendrecv -n 50 -w 5 -b 8 -e 8 \
		--provider shm -q --json "$WORK/mpi.json" >"$WORK/mpi.out" 2>&1 ||
		fail "mpirun: $(cat "$WORK/mpi.out")"
	got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["settings"]; print(s["poll"], s["host_ranks"], s["host_cores"])' "$WORK/mpi.json")
	[ "$got" = "spin 2 2" ] || fail "mpirun --bind-to core: want 'spin 2 2', got '$got'"
	echo "ok: mpirun --bind-to core -> $got"
	echo "PASS"
	exit 0
fi

# run NAME WRAPPER ARGS...: a tiny sendrecv under WRAPPER (words, may be empty); its JSON
# settings as "poll host_ranks host_cores cpu_map".
run() {
	local name=$1 wrap=$2
	shift 2
	# shellcheck disable=SC2086
	timeout 60 $wrap "$EFABENCH" sendrecv "$@" --np 2 -n 50 -w 5 -b 8 -e 8 --provider shm -q \
		--json "$WORK/$name.json" >"$WORK/$name.out" 2>&1 || fail "$name: exited $?: $(cat "$WORK/$name.out")"
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["settings"]; print(s["poll"], s["host_ranks"], s["host_cores"], s.get("cpu_map", "-"))' "$WORK/$name.json"
}

got=$(run apart "" --cpu-map "$a,$b")
[ "$got" = "spin 2 2 $a,$b" ] || fail "one core each: want 'spin 2 2 $a,$b', got '$got'"
echo "ok: --cpu-map $a,$b -> $got"
got=$(run shared "" --cpu-map "$a,$a")
[ "$got" = "yield 2 1 $a,$a" ] || fail "one core shared: want 'yield 2 1 $a,$a', got '$got'"
echo "ok: --cpu-map $a,$a -> $got"
got=$(run taskset "taskset -c $a")
[ "$got" = "yield 2 1 -" ] || fail "taskset to one core: want 'yield 2 1 -', got '$got'"
echo "ok: taskset -c $a -> $got"
grep -q "^# poll: yield (auto: 2 ranks here, 1 cores)" "$WORK/taskset.out" ||
	fail "the header does not say why it yields"

# The kernel's view of the ranks while they run: each on its own CPU.
"$EFABENCH" sendrecv --np 2 -n 20000000 -b 8 -e 8 --provider shm -q --cpu-map "$b,$a" \
	>/dev/null 2>&1 &
job=$!
seen=
for _ in $(seq 100); do
	seen=$(for p in $(pgrep -P $job); do taskset -pc "$p" | sed 's/.*: //'; done | sort | tr '\n' ' ')
	[ "$(echo "$seen" | wc -w)" -eq 2 ] && break
	sleep 0.1
done
kill $job 2>/dev/null
wait $job 2>/dev/null
want=$(printf '%s\n' "$a" "$b" | sort | tr '\n' ' ')
[ "$seen" = "$want" ] || fail "ranks' CPUs: want '$want', got '$seen'"
echo "ok: ranks run on CPUs $seen"

if [ -n "$FLOOR" ]; then
	v=$(timeout 60 "$FLOOR" sendrecv 8 200 --provider shm --cpu-map "$a,$b") || fail "floor --cpu-map failed"
	echo "ok: efabench-floor --cpu-map $a,$b -> $v"
	timeout 60 "$FLOOR" sendrecv 8 200 --cpu-map "$a" >/dev/null 2>&1
	[ $? -eq 2 ] || fail "floor: one entry for two ranks was accepted"
fi
echo "PASS"
