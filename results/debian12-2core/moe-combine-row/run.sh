#!/usr/bin/env bash
# run.sh OUT: moe normal prefill, 2 ranks on shm, host memory, CPU producers and the a2av; the
# build before the combine started from a row per (token, rank) ($OLD) and after ($NEW),
# interleaved, 5 rounds.
set -u
o=${1:?out dir}; mkdir -p "$o"
for r in 1 2 3 4 5; do for b in old new; do
	bin=$NEW; [ $b = old ] && bin=$OLD
	"$bin" moe --np 2 --provider shm --preset prefill --tokens 1024 --mem host --initiators cpu,a2av \
		-n 10 -w 2 -q --json "$o/$b-$r.json" > "$o/$b-$r.txt" 2>&1
	echo "$b-$r rc=$?"
done; done
