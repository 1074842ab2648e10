#!/usr/bin/env bash
# defaults.sh: the defaults --help prints (its "Defaults" block, per subcommand and mode) are the
# ones a run takes: each row against --dry-run's settings for that mode, and --dry-run against
# real runs' JSON settings (-w, -n, --rounds, the sizes) on shm; the README's table is the
# help's; matrix's, doctor's, queue's and moe's own options' defaults against a run's JSON. Options a
# subcommand does not take are refused (exit 2).
. "$(dirname "$0")/lib.sh"

# Each row: the subcommand's --help and --dry-run for that mode, into files; one Python then
# reads every help's Defaults row for its mode and compares it with what --dry-run resolves.
rows=0
# (CPU producers: the defaults are the same, and a build without CUDA refuses GPU ones)
ipc=ipc:
"$EFABENCH" info | grep -q "^CUDA: built in" || ipc=
for spec in "write:" "sendrecv:" "alltoall:" $ipc "proxy:bw:--mode bw --producers-on cpu" \
	"proxy:lat:--mode lat --producers-on cpu" "proxy:rate:--mode rate --producers-on cpu" \
	"proxy:bw:--producers-on cpu" "moe:decode:--preset decode" "moe:prefill:--preset prefill" \
	"moe:decode:"; do
	IFS=: read -r cmd mode args <<<"$spec"
	rows=$((rows + 1))
	"$EFABENCH" "$cmd" --help >"$WORK/help.$rows" || fail "$cmd --help"
	# shellcheck disable=SC2086
	"$EFABENCH" "$cmd" $args --dry-run >"$WORK/dry.$rows" || fail "$cmd $args --dry-run"
	echo "$cmd:$mode:$args" >"$WORK/spec.$rows"
done
python3 - "$WORK" "$rows" <<'PY' || fail "a --help Defaults row is not what a run would take"
import json, sys
work, rows = sys.argv[1], int(sys.argv[2])
size = lambda s: int(s[:-1]) << 10 * " KMGT".index(s[-1]) if s[-1] in "KMGT" else int(s)
for i in range(1, rows + 1):
    spec = open(f"{work}/spec.{i}").read().strip()
    cmd, mode, _ = spec.split(":", 2)
    lines = open(f"{work}/help.{i}").read().split("\n")
    at = next((k for k, l in enumerate(lines) if l.startswith("Defaults")), None)
    assert at is not None, f"{cmd} --help: no Defaults block"
    table = [l.split() for l in lines[at + 1:] if l.startswith("  ")]
    row = next((r for r in table if (r[0] == mode if mode else r[0].startswith("-"))), None)
    assert row, f"{cmd} --help: no Defaults row for '{mode or 'its only mode'}'"
    v = dict(zip(row[int(bool(mode))::2], row[int(bool(mode)) + 1::2]))
    h = {"b": size(v["-b"]) if "-b" in v else None, "e": size(v["-e"]) if "-e" in v else None,
         "w": int(v["-w"]), "n": int(v["-n"]), "rounds": int(v.get("--rounds", 1))}
    d = json.load(open(f"{work}/dry.{i}"))
    sz = d.get("sizes", [])
    got = {"b": sz[0] if sz else None, "e": sz[-1] if sz else None,
           "w": d["warmup"], "n": d["iters"], "rounds": d.get("rounds", 1)}
    if h["b"] is None:
        got["b"] = got["e"] = None
    assert h == got, f"{spec}: --help says {h}, a run would take {got}"
PY
echo "help rows against --dry-run: $rows"

# The README's table of them is the one the help gives.
readme=$(dirname "$0")/../../README.md
EFABENCH=$EFABENCH bash "$(dirname "$0")/../../scripts/readme-defaults.sh" >"$WORK/table" ||
	fail "scripts/readme-defaults.sh"
sed -n '/^<!-- defaults: /,/^<!-- \/defaults -->/p' "$readme" | sed '1d;$d' >"$WORK/readme"
diff "$WORK/readme" "$WORK/table" ||
	fail "README's defaults differ from --help's (scripts/readme-defaults.sh --write)"
echo "README's defaults: as --help gives them"

# run ARGS...: a real run on shm with --json; its settings and sizes against --dry-run's for
# the same command line.
run() {
	local d
	d=$("$EFABENCH" "$@" --dry-run) || fail "$* --dry-run"
	run_ok "efabench $*" timeout 120 "$EFABENCH" "$@" --np 2 --provider shm --timeout 30 \
		--json "$WORK/out.json"
	python3 - "$d" "$WORK/out.json" <<'PY' || fail "$*: the run took other settings than --dry-run said"
import json, sys
d, j = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))
s = j["settings"] if "settings" in j else j
got = (s["warmup"], s["iters"])
assert got == (d["warmup"], d["iters"]), (got, d)
if "rounds" in s:
    assert s["rounds"] == d["rounds"], (s["rounds"], d)
if d.get("sizes"):
    sizes = sorted({r["size"] for r in j["results"]})
    assert sizes == d["sizes"], (sizes, d["sizes"])
PY
	echo "ran $*: as --dry-run said"
}
run write -b 4K -e 16K
run sendrecv -b 4K -e 8K -w 2
run proxy --producers-on cpu --mode lat -b 8 -e 64
run proxy --producers-on cpu --mode rate --producers 1
run moe --tokens 32 --hidden 256
run moe --preset prefill --tokens 32 --hidden 256 --initiators cpu,a2av

