#!/usr/bin/env bash
# sanitize.sh: the CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (gcc), then
# the command queue's and the proxy's CPU modes under ThreadSanitizer.
#
#   build-asan  gcc -fsanitize=address,undefined -fno-sanitize-recover=undefined, CUDA off; every
#               ctest test runs (root-only and GPU tests run or skip as in the plain suite).
#               Every sanitizer report goes to a file of its own (log_path), so a report from a
#               rank whose exit status a test expects to be non-zero (a killed peer, a
#               corrupted run) still fails this script. Leaks: only the reviewed suppressions
#               of tests/sanitizers/lsan.supp (Open MPI's and MPICH's own; libfabric needs none).
#               Excluded, with why: see `excluded` below.
#   build-tsan  gcc -fsanitize=thread: unit.gpuq.tsan (the queue alone), `efabench queue
#               --producers-on cpu` and `efabench proxy --producers-on cpu --np 2 --provider shm`
#               in each of its modes.
#
# Extra arguments go to both ctest passes (e.g. -j2). SAN_SKIP_TSAN=1 skips ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
start=$(date +%s)

# Tests that cannot run under ASan, with why (ctest -E takes one regex).
#  install: builds examples/ against the installed libefabench.a with the plain compiler and
#    pkg-config's flags, which know nothing of the sanitizer runtimes (undefined __asan_*).
#  testbed.slowrail: asserts which matrix cells fall below 0.65 x the typical rate of 4 ranks
#    sharing this host's cores; the sanitizers' CPU cost moves healthy cells across that line.
#    The plain suite runs it (testbed.* below covers it here).
#  fastpath.script, hygiene.repeat, manpage, report, tables, plot.*: timings against a floor
#    program, 20 repeats of runs the suite makes once, the manual, Python reading JSON: no
#    efabench code runs there that the other tests do not run. The plain suite runs them.
#  moe.tcp.np4, moe.shm.np2: the same moe code as moe.shm.np4, at the suite's longest.
#  *.sockets.*: the same efabench code as the tcp and shm tests; only libfabric's differs.
#  campaign.*: one trial of each kill and stop that fault.*, moe.kill, moe.stop, proxy.kill,
#    proxy.stop and stop.collective.* make (under every launcher), run alone for a minute and a
#    half; campaign.corrupt: the flips that fault.corrupt.* and moe.corrupt make.
#  testbed.*: the rendezvous and MPICH launches and the rails' channels over tcp, which
#    stop.collective.rdv, mpi.* and the tcp tests run here; namespaces add no efabench code.
#  badinput: refusals of bad options, which fuzz_opts parses under ASan + UBSan.
#  defaults: --help's defaults against --dry-run and the JSON; its runs at the default sizes are
#    the code that moe.*, write.* and proxy.* run here at small ones.
#  write.tcp.rate: the same --rate code as write.shm.rate; the rates it judges mean nothing here.
#  mpi.*.tcp: the same efabench code under mpirun as their shm twins; tcp's runs without MPI
#    (write.tcp.*, moe.kill.tcp, ...) run here.
excluded='^(install|fastpath\.script|hygiene\.repeat|manpage|report|tables|plot\..*|moe\.tcp\.np4|moe\.shm\.np2|.*\.sockets\..*|campaign\..*|testbed\..*|badinput|defaults|write\.tcp\.rate|mpi\.(write|sendrecv|alltoall|moe)\.tcp)$'
# Tests whose ranks run inside an MPI library (Open MPI's mpirun and srun, MPICH's mpirun): their
# leak stacks need full unwinding to reach the frames tests/sanitizers/lsan.supp names. Without
# it a rank that completes under mpirun reports Open MPI's own allocations (exit 86): the fault
# campaign under mpirun failed so when a stop landed after the run had ended.
mpi='^mpi\.|\.mpich$|^slurm$|\.mpi(\.|$)'

reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
# libinfinipath (loaded with libfabric's psm provider) would catch SIGSEGV before the sanitizers.
export IPATH_NO_BACKTRACE=1

# --- AddressSanitizer + UndefinedBehaviorSanitizer ---------------------------------------------
san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEB_WITH_CUDA=OFF \
	-DEB_BUILD_SHARED=OFF -DCMAKE_C_COMPILER=gcc \
	-DCMAKE_C_FLAGS="$san_flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
built=$(date +%s)

# exitcode=86: a sanitizer error never looks like efabench's own 1 or 2. The reports' files are
# what this script checks; the status only keeps a test from passing by accident.
asan="log_path=$reports/asan:detect_leaks=1:exitcode=86:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
rc=0
(cd build-asan && ASAN_OPTIONS=$asan ctest --output-on-failure --timeout 300 \
	-E "$excluded|$mpi" "$@") || rc=1
(cd build-asan && ASAN_OPTIONS=$asan:fast_unwind_on_malloc=0 ctest --output-on-failure \
	--timeout 300 -R "$mpi" -E "$excluded" "$@") || rc=1
tested=$(date +%s)
found=$(find "$reports" -type f | sort)
if [ -n "$found" ]; then
	echo "sanitize.sh: sanitizer reports (ASan/UBSan/LSan):"
	for f in $found; do
		echo "--- $f"
		cat "$f"
	done
	rc=1
fi
echo "sanitize.sh: asan+ubsan build $((built - start)) s, ctest $((tested - built)) s," \
	"$(echo "$found" | grep -c . || true) report file(s)"
[ $rc -eq 0 ] || { echo "sanitize.sh: FAILED (address/undefined)"; exit 1; }

# --- ThreadSanitizer ---------------------------------------------------------------------------
if [ "${SAN_SKIP_TSAN:-0}" = 1 ]; then
	echo "sanitize.sh: ok (ThreadSanitizer skipped)"
	exit 0
fi
unset UBSAN_OPTIONS LSAN_OPTIONS
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEB_WITH_CUDA=OFF -DEB_WITH_MPI=OFF \
	-DEB_BUILD_SHARED=OFF -DCMAKE_C_COMPILER=gcc \
	-DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
cmake --build build-tsan -j"$jobs" --target efabench-cli test_gpuq_tsan >/dev/null
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:exitcode=86:second_deadlock_stack=1"
bin=build-tsan/efabench
tsan() { # what... : run it; a failure or any report fails the script
	local t0=$SECONDS
	if ! "$@" >"$reports/out" 2>&1; then
		cat "$reports/out"
		echo "sanitize.sh: tsan: failed: $*"
		rc=1
	fi
	echo "sanitize.sh: tsan: $* ($((SECONDS - t0)) s)"
}
tsan build-tsan/tests/unit/test_gpuq_tsan
tsan "$bin" queue --producers-on cpu --producers 1,2,4 -n 20000 --lat-iters 2000 -q
tsan "$bin" proxy --producers-on cpu --np 2 --provider shm -b 64K -e 1M -n 5 -w 1 -q
tsan "$bin" proxy --producers-on cpu --np 2 --provider shm --mode lat -n 50 -w 5 -q
tsan "$bin" proxy --producers-on cpu --np 2 --provider shm --mode rate --producers 1,2 -n 2000 -w 100 -q
found=$(find "$reports" -type f -name 'tsan*' | sort)
if [ -n "$found" ]; then
	echo "sanitize.sh: ThreadSanitizer reports:"
	for f in $found; do
		echo "--- $f"
		cat "$f"
	done
	rc=1
fi
echo "sanitize.sh: total $(($(date +%s) - start)) s"
[ $rc -eq 0 ] || { echo "sanitize.sh: FAILED (thread)"; exit 1; }
echo "sanitize.sh: ok"
