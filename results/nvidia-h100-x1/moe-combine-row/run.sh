#!/usr/bin/env bash
# run.sh OUT: the runs of this folder. $OLD and $NEW name the two builds; MPS must be running
# (nvidia-cuda-mps-control -d) and, for --mem device, LD_LIBRARY_PATH name a libfabric with CUDA
# ($CUDA_LIB, put first for those runs only). The test bed part needs root and iproute2.
set -u
o=${1:?out dir}; mkdir -p "$o"
here=$(cd "$(dirname "$0")/../../.." && pwd)
# One GPU: 2 ranks under MPS, GPU memory, old and new interleaved.
for r in 1 2; do for b in old new; do
	bin=$NEW; [ $b = old ] && bin=$OLD; st=; [ $b = new ] && st="--stages all"
	LD_LIBRARY_PATH=$CUDA_LIB:${LD_LIBRARY_PATH:-} "$bin" moe --np 2 --provider shm --mem device \
		--preset prefill --tokens 4096 --initiators gpu,cpu,a2av $st -n 20 -w 3 \
		--json "$o/gpu-$b-$r.json" > "$o/gpu-$b-$r.txt" 2>&1
done; done
# Two emulated hosts, every token, output and sum checked (correctness, not speed).
for m in pinned device; do
	lp=${LD_LIBRARY_PATH:-}; [ $m = device ] && lp=$CUDA_LIB:$lp
	LD_LIBRARY_PATH=$lp "$NEW" moe --np 4 --hosts 2 --provider shm --mem $m --preset prefill \
		--tokens 256 --hidden 1024 --initiators gpu,cpu,a2av -n 3 --check --json "$o/hosts2-$m.json" \
		> "$o/hosts2-$m.txt" 2>&1
done
# The test bed: 4 hosts x 4 rails at 2 Gbit/s, a rank per host, tcp.
bash "$here/scripts/testbed.sh" up 4 4 2gbit
tb() { # name binary initiators args...
	local n=$1 b=$2 ini=$3; shift 3
	EFABENCH=$b bash "$here/scripts/testbed-run.sh" rdv 4 1 moe --provider tcp \
		--nics rail0,rail1,rail2,rail3 --link-gbps 2 -q --json "$o/$n.json" --preset prefill \
		--mode normal --mem pinned --initiators "$ini" --timeout 60 -n 5 -w 1 --tokens 2048 "$@" \
		> "$o/$n.txt" 2>&1
}
tb tb-old-1 "$OLD" cpu,a2av
tb tb-gca-st-0 "$NEW" gpu,cpu,a2av --stages all
for r in 1 2; do
	tb tb-gca-st-$r "$NEW" gpu,cpu,a2av --stages all
	tb tb-ca-st-$r "$NEW" cpu,a2av --stages all
	tb tb-gca-$r "$NEW" gpu,cpu,a2av
done
bash "$here/scripts/testbed.sh" down