# Subcommands with options of their own (matrix, doctor, queue): each default their --help
# prints, against the value a run records in its JSON.
# own CMD KEYS ARGS...: KEYS is option=json_key[,...]; a run with ARGS on shm.
own() {
	local cmd=$1 keys=$2
	shift 2
	"$EFABENCH" "$cmd" --help >"$WORK/help" || fail "$cmd --help"
	run_ok "efabench $cmd $*" timeout 120 "$EFABENCH" "$cmd" "$@" --json "$WORK/own.json"
	python3 - "$WORK/help" "$WORK/own.json" "$keys" "$*" <<'PY' || fail "$cmd: --help's defaults against its JSON"
import json, re, sys
help_text, doc, keys, args = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
def value(v):
    if v[-1] in units:
        return int(float(v[:-1]) * units[v[-1]])
    try:
        return float(v) if "." in v else int(v)
    except ValueError:
        return v
for pair in keys.split(","):
    opt, key = pair.split("=")
    # the option's text: from its line to the next option's
    m = re.search(r"^ +(?:-\w, )?--%s\b(.*?)(?=^ +-|\Z)" % re.escape(opt), help_text, re.S | re.M)
    assert m, opt
    text = " ".join(m.group(1).split())
    d = re.search(r"default:? ([\w.]+)(?: GPU, ([\w.]+) CPU)?", text) or \
        re.search(r"(\w+) \([^)]*; default\)", text)
    assert d, (opt, text)
    want = value(d.group(2) if d.lastindex and d.lastindex > 1 and d.group(2) and "cpu" in args else d.group(1))
    got = doc[key]
    assert got == want, (opt, "help says", want, "the run took", got)
    print(f"{opt}: help {want}, run {got}")
PY
}
own matrix size=size,iters=iters,warmup=warmup,lat-iters=lat_iters,flag=flag --np 2 --provider shm -q
own doctor size=size,iters=iters,peers=rounds_most,min-link=min_link --np 2 --provider shm -q
own queue iters=per_producer,slots=slots,batch=batch,placement=placement --producers-on cpu -q

# moe's own options: what --help says each preset, mode and option defaults to, against a
# decode and a prefill run given nothing but the preset.
"$EFABENCH" moe --help >"$WORK/help" || fail "moe --help"
for preset in decode prefill; do
	# One initiator: the options compared here shape every initiator's run alike.
	args=(--np 2 --provider shm -n 2 -w 1 -q --initiators a2av)
	[ $preset = prefill ] && args+=(--preset prefill)
	run_ok "efabench moe ${args[*]}" timeout 120 "$EFABENCH" moe "${args[@]}" --json "$WORK/$preset.json"
done
PYTHONPATH="$(dirname "$0")" python3 - "$WORK/help" "$WORK/decode.json" "$WORK/prefill.json" <<'PY' || fail "moe: --help's defaults against its JSON"
import json, re, sys
import help_opts
from help_opts import same
help_text = open(sys.argv[1]).read()
runs = {"decode": json.load(open(sys.argv[2])), "prefill": json.load(open(sys.argv[3]))}
def opt(name):
    return help_opts.opt(help_text, name)
p = opt("preset")
same("preset", re.search(r"(\w+) \(default", p).group(1), runs["decode"]["preset"])
for preset in runs:
    same(f"{preset} tokens", int(re.search(r"%s \((?:default: )?(\d+) tokens" % preset, p).group(1)),
         runs[preset]["tokens"])
    m = re.search(r"both hidden (\d+), top-(\d+) of (\d+) experts", p)
    for i, key in enumerate(("hidden", "topk", "experts")):
        same(f"{preset} {key}", int(m.group(i + 1)), runs[preset][key])
m = opt("mode")
same("decode mode", re.search(r"(\w+) \(decode's default", m).group(1), runs["decode"]["mode"])
same("prefill mode", re.search(r"(\w+) \(prefill's", m).group(1), runs["prefill"]["mode"])
for preset, run in runs.items():
    same(f"{preset} dtype", re.search(r"(\w+) \(default", opt("dtype")).group(1), run["dtype"])
    same(f"{preset} route", re.search(r"(\w+) \(default\)", opt("route")).group(1), run["routing"])
    same(f"{preset} seed", int(re.search(r"default (\d+)", opt("seed")).group(1)), run["seed"])
    same(f"{preset} intra", re.search(r"default auto: (\w+)", opt("intra")).group(1), run["intra"])
    assert "default: --chunk" in opt("piece")
    same(f"{preset} piece", run["chunk"], run["piece"])
    assert "hosts by host name" in opt("hosts")
    same(f"{preset} hosts (one machine)", 1, run["hosts"])
    same(f"{preset} hosts emulated", False, run["hosts_emulated"])
PY

# Options a subcommand does not take: one line, exit 2.
for bad in "moe -b 4K" "moe --rounds 2" "moe --phases 3" "sendrecv --phases 3" "alltoall --phases 2" \
	"ipc --rounds 2"; do
	# shellcheck disable=SC2086
	"$EFABENCH" $bad >"$WORK/out" 2>&1
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/out")" -eq 1 ] && grep -q "unknown option" "$WORK/out" ||
		fail "efabench $bad: exit $rc, $(cat "$WORK/out")"
done
echo "PASS"
