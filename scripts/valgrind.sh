#!/usr/bin/env bash
# valgrind.sh: efabench runs under valgrind memcheck (every forked rank and the probe child
# included), each required to end with status 0 and no memcheck error: invalid accesses,
# uninitialised values, and definite or possible leaks (--leak-check=full), apart from the
# reviewed suppressions of tests/sanitizers/valgrind.supp (libfabric's own).
# EFABENCH names the binary (default build/efabench, built with scripts/build.sh if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
bin=${EFABENCH:-$root/build/efabench}
[ -x "$bin" ] || bash scripts/build.sh >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# libinfinipath (loaded with libfabric's psm provider) installs a SIGSEGV handler of its own.
export IPATH_NO_BACKTRACE=1
rc=0
start=$SECONDS
vg() { # efabench args...
	local t0=$SECONDS status=0
	(cd "$work" && valgrind --trace-children=yes --error-exitcode=1 --leak-check=full \
		--suppressions="$root/tests/sanitizers/valgrind.supp" -q "$bin" "$@") \
		>"$work/out" 2>&1 || status=$?
	echo "valgrind.sh: efabench $* -> exit $status ($((SECONDS - t0)) s)"
	if [ $status -ne 0 ] || grep -q '^==[0-9]*== ' "$work/out"; then
		grep -v '^[|#]' "$work/out" | tail -120
		rc=1
	fi
}
vg write --np 2 --provider shm -b 4K -e 64K -n 3
vg sendrecv --np 2 --provider shm -b 4K -e 64K -n 3
vg write --np 2 --provider tcp -b 4K -e 64K -n 3
vg alltoall --np 3 --provider shm -b 4K -e 16K -n 3
vg proxy --producers-on cpu --np 2 --provider shm -b 64K -e 256K -n 3 -w 1
echo "valgrind.sh: $((SECONDS - start)) s"
[ $rc -eq 0 ] && echo "valgrind.sh: ok" || echo "valgrind.sh: FAILED"
exit $rc
