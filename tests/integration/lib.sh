# Shared helpers for the integration tests (sourced). Each test is a real efabench run on a
# real libfabric provider in real processes.
set -u
EFABENCH=${EFABENCH:?set EFABENCH to the efabench binary}
WORK=$(mktemp -d /tmp/efabench-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
touch "$WORK/.start"
# The sockets provider's progress thread sleeps between polls unless told not to.
export FI_SOCKETS_PE_WAITTIME=0
# The testing aids (--corrupt-at, --misplace-chunk, ...) also need this; tests use them on purpose.
export EFABENCH_TESTING=1

# libfabric shm's segments in /dev/shm named by process PID ("<pid>:<uid>:<n>") and made since
# this test began, space-separated: an older one is a leftover of an earlier process that had
# the same pid, not this test's.
shm_left() { # pid
	find /dev/shm -maxdepth 1 -name "$1:*" -newer "$WORK/.start" -printf '%f ' 2>/dev/null
}

# A rank's pid still runs efabench (a zombie's command line is empty). Judging ranks by pid, not
# by command line, keeps another test's identical job (ctest -j) from counting.
rank_alive() { # pid
	grep -qa efabench "/proc/$1/cmdline" 2>/dev/null
}

# The ranks of a job run with -v that are still alive: of the pids its launcher printed
# ("efabench: rank N is pid P").
ranks_alive() { # stderr-file
	local p
	for p in $(sed -n 's/^efabench: rank [0-9]* is pid \([0-9]*\)$/\1/p' "$1"); do
		rank_alive "$p" && echo "$p"
	done
}

# Start a job of ranks (CMD..., with -v so the launcher names their pids; stdout in $WORK/out,
# stderr in $WORK/err), wait until it measures (rank 0 says so with -v), hit rank
# VICTIM with SIGNAL and wait for the job, at most TIMEOUT + 5 s; it must exit non-zero, and
# with RANKS > 0 that many ranks must be alive before the hit. Sets pid (the victim's), rc
# (the job's exit status) and took (seconds from the hit to the job's end).
hit_rank() { # victim signal timeout ranks cmd...
	local victim=$1 sig=$2 timeout=$3 ranks=$4 job start
	shift 4
	"$@" >"$WORK/out" 2>"$WORK/err" &
	job=$!
	pid=
	for _ in $(seq 300); do
		pid=$(sed -n "s/^efabench: rank $victim is pid \([0-9]*\)$/\1/p" "$WORK/err")
		[ -n "$pid" ] && grep -q "rank 0\]: measuring " "$WORK/err" && break
		sleep 0.1
	done
	[ -n "$pid" ] || { kill -9 $job; fail "rank $victim never started"; }
	sleep 1
	if [ "$ranks" -gt 0 ] && [ "$(ranks_alive "$WORK/err" | wc -l)" -ne "$ranks" ]; then
		kill -9 $job
		fail "not $ranks live ranks before the fault"
	fi
	start=$(date +%s.%N)
	kill -"$sig" "$pid"
	for _ in $(seq $(((timeout + 5) * 10))); do
		kill -0 $job 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $job 2>/dev/null; then
		pkill -9 -P $job
		kill -9 $job "$pid" 2>/dev/null
		fail "job still running $((timeout + 5)) s after rank $victim was hit"
	fi
	wait $job
	rc=$?
	took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
	cat "$WORK/err" >&2
	[ $rc -ne 0 ] || fail "job exited 0 after losing rank $victim"
	if [ "$sig" = STOP ]; then
		grep -q "efabench: error: rank $victim (pid $pid) is stopped" "$WORK/err" ||
			fail "the launcher did not name stopped rank $victim"
	fi
}

# After hit_rank, once the test checked what the survivors said: no rank outlived the job.
hit_done() {
	local alive
	alive=$(ranks_alive "$WORK/err")
	[ -z "$alive" ] || fail "rank pid(s) $alive outlived the job"
	echo "PASS: all ranks exited in $took s, rc=$rc"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# Run a command with stdout in $WORK/out and stderr in $WORK/err, show both, and return its
# exit status.
run_show() { # cmd...
	local rc
	"$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/out"
	cat "$WORK/err" >&2
	return $rc
}

# The same, failing unless it exits 0 (what names the command in the message).
run_ok() { # what cmd...
	local what=$1
	shift
	run_show "$@" || fail "$what exited $?"
}

# Every record of a JSON report: valid JSON, the expected record count, #wrong as given.
check_json() { # file records wrong_expected(0 or "some")
	# shellcheck disable=SC2016
	python3 - "$@" <<'PY' || fail "JSON report $1 does not check out"
import json, sys
path, records, wrong = sys.argv[1], int(sys.argv[2]), sys.argv[3]
doc = json.load(open(path))
res = doc["results"]
assert len(res) == records, f"{len(res)} records, want {records}"
for r in res:
    for k in ("size", "count", "gbps", "lat_us", "min_us", "p50_us", "p99_us", "max_us", "wrong",
              "groups", "layout", "flow", "nics_used", "bytes_per_iter", "phases", "samples",
              "phase_min_us", "phase_p50_us", "phase_max_us", "phase_stddev_us"):
        assert k in r, f"missing {k}"
    n = doc["settings"]["ranks"]
    assert r["count"] == r["size"] // 4
    each = ("min_us", "p50_us", "p99_us", "max_us", "stddev_us")
    phase = ("phase_min_us", "phase_p50_us", "phase_max_us", "phase_stddev_us")
    for x in [r] + r["groups"]:
        if r["phases"] == 0:  # every iteration timed: its percentiles, no phase figures
            assert x["min_us"] <= x["p50_us"] <= x["p99_us"] <= x["max_us"], x
            assert all(x[k] is None for k in phase), x
        else:  # timed by the phase: the phases' spread, no per-iteration figure
            assert all(x[k] is None for k in each), x
            assert x["phase_min_us"] <= x["phase_p50_us"] <= x["phase_max_us"], x
            assert x["phase_min_us"] * 0.999999 <= x["lat_us"] <= x["phase_max_us"] * 1.000001, x
    if r["phases"] > 0:
        assert r["samples"] == r["phases"] * len(r["groups"]), r
    assert r["gbps"] > 0 and r["lat_us"] > 0
    want = {"pairs": n - 1, "fanout": 1, "all-to-all": n}[r["flow"]]
    assert len(r["groups"]) == want, f'{len(r["groups"])} groups for {r["flow"]}'
    per_iter = r["size"] * (1 if r["flow"] == "pairs" else n - 1)
    assert r["bytes_per_iter"] == per_iter
    # Gbps is 8 * bytes per iteration / t, as documented
    assert abs(r["gbps"] - 8 * per_iter / (r["lat_us"] * 1e-6) / 1e9) < 1e-6 * r["gbps"] + 1e-9
    if r["flow"] == "all-to-all":
        t = r["nccl_tests"]
        assert abs(t["busbw_GBps"] - t["algbw_GBps"] * (n - 1) / n) < 1e-9 + 1e-9 * t["algbw_GBps"]
if wrong == "0":
    assert all(r["wrong"] == 0 for r in res), "wrong words reported"
else:
    assert sum(r["wrong"] for r in res) > 0, "corruption went unnoticed"
PY
}

# Every figure of a harness report against its definition (README, --help): bytes per iteration,
# Gbps from the mean time, the NICs a measuring rank drives (distinct NICs of the channels its
# layout uses) and BusBW % of the link times those NICs (null without a link speed).
check_definitions() { # file
	python3 - "$1" <<'PY' || fail "a record of $1 does not match the definitions"
import json, sys
doc = json.load(open(sys.argv[1]))
st = doc["settings"]
n, nics, link = st["ranks"], st["channel_nics"], st["link_gbps"]
def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12)
for r in doc["results"]:
    peers = 1 if r["flow"] == "pairs" else n - 1
    assert close(r["bytes_per_iter"], r["size"] * peers), r
    t = r["lat_us"] * 1e-6
    if "mmsg_per_s" not in r:
        assert close(r["gbps"], 8 * r["bytes_per_iter"] / t / 1e9), (r["gbps"], r["lat_us"])
    chans = {"single": [0], "split": range(len(nics)),
             "round-robin": [p % len(nics) for p in range(1, n)]}[r["layout"]]
    assert r["nics_used"] == len({nics[c] for c in chans}), (r["layout"], r["nics_used"], nics)
    if link is None:
        assert r["busbw_pct"] is None, r
    else:
        assert close(r["busbw_pct"], 100 * r["gbps"] / (link * r["nics_used"])), r
PY
}
