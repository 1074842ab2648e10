#!/usr/bin/env bash
# Start one efabench job on the test bed (scripts/testbed.sh up ...), K ranks per host, placed
# in blocks (ranks 0..K-1 on host 0, ...), and wait for every rank.
#
#   testbed-run.sh rdv   HOSTS K efabench-args...   TCP rendezvous through rank 0 on rail 0
#   testbed-run.sh mpich HOSTS K efabench-args...   MPICH's mpirun, one `ip netns exec` per host
#
# Binaries: $EFABENCH (default build/efabench), $EFABENCH_MPICH (default build/efabench-mpich).
# Rank 0 prints the table on stdout; the job's exit status is the worst rank's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
P=${EB_TESTBED_PREFIX:-ebtb}
via=${1:?usage: testbed-run.sh rdv|mpich HOSTS K efabench-args...}
hosts=${2:?HOSTS}
per=${3:?K}
shift 3
[ "$(id -u)" -eq 0 ] || { echo "testbed-run: needs root" >&2; exit 2; }
for h in $(seq 0 $((hosts - 1))); do
	ip netns list | grep -q "^${P}h$h\b" || { echo "testbed-run: no host ${P}h$h: run testbed.sh up first" >&2; exit 2; }
done
n=$((hosts * per))
case "$via" in
rdv)
	bin=${EFABENCH:-$here/../build/efabench}
	port=${EB_RDV_PORT:-$((20000 + RANDOM % 20000))}
	root="$(bash "$here/testbed.sh" addr 0 0):$port"
	# A fresh secret per job: ranks of another job cannot join this one.
	EFABENCH_TOKEN=${EFABENCH_TOKEN:-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}
	export EFABENCH_TOKEN
	pids=()
	for r in $(seq 0 $((n - 1))); do
		EFABENCH_HOST="${P}h$((r / per))" ip netns exec "${P}h$((r / per))" \
			"$bin" "$@" --root "$root" --rank "$r" --ranks "$n" &
		pids+=($!)
	done
	worst=0
	for pid in "${pids[@]}"; do
		wait "$pid"
		rc=$?
		[ $rc -gt $worst ] && worst=$rc
	done
	exit $worst
	;;
mpich)
	bin=${EFABENCH_MPICH:-$here/../build/efabench-mpich}
	[ -x "$bin" ] || { echo "testbed-run: $bin missing: install MPICH (libmpich-dev) and rebuild" >&2; exit 2; }
	command -v mpirun.mpich >/dev/null || { echo "testbed-run: mpirun.mpich not found" >&2; exit 2; }
	args=()
	for h in $(seq 0 $((hosts - 1))); do
		[ $h -gt 0 ] && args+=(:)
		args+=(-np "$per" env EFABENCH_HOST="${P}h$h" ip netns exec "${P}h$h" "$bin" "$@")
	done
	exec mpirun.mpich "${args[@]}"
	;;
*)
	echo "testbed-run: launcher must be rdv or mpich" >&2
	exit 2
	;;
esac
