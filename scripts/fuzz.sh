#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...]: build the libFuzzer targets of tests/fuzz into build-fuzz (clang,
# ASan + UBSan, CUDA and MPI off) and run each for SECONDS (default 60; all side by side) on a
# copy of its seed corpus (tests/fuzz/corpus/<target>/; the repository is never written).
# Fails on any crash, leak, sanitizer report, 10 s hang or out-of-memory; prints each target's
# executions.
#   size  eb_size_parse / eb_count_parse / eb_size_format (src/core/size.c): accepted sizes
#         format and parse back to the same number
#   opts  eb_opts_parse (src/cli/opts.c), every subcommand's descriptor, NUL-separated argv
#   wire  the bootstrap's frames as the hub, a rank and the rendezvous read them (src/boot)
# A crash leaves its input in build-fuzz/artifacts/<target>/; rerun it with
#   build-fuzz/tests/fuzz/fuzz_<target> build-fuzz/artifacts/<target>/crash-...
# FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-runs=10000000 for a campaign).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(size opts wire)

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DEB_WITH_CUDA=OFF -DEB_WITH_MPI=OFF -DEB_BUILD_SHARED=OFF -DBUILD_TESTING=OFF -DEB_FUZZ=ON \
	-DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# libinfinipath (loaded with libfabric's psm provider) would catch SIGSEGV before ASan does.
export IPATH_NO_BACKTRACE=1
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The targets run side by side (SECONDS of wall time in all, not per target one after another).
run() { # target: its fuzzer on a copy of its corpus; the exit status lands in $work/<t>/status
	local t=$1 status=0
	mkdir -p "$work/$t/corpus" "$root/build-fuzz/artifacts/$t"
	cp "$root/tests/fuzz/corpus/$t"/* "$work/$t/corpus/"
	# -close_fd_mask=2: the targets' own error lines (bad input is their job) stay quiet;
	# libFuzzer and the sanitizers keep writing to the real stderr. The run's directory is
	# the temporary one, so nothing lands in the tree.
	(cd "$work/$t" && "$root/build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
		-artifact_prefix="$root/build-fuzz/artifacts/$t/" ${FUZZ_ARGS:-} corpus) \
		>"$work/$t/log" 2>&1 || status=$?
	echo $status >"$work/$t/status"
}
t0=$SECONDS
for t in "${targets[@]}"; do
	run "$t" &
done
wait
rc=0
for t in "${targets[@]}"; do
	status=$(cat "$work/$t/status" 2>/dev/null || echo "?")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t/log")
	cov=$(grep -a -o 'cov: [0-9]*' "$work/$t/log" | tail -1)
	echo "fuzz.sh: $t: ${execs:-?} executions (${rate:-?}/s), $cov," \
		"corpus $(ls "$work/$t/corpus" | wc -l) inputs, exit $status"
	if [ "$status" != 0 ]; then
		echo "fuzz.sh: $t FAILED; its log:"
		grep -a -v '^#[0-9]' "$work/$t/log" | tail -80
		ls "$root/build-fuzz/artifacts/$t/"
		rc=1
	fi
done
echo "fuzz.sh: ${#targets[@]} target(s) in $((SECONDS - t0)) s"
[ $rc -eq 0 ] && echo "fuzz.sh: ok" || echo "fuzz.sh: FAILED"
exit $rc
