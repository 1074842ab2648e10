#!/usr/bin/env bash
# fault-campaign.sh [TRIALS]: random rank faults, counted. For every benchmark (write, sendrecv,
# alltoall on shm and tcp, proxy with CPU producers, moe with CPU producers and its all-to-all-v on
# shm and tcp; proxy with GPU producers and ipc where GPUs are; not queue, one process with no peer
# to lose) and every fault (SIGKILL: a dead rank; SIGSTOP: a stuck one), TRIALS times: start a run
# that takes about RUN_S seconds, hit a random rank at a random moment, then require that the job
# ends within RUN_S + deadline + 5 s with a non-zero status, that a line names the victim (a
# survivor's "lost rank V", or the launcher's "rank V (pid P) killed" / "is stopped"; under mpirun a
# rank stopped inside MPI_Init cannot be named, and the others' "MPI start-up did not finish" is
# counted apart), that no survivor crashed, and that no process and no /dev/shm segment of the job
# is left. Prints one line per trial and a table of counts; exit 1 if any trial failed. EFABENCH
# names the binary (default build/efabench); TIMEOUT the deadline (2); ONLY a list of the benchmarks
# to run (names as in the table). LAUNCH: local (default, the embedded launcher), rdv (the TCP
# rendezvous on loopback, a process per rank, tcp only: with no launcher, a stopped rank is left for
# the user's launcher, so the campaign ends it) or mpi (Open MPI's mpirun, tcp only). ERR_LINES: how
# many lines of a failed trial's stderr to print (5); SIGS: the faults ("KILL STOP").
set -u
cd "$(dirname "$0")/.."
bin=${EFABENCH:-build/efabench}
trials=${1:-50}
deadline=${TIMEOUT:-2}
run_s=${RUN_S:-1.5}
launch=${LAUNCH:-local}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total=0 failed=0
declare -A ok bad late waited startup

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

# The command of a run of about run_s seconds: -n from the wall times of calibration runs of
# 1 and k iterations (k growing until the difference is 0.3 s at least: tenfold while it is
# too small to judge, else straight to about 0.5 s by the rate it shows, at most tenfold), so
# start-up, pairs, variants and outliers count as they will in the trials.
calibrate() { # name args...
	local t1 tk k=100
	shift
	t1=$(wall "$@" -n 1) || return 1
	while :; do
		tk=$(wall "$@" -n $k) || return 1
		awk -v a="$t1" -v b="$tk" 'BEGIN { exit !(b - a >= 0.3) }' || [ $k -ge 1000000 ] && break
		k=$(awk -v a="$t1" -v b="$tk" -v k=$k 'BEGIN { d = b - a
			print (d < 0.05 ? k * 10 : int(k * (0.5 / d > 10 ? 10 : 0.5 / d < 2 ? 2 : 0.5 / d))) }')
	done
	awk -v a="$t1" -v b="$tk" -v k=$k -v s="$run_s" 'BEGIN { n = int(s * (k - 1) / (b - a)); print (n > 10 ? n : 10) }'
}
wall() { # args...: seconds one run takes
	local t0
	t0=$(now)
	"$bin" "$@" -w 1 -q >/dev/null 2>"$work/calib.err" || return 1
	awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.4f", a - b }'
}

