#!/usr/bin/env bash
# The main job's check: write across 4 local ranks on shm with a JSON report, plus info
# (its text, and its facts as JSON and CSV).
. "$(dirname "$0")/lib.sh"
"$EFABENCH" write --np 4 --provider shm -b 64K -e 4M -n 5 -w 1 --json "$WORK/out.json" || fail "write exited $?"
check_json "$WORK/out.json" 21 0
"$EFABENCH" info >"$WORK/info" || fail "info exited $?"
cat "$WORK/info"
grep -q "^shm " "$WORK/info" || fail "info does not list shm"
grep -q "^libfabric: runtime" "$WORK/info" || fail "info does not name the libfabric version"
# Each provider entry once: no two rows of the table alike.
sed -n '/^provider /,/^$/p' "$WORK/info" | sed '1d;/^$/d' | sort | uniq -d >"$WORK/dups"
[ ! -s "$WORK/dups" ] || fail "info prints rows twice: $(cat "$WORK/dups")"

# The same facts as JSON: valid, every key, one record per (provider, domain, fabric, address
# format), the same rows as the text; and on stdout with --json - (no text then).
"$EFABENCH" info --json "$WORK/info.json" >/dev/null || fail "info --json exited $?"
python3 -m json.tool "$WORK/info.json" >/dev/null || fail "info --json wrote invalid JSON"
"$EFABENCH" info --json - >"$WORK/info-stdout.json" || fail "info --json - exited $?"
python3 -m json.tool "$WORK/info-stdout.json" >/dev/null || fail "info --json - is not JSON alone"
python3 - "$WORK/info.json" "$WORK/info" <<'PY' || fail "info --json does not check out"
import json, sys
doc = json.load(open(sys.argv[1]))
for k in ("efabench", "libfabric", "mpi_bootstrap", "cuda", "topology", "gpus", "registration",
          "results"):
    assert k in doc, f"missing {k}"
assert set(doc["libfabric"]) == {"runtime", "built"}, doc["libfabric"]
assert doc["cuda"]["gpus"] == len(doc["gpus"])
assert "hwloc" in doc["topology"]
for g in doc["gpus"]:
    for k in ("index", "name", "sms", "pci", "numa_node", "dmabuf_export", "gpudirect_rdma",
              "nearest_nics"):
        assert k in g, f"GPU lacks {k}"
provs = [r["provider"] for r in doc["registration"]]
assert provs == ["efa", "shm", "verbs", "tcp", "sockets"], provs
for r in doc["registration"]:
    assert r["state"] in ("not tried", "no provider", "no FI_HMEM", "failed", "tried"), r
    assert r["state"] == "tried" or r["dmabuf"] is None, r
    # tried, yet DMA-BUF null: it could not be tried there, and the reason says why
    assert (r["dmabuf_reason"] is not None) == (r["state"] == "tried" and r["dmabuf"] is None), r
    assert r["state"] == "tried" and (r["dmabuf"] or r["hmem_cuda"]) or r["reason"], r
rows = doc["results"]
keys = [(r["provider"], r["domain"], r["fabric"], r["addr_format"]) for r in rows]
assert len(keys) == len(set(keys)), "duplicate provider/NIC rows"
for r in rows:
    for k in ("msg", "rma", "cq_data", "rma_event", "hmem", "ordered_sas", "mr_mode",
              "link_gbps", "usable"):
        assert k in r, f"row lacks {k}"
assert any(r["provider"] == "shm" for r in rows), "no shm row"
text = [l.split()[:3] for l in open(sys.argv[2])]
for r in rows:
    assert [r["provider"], r["domain"], r["fabric"]] in text, f"{r} not in the text"
PY
"$EFABENCH" info --csv "$WORK/info.csv" >/dev/null || fail "info --csv exited $?"
head -1 "$WORK/info.csv" | grep -q "^provider,domain,fabric,addr_format," || fail "info --csv header"
echo "PASS"
