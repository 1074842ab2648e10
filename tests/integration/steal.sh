#!/usr/bin/env bash
# steal.sh: the CPU time a hypervisor took while each point ran (/proc/stat's steal): every
# record has it, with this host's counters; none taken reads 0 with no line after the tables;
# a host with no steal column to read gives null and the run still passes.
. "$(dirname "$0")/lib.sh"
run() { # out-name [env...]
	local out=$1
	shift
	env "$@" "$EFABENCH" write --np 2 -b 4K -e 64K -f 4 -n 20 -w 2 --timeout 20 \
		--json "$WORK/$out.json" >"$WORK/$out" 2>&1 || fail "$out: efabench exited $?"
}
judge() { # out-name ours|fixed|none
	python3 - "$WORK/$1.json" "$2" <<'PY' || fail "$1: cpu_steal is not what $2 calls for"
import json, sys
res, kind = json.load(open(sys.argv[1]))["results"], sys.argv[2]
assert len(res) == 9, len(res)
for r in res:
    s = r["cpu_steal"]
    if kind == "none":
        assert s is None, s
        continue
    assert set(s) == {"ms", "pct", "host"}, s
    assert s["ms"] >= 0 and 0 <= s["pct"] <= 100, s
    assert (s["host"] is None) == (s["ms"] == 0), s  # a host is named only where it lost time
    if kind == "fixed":  # the same counters before and after: nothing taken
        assert s["ms"] == 0 and s["pct"] == 0 and s["host"] is None, s
print(kind, [r["cpu_steal"] for r in res][:2])
PY
}

run ours
judge ours ours
# counters that do not move between readings
mkdir -p "$WORK/root-fixed/proc" "$WORK/root-none/proc"
echo "cpu  100 0 50 1000 0 0 0 25 0 0" >"$WORK/root-fixed/proc/stat"
run fixed EB_PROCFS_ROOT="$WORK/root-fixed"
judge fixed fixed
grep -q "^# CPU steal" "$WORK/fixed" && fail "a line of CPU steal where none was taken"
# a kernel without the steal column
echo "cpu  100 0 50 1000 0 0 0" >"$WORK/root-none/proc/stat"
run none EB_PROCFS_ROOT="$WORK/root-none"
judge none none
grep -q "Out of bounds values : 0 OK" "$WORK/none" || fail "none: the table does not end 0 OK"
echo "PASS"
