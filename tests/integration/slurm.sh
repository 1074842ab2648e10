#!/usr/bin/env bash
# slurm.sh: efabench launched by Slurm's srun on a one-node cluster this test brings up as root
# in a temporary folder (its own munged socket and key, slurm.conf, free ports, state, spool and
# logs), then tears down, leaving no daemon behind:
#   srun --mpi=pmix -n 2 efabench write|sendrecv      (Open MPI build: PMIx)
#   srun --mpi=pmi2 -n 2 efabench-mpich write         (MPICH build: PMI-2), where built
# Each must exit 0, run on the MPI bootstrap ("launcher: mpi") and end with
# "Out of bounds values : 0 OK". Skipped (77) when not root, without slurm-wlm and munge, or
# when the daemons do not bring the node up.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to run slurmctld and slurmd"
for p in munged slurmctld slurmd srun sinfo squeue scancel python3; do
	command -v $p >/dev/null || skip "$p not found (scripts/install-deps.sh installs slurm-wlm and munge)"
done
[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"

S=$WORK/slurm
mkdir -p "$S/state" "$S/spool"
chmod 711 "$WORK" "$S" # munged wants its socket's folders searchable
export SLURM_CONF=$S/slurm.conf
pids=()

# Stop what this test started, by pid: jobs first (their slurmstepd go with them), then slurmd,
# slurmctld and munged; SIGKILL whatever outlives 5 s.
stop_all() {
	local p alive
	if [ ${#pids[@]} -gt 0 ]; then
		timeout 5 scancel --quiet --user=root >/dev/null 2>&1
		for _ in $(seq 1 50); do
			[ -z "$(timeout 2 squeue -h 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for _ in $(seq 1 50); do
		alive=0
		for p in "${pids[@]}"; do
			kill -0 "$p" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop_all; rm -rf "$WORK"' EXIT

logs() {
	local f
	for f in "$S"/*.log "$S"/*.out; do
		[ -f "$f" ] && { echo "--- $f"; tail -15 "$f"; }
	done
}

host=$(hostname -s)
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$S/munge.key"
munged -F -f --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--seed-file="$S/munged.seed" --log-file="$S/munged.log" >"$S/munged.out" 2>&1 &
pids+=($!)

cat >"$SLURM_CONF" <<EOF
ClusterName=efabench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
MessageTimeout=5
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=efabench Nodes=ALL Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP
EOF

for _ in $(seq 1 50); do
	[ -S "$S/munge.sock" ] && break
	sleep 0.1
done
[ -S "$S/munge.sock" ] || { logs; skip "munged did not start"; }
slurmctld -D -i -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
pids+=($!)

# The node is idle within seconds where Slurm can run; give it 20.
deadline=$((SECONDS + 20))
state=
while [ $SECONDS -lt $deadline ]; do
	state=$(timeout 5 sinfo -h -N -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null || { logs; skip "a Slurm daemon exited (pid $p): see its log above"; }
	done
	sleep 0.2
done
[ "$state" = idle ] || { logs; skip "the node is not idle after 20 s (state '${state:-none}')"; }
echo "# one-node Slurm up: node $host idle, slurmctld :$ctld_port, slurmd :$slurmd_port"
srun --mpi=list 2>&1 | sed 's/^/# /'

# srun_check MPI BINARY BENCH: a 2-rank run through srun --mpi=MPI, checked.
srun_check() {
	local mpi=$1 bin=$2 bench=$3 rc
	echo "# srun --mpi=$mpi -n 2 $(basename "$bin") $bench -b 4K -e 64K -n 3"
	timeout 60 srun --mpi="$mpi" -n 2 --overcommit --time=2 "$bin" "$bench" -b 4K -e 64K -n 3 \
		--timeout 20 >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/out"
	cat "$WORK/err" >&2
	[ $rc -eq 0 ] || fail "srun --mpi=$mpi $(basename "$bin") $bench exited $rc"
	grep -q "launcher: mpi" "$WORK/out" || fail "$bench under srun --mpi=$mpi did not use the MPI bootstrap"
	[ "$(grep -c '^# version: .*  ranks: 2 ' "$WORK/out")" = 1 ] || fail "not one job of 2 ranks"
	grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "$bench under srun --mpi=$mpi: no '0 OK'"
}

ran=0
if srun --mpi=list 2>&1 | grep -qw pmix; then
	srun_check pmix "$EFABENCH" write
	srun_check pmix "$EFABENCH" sendrecv
	ran=1
else
	echo "# this Slurm has no pmix plugin: Open MPI's efabench not run"
fi
if [ -n "${EFABENCH_MPICH:-}" ] && srun --mpi=list 2>&1 | grep -qw pmi2; then
	srun_check pmi2 "$EFABENCH_MPICH" write
	ran=1
else
	echo "# efabench-mpich not built or no pmi2 plugin: MPICH under srun not run"
fi
[ $ran = 1 ] || skip "no MPI plugin of this Slurm fits the efabench builds here"
# Without a PMI every task would fork a job of its own and pass alone: refused instead.
timeout 60 srun --mpi=none -n 2 --overcommit --time=2 "$EFABENCH" write -b 4K -e 4K -n 2 \
	>"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/err" >&2
[ $rc -ne 0 ] || fail "srun --mpi=none ran 2 separate jobs and passed"
grep -q "srun started 2 tasks without a PMI" "$WORK/err" || fail "srun --mpi=none: no line says why"

# Everything this test started stops, and nothing of it is left.
all=("${pids[@]}")
stop_all
for p in "${all[@]}"; do
	kill -0 "$p" 2>/dev/null && fail "daemon pid $p still runs after the teardown"
done
echo "PASS"