# start_job NP ARGS...: the job in the background ($job); rank r's pid on line r + 1 of
# $work/pids; rank 0's stdout in $work/out; stderr in $work/err (rdv: once the job ended).
start_job() {
	local np=$1 r p
	shift
	: >"$work/pids"
	touch "$work/start" # shm segments older than the job are not its ranks'
	case $launch in
	local)
		"$bin" "$@" --np "$np" >"$work/out" 2>"$work/err" &
		job=$!
		for _ in $(seq 100); do
			[ "$(grep -c ' is pid ' "$work/err")" -ge "$np" ] && break
			sleep 0.05
		done
		for r in $(seq 0 $((np - 1))); do
			sed -n "s/^efabench: rank $r is pid \([0-9]*\)$/\1/p" "$work/err" >>"$work/pids"
		done
		;;
	rdv)
		# A job ends when every rank but a stopped one has exited; its status is the worst.
		(
			port=$((20000 + RANDOM % 20000)) worst=0
			export EFABENCH_TOKEN=campaign-$$
			for r in $(seq 0 $((np - 1))); do
				"$bin" "$@" --root "127.0.0.1:$port" --rank "$r" --ranks "$np" \
					>"$work/out$r" 2>"$work/err$r" &
				echo $! >>"$work/pids"
			done
			while :; do
				alive=0
				for p in $(cat "$work/pids"); do
					[ -d /proc/$p ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != T ] &&
						[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] && alive=1
				done
				[ $alive = 0 ] && break
				sleep 0.05
			done
			for p in $(cat "$work/pids"); do
				[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = T ] && continue
				wait "$p"
				rc=$?
				[ $rc -gt $worst ] && worst=$rc
			done
			cp "$work/out0" "$work/out"
			cat "$work"/err[0-9]* >"$work/err"
			exit $worst
		) &
		job=$!
		for _ in $(seq 100); do
			[ "$(wc -l <"$work/pids")" -ge "$np" ] && break
			sleep 0.05
		done
		;;
	mpi)
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe \
			-np "$np" "$bin" "$@" >"$work/out" 2>"$work/err" &
		job=$!
		# A child of mpirun names its rank in its environment once it has exec'd efabench
		# (before, it shows mpirun's): wait until every rank is found.
		for _ in $(seq 200); do
			local -a by_rank=()
			for p in $(pgrep -P $job); do
				[ "$(cat /proc/$p/comm 2>/dev/null)" = efabench ] || continue
				r=$(tr '\0' '\n' </proc/$p/environ 2>/dev/null |
					sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
				[ -n "$r" ] && by_rank[r]=$p
			done
			[ ${#by_rank[@]} -ge "$np" ] && break
			sleep 0.05
		done
		printf '%s\n' "${by_rank[@]}" >"$work/pids" # in rank order: indexed by rank
		;;
	esac
}

trial() { # name signal np args...
	local name=$1 sig=$2 np=$3 victim pid job start end rc took p pids verdict
	shift 3
	start_job "$np" "$@" --timeout "$deadline" -q -v
	victim=$((RANDOM % np))
	pid=$(sed -n "$((victim + 1))p" "$work/pids")
	pids=$(cat "$work/pids")
	sleep "$(awk -v r=$RANDOM -v s="$run_s" 'BEGIN { printf "%.2f", 0.05 + r / 32768 * s * 0.8 }')"
	start=$(now)
	if [ -z "$pid" ] || ! kill -"$sig" "$pid" 2>/dev/null; then
		wait $job
		echo "$name $sig: rank $victim had already exited; not counted"
		return
	fi
	limit=$(awk -v r="$run_s" -v d="$deadline" 'BEGIN { print int(r + d + 5) + 1 }')
	for _ in $(seq $((limit * 10))); do
		kill -0 $job 2>/dev/null || break
		sleep 0.1
	done
	verdict=ok
	if kill -0 $job 2>/dev/null; then
		verdict="still running after ${limit} s"
		# Where the others are, for the record (gdb, where installed).
		for p in $pids; do
			[ "$p" != "$pid" ] && [ -d /proc/$p ] && command -v gdb >/dev/null &&
				timeout 20 gdb -p "$p" -batch -ex "thread apply all bt 12" 2>/dev/null |
				grep -E "^#|^Thread" | grep -v "in ?? ()" | sed "s/^/    [pid $p] /" | head -40
		done
		# Every other rank has left: only the user's launcher (mpirun) still waits for the
		# stopped victim. A complete, verified run means the stop landed after its last word
		# (not counted); otherwise the ranks did their part, and the launcher's wait is counted
		# apart ("launcher waited"), the victim ended for it.
		others=0
		for p in $pids; do
			[ "$p" != "$pid" ] && [ -d /proc/$p ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] &&
				others=1
		done
		if [ "$launch" != local ] && [ $others = 0 ]; then
			kill -9 "$pid" 2>/dev/null
			# mpirun (Open MPI 4.1) has been seen to hang on a lock for good with every rank
			# gone, its ranks unreaped: ended here, counted with the launcher's waits.
			for _ in $(seq 100); do
				kill -0 $job 2>/dev/null || break
				sleep 0.1
			done
			kill -0 $job 2>/dev/null && kill -9 $job &&
				echo "$name $sig: every rank had gone, the launcher had not exited 10 s later; ended it"
			if grep -q "Out of bounds values : 0 OK" "$work/out"; then
				wait $job
				echo "$name $sig: rank $victim was stopped after its run; its launcher waits for it; not counted"
				return
			fi
			verdict=ok
			waited["$name $sig"]=$((${waited["$name $sig"]:-0} + 1))
			echo "$name $sig: every other rank left; the launcher still waited for stopped rank $victim"
		fi
		if [ "$verdict" != ok ]; then
			pkill -9 -P $job
			kill -9 $job
		fi
	fi
	wait $job
	rc=$?
	end=$(now)
	took=$(secs "$end" "$start")
	if [ "$verdict" = ok ] && [ $rc -eq 0 ]; then
		# The fault landed after the victim's last word (a zombie takes SIGSTOP and exits):
		# a complete, verified run is the right outcome, but no trial of the fault.
		if grep -q "Out of bounds values : 0 OK" "$work/out"; then
			echo "$name $sig: rank $victim had finished its run; not counted"
			return
		fi
		verdict="exit 0 after losing rank $victim"
	fi
	# Without the embedded launcher a survivor's error line names the rank it lost or waited on
	# (mpirun also says "process rank V with PID"); the user's launcher ends a stopped rank.
	if [ "$verdict" = ok ] && ! grep -Eq "lost rank $victim\b|rank $victim \(pid $pid\) (killed|is stopped)|error: .*rank $victim\b|rank $victim with PID|ranks( [0-9]+)* $victim\b" "$work/err"; then
		verdict="no line names rank $victim"
		# Stopped inside MPI_Init: before it returns MPI cannot say who is missing, so the
		# others can only say that start-up did not finish by the deadline. Counted apart.
		if [ "$launch" = mpi ] && grep -q "MPI start-up .* did not finish" "$work/err"; then
			verdict=ok
			startup["$name $sig"]=$((${startup["$name $sig"]:-0} + 1))
			echo "$name $sig: rank $victim was stopped in MPI start-up; the others said start-up did not finish"
		fi
	fi
	# A survivor must fail cleanly: a crash (SIGSEGV, SIGABRT, SIGBUS, ...) is a failed trial
	# even where the job ended in time. libpsm2, which libfabric loads, catches SIGSEGV and
	# leaves its backtrace in a file NAME.80s-PID,HOST.btr in the current folder.
	crashed=$(grep -E "(killed by|terminated with|exited on) signal (4|6|7|8|11)\b" "$work/err"; cat ./*.btr 2>/dev/null)
	rm -f ./*.btr
	if [ "$verdict" = ok ] && [ -n "$crashed" ]; then
		verdict="a rank crashed"
		echo "$crashed" | head -${ERR_LINES:-5} | sed 's/^/    /'
	fi
	[ "$launch" != local ] && [ "$sig" = STOP ] && kill -9 "$pid" 2>/dev/null
	for p in $pids; do
		if [ "$verdict" = ok ] && [ -d /proc/$p ] && grep -q efabench /proc/$p/cmdline 2>/dev/null; then
			verdict="rank pid $p left running"
			kill -9 "$p"
		fi
		left=$(find /dev/shm -maxdepth 1 -name "$p:*" -newer "$work/start" -printf '%f ' 2>/dev/null)
		if [ "$verdict" = ok ] && [ -n "$left" ]; then
			verdict="rank pid $p left /dev/shm/${left% } (last written $(stat -c %y "/dev/shm/${left%% *}" |
				cut -c12-23); signal sent at $(date -d "@$start" +%T.%3N))"
			rm -f "/dev/shm/$p:"*
		fi
	done
	total=$((total + 1))
	key="$name $sig"
	if [ "$verdict" = ok ]; then
		ok[$key]=$((${ok[$key]:-0} + 1))
	else
		bad[$key]=$((${bad[$key]:-0} + 1))
		failed=$((failed + 1))
		sed 's/^/    /' "$work/err" | grep -v " is pid " | tail -${ERR_LINES:-5}
	fi
	awk -v t="$took" -v d="$deadline" 'BEGIN { exit !(t > d + 5) }' && late[$key]=$((${late[$key]:-0} + 1))
	echo "$key: victim rank $victim, ended in $took s, status $rc: $verdict"
}

benches=(
	"write-shm 3 write --provider shm -b 256K -e 256K"
	"write-tcp 3 write --provider tcp -b 256K -e 256K"
	"write-shm-4x64M 4 write --provider shm -b 64M -e 64M"
	"sendrecv-shm 3 sendrecv --provider shm -b 64K -e 64K"
	"alltoall-shm 4 alltoall --provider shm -b 64K -e 64K"
	"alltoall-tcp 3 alltoall --provider tcp -b 64K -e 64K"
	"proxy-cpu 2 proxy --producers-on cpu --provider shm -b 1M -e 1M"
	"moe-shm 3 moe --initiators cpu,a2av --provider shm --tokens 64 --hidden 1024 --experts 96"
	"moe-tcp 3 moe --initiators cpu,a2av --provider tcp --tokens 64 --hidden 1024 --experts 96"
)
# Where CUDA sees GPUs: the proxy with GPU producers (a persistent kernel pushing puts; pinned
# memory, so that no libfabric with CUDA is needed) and, with two GPUs, ipc (one rank per GPU,
# CUDA IPC mappings of each other's memory).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$launch" = local ] && [ "$gpus" -ge 1 ] && "$bin" info 2>/dev/null | grep -q "^CUDA: built in"; then
	benches+=("proxy-gpu 2 proxy --producers-on gpu --mem pinned --provider shm -b 1M -e 1M")
fi
if [ "$launch" = local ] && [ "$gpus" -ge 2 ]; then
	benches+=("ipc 2 ipc --methods ce,st --dirs write --grid all --block 1024 -b 64M -e 64M")
fi
# Without the embedded launcher a killed rank's shm segment is removed by its survivors (at
# exit, or in their SIGTERM handler when mpirun ends them first): shm is checked there too.
[ "$launch" = local ] || benches=(
	"write-shm 3 write --provider shm -b 256K -e 256K"
	"alltoall-shm 3 alltoall --provider shm -b 64K -e 64K"
	"write-tcp 3 write --provider tcp -b 256K -e 256K"
	"sendrecv-tcp 3 sendrecv --provider tcp -b 64K -e 64K"
	"alltoall-tcp 3 alltoall --provider tcp -b 64K -e 64K"
	"proxy-cpu-tcp 2 proxy --producers-on cpu --provider tcp -b 1M -e 1M"
	"moe-tcp 3 moe --initiators cpu,a2av --provider tcp --tokens 64 --hidden 1024 --experts 96"
)
for b in "${benches[@]}"; do
	read -r name np args <<<"$b"
	[ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue # ONLY="proxy-cpu write-shm"
	# shellcheck disable=SC2086
	n=$(calibrate "$name" $args --np "$np") || {
		echo "$name: calibration run failed:"
		tail -5 "$work/calib.err"
		failed=$((failed + 1))
		continue
	}
	for sig in ${SIGS:-KILL STOP}; do
		for _ in $(seq "$trials"); do
			# shellcheck disable=SC2086
			trial "$name" "$sig" "$np" $args -n "$n" -w 1
		done
	done
done
printf "\n| benchmark | fault | trials | caught | failed | past deadline + 5 s | launcher waited | in MPI start-up |\n|---|---|---:|---:|---:|---:|---:|---:|\n"
for b in "${benches[@]}"; do
	name=${b%% *}
	for sig in ${SIGS:-KILL STOP}; do
		key="$name $sig"
		printf "| %s | SIG%s | %d | %d | %d | %d | %d | %d |\n" "$name" "$sig" $((${ok[$key]:-0} + ${bad[$key]:-0})) \
			"${ok[$key]:-0}" "${bad[$key]:-0}" "${late[$key]:-0}" "${waited[$key]:-0}" "${startup[$key]:-0}"
	done
done
echo "$total trials, $failed failed"
[ "$failed" -eq 0 ]
