#!/usr/bin/env bash
# A multi-host, multi-rail test bed on one machine (root only).
#
#   testbed.sh up HOSTS RAILS RATE   hosts ${P}h0..: network namespaces; rail r is its own
#                                    subnet 10.77.r.0/24 and bridge in namespace ${P}sw,
#                                    joining every host's interface "rail<r>" (10.77.r.<h+1>);
#                                    tc tbf limits each rail interface to RATE both ways;
#                                    TCP inside uses $EB_TESTBED_CC (default reno), no
#                                    receive-buffer autotuning ($EB_TESTBED_AUTOTUNE=1: on)
#   testbed.sh down                  remove every namespace, link and qdisc it made
#   testbed.sh addr HOST RAIL        print host HOST's address on rail RAIL
#   testbed.sh nics RAILS            print the --nics list: rail0,rail1,...
#   testbed.sh exec HOST CMD...      run CMD inside host HOST
#   testbed.sh rate HOST RAIL RATE   change one rail of one host to RATE, both ways (a slow NIC)
#   testbed.sh link HOST RAIL up|down  bring one rail of one host up or down (a dead NIC)
#   testbed.sh status                namespaces, addresses, qdisc and TCP retransmit counters
#
# P is $EB_TESTBED_PREFIX (default "ebtb"), so concurrent users and tests do not collide.
# Traffic never leaves these namespaces: the rails reach nothing but each other.
set -euo pipefail
P=${EB_TESTBED_PREFIX:-ebtb}
NET=${EB_TESTBED_NET:-10.77}
# 64 KB frames keep the per-packet CPU cost of a 2-vCPU machine from capping 4 rails (9000
# gives ~87 % instead of ~96 % on a 4-rail split); EB_TESTBED_MTU=8760 mimics EFA's frames.
MTU=${EB_TESTBED_MTU:-65000}
# Token bucket shape of every rail (tc-tbf(8)); by default the burst is rate/HZ (HZ = 250),
# the smallest that tc-tbf(8) says sustains the rate: 256kb held 2gbit only to ~85 % at
# iteration boundaries of a 4-rail split. At least two frames.
TBF=${EB_TESTBED_TBF:-}
# TCP congestion control inside the hosts, fixed so that the bed does not take the machine's
# default: with BBR (the default on some hosts) each of a rail's three all-to-all flows is
# paced at the third of the rail it measured, so the last one to finish leaves two thirds of
# the rail idle (12-19 ms lost per 32-64 MiB iteration of Single and Split; reno: see
# docs/measurements.md). A namespace may set only what tcp_allowed_congestion_control lists,
# which always holds reno.
CC=${EB_TESTBED_CC:-reno}
# Receive-buffer autotuning inside the hosts (tcp_moderate_rcvbuf), off by default: with it a
# flow's window grows until it fills the token bucket's 50 ms queue, three flows sharing a rail
# wait behind each other's backlog, and the last of an iteration ends late (Split at 32 MiB
# lost 12 ms of 113 per iteration, 86-93 % of the rails; without it 95-99.5 %). A NIC does not
# queue for tens of milliseconds. EB_TESTBED_AUTOTUNE=1 turns it back on.
AUTOTUNE=${EB_TESTBED_AUTOTUNE:-0}
# Without autotuning a socket keeps tcp_rmem's default size: this many bytes.
RCVBUF=${EB_TESTBED_RCVBUF:-131072}

die() {
	echo "testbed: $*" >&2
	exit 2
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, veth and tc); run as root"
	command -v ip >/dev/null || die "needs iproute2 (ip, tc)"
	command -v tc >/dev/null || die "needs iproute2 (ip, tc)"
}

reachable() {
	local out
	out=$(timeout 2 ip netns exec "${P}h0" bash -c "exec 3<>/dev/tcp/$1/9" 2>&1) && return 0
	[[ $out == *refused* ]]
}

# The token bucket for RATE: a burst of rate/HZ (HZ = 250), at least two frames.
tbf_shape() {
	local bps burst
	bps=$(echo "$1" | awk '{v=$1+0; u=tolower(substr($1, length($1)-3, 1));
		print int(v * (u=="g" ? 1e9 : u=="m" ? 1e6 : u=="k" ? 1e3 : 1))}')
	burst=$((bps / 8 / 250))
	[ $burst -ge $((2 * MTU)) ] || burst=$((2 * MTU))
	echo "burst $burst latency 50ms"
}

hosts_of() {
	ip netns list | awk '{print $1}' | grep -E "^${P}h[0-9]+$" | sort -V || true
}

down() {
	local ns
	for ns in $(hosts_of) ${P}sw; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

up() {
	local hosts=$1 rails=$2 rate=$3 h r
	[[ $hosts =~ ^[0-9]+$ && $hosts -ge 1 && $hosts -le 64 ]] || die "HOSTS must be 1..64"
	[[ $rails =~ ^[0-9]+$ && $rails -ge 1 && $rails -le 32 ]] || die "RAILS must be 1..32"
	[[ $rate =~ ^[0-9]+(\.[0-9]+)?[kmgKMG]?bit$ ]] || die "RATE like 2gbit or 500mbit"
	[ -n "$TBF" ] || TBF=$(tbf_shape "$rate")
	down
	# Anything that fails half-way is undone, so nothing is left behind.
	trap 'down' ERR
	ip netns add "${P}sw"
	ip -n "${P}sw" link set lo up
	for r in $(seq 0 $((rails - 1))); do
		ip -n "${P}sw" link add "br$r" type bridge
		ip -n "${P}sw" link set "br$r" up
	done
	for h in $(seq 0 $((hosts - 1))); do
		ip netns add "${P}h$h"
		ip -n "${P}h$h" link set lo up
		ip netns exec "${P}h$h" sh -c "echo $CC > /proc/sys/net/ipv4/tcp_congestion_control" ||
			die "TCP congestion control $CC not available (EB_TESTBED_CC)"
		ip netns exec "${P}h$h" sh -c "echo $AUTOTUNE > /proc/sys/net/ipv4/tcp_moderate_rcvbuf &&
			echo 4096 $RCVBUF 33554432 > /proc/sys/net/ipv4/tcp_rmem" ||
			die "cannot set tcp_moderate_rcvbuf or tcp_rmem in a namespace"
		for r in $(seq 0 $((rails - 1))); do
			ip link add "${P}t" netns "${P}h$h" type veth peer name "h${h}r$r" netns "${P}sw"
			ip -n "${P}h$h" link set "${P}t" name "rail$r"
			ip -n "${P}h$h" addr add "$NET.$r.$((h + 1))/24" dev "rail$r"
			ip -n "${P}sw" link set "h${h}r$r" master "br$r"
			ip -n "${P}h$h" link set "rail$r" mtu "$MTU" up
			ip -n "${P}sw" link set "h${h}r$r" mtu "$MTU" up
			# Egress from the host and egress toward it: a NIC of RATE each way.
			tc -n "${P}h$h" qdisc add dev "rail$r" root tbf rate "$rate" $TBF
			tc -n "${P}sw" qdisc add dev "h${h}r$r" root tbf rate "$rate" $TBF
		done
	done
	for r in $(seq 0 $((rails - 1))); do
		ip -n "${P}sw" link set "br$r" mtu "$MTU"
	done
	trap - ERR
	# Wait until every rail answers: a refused TCP connection proves the path works (no
	# ping on a minimal system).
	for h in $(seq 1 $((hosts - 1))); do
		for r in $(seq 0 $((rails - 1))); do
			for _ in $(seq 50); do
				reachable "$NET.$r.$((h + 1))" && break
				sleep 0.1
			done
		done
	done
	echo "testbed: $hosts hosts x $rails rails at $rate ($TBF, MTU $MTU; namespaces ${P}h0..${P}h$((hosts - 1)), switch ${P}sw)"
}

case "${1:-}" in
up)
	[ $# -eq 4 ] || die "usage: testbed.sh up HOSTS RAILS RATE"
	need_root
	up "$2" "$3" "$4"
	;;
down)
	need_root
	down
	;;
addr)
	[ $# -eq 3 ] || die "usage: testbed.sh addr HOST RAIL"
	echo "$NET.$3.$(($2 + 1))"
	;;
nics)
	[ $# -eq 2 ] || die "usage: testbed.sh nics RAILS"
	seq 0 $(($2 - 1)) | sed 's/^/rail/' | paste -sd,
	;;
exec)
	[ $# -ge 3 ] || die "usage: testbed.sh exec HOST CMD..."
	need_root
	h=$2
	shift 2
	exec ip netns exec "${P}h$h" "$@"
	;;
rate)
	[ $# -eq 4 ] || die "usage: testbed.sh rate HOST RAIL RATE"
	need_root
	[[ $4 =~ ^[0-9]+(\.[0-9]+)?[kmgKMG]?bit$ ]] || die "RATE like 2gbit or 500mbit"
	# shellcheck disable=SC2046
	tc -n "${P}h$2" qdisc change dev "rail$3" root tbf rate "$4" $(tbf_shape "$4")
	# shellcheck disable=SC2046
	tc -n "${P}sw" qdisc change dev "h$2r$3" root tbf rate "$4" $(tbf_shape "$4")
	;;
link)
	[ $# -eq 4 ] && [[ $4 == up || $4 == down ]] || die "usage: testbed.sh link HOST RAIL up|down"
	need_root
	ip -n "${P}h$2" link set "rail$3" "$4"
	;;
status)
	need_root
	for ns in $(hosts_of); do
		echo "== $ns ($(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_congestion_control)," \
			"rcvbuf autotuning $(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_moderate_rcvbuf)," \
			"tcp_rmem $(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_rmem))"
		ip -n "$ns" -br addr | grep rail || true
		tc -n "$ns" -s qdisc | grep -E "qdisc|Sent" || true
		# Segments sent again, and why: a loss probe (no ACK within two round trips, often
		# a long queue or a delayed ACK rather than a loss) or a timeout; ACKs delayed, and
		# segments that came twice while an ACK was being delayed.
		ip netns exec "$ns" awk '$1 ~ /^(Tcp|TcpExt):$/ {
			if (!($1 in head)) { head[$1] = 1; for (i = 2; i <= NF; i++) key[$1, i] = $i; next }
			for (i = 2; i <= NF; i++) if (key[$1, i] ~ /^(RetransSegs|TCPLossProbes|TCPTimeouts|DelayedACKs|DelayedACKLost)$/)
				printf "%s %s  ", key[$1, i], $i } END { print "(TCP, since the namespace began)" }' \
			/proc/net/snmp /proc/net/netstat
	done
	# The switch's side of every rail: where three senders meet one receiver, its queue.
	if ip netns list | grep -q "^${P}sw"; then
		echo "== ${P}sw (the switch: egress toward each host's rails)"
		tc -n "${P}sw" -s qdisc | awk '/^qdisc/ { tbf = $2 == "tbf" } tbf && /qdisc|Sent|backlog/'
	fi
	;;
*)
	die "usage: testbed.sh up HOSTS RAILS RATE | down | addr HOST RAIL | nics RAILS | exec HOST CMD... | rate HOST RAIL RATE | link HOST RAIL up|down | status"
	;;
esac
