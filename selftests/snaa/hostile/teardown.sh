#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Teardown under load: snaa devices, netdevs, namespaces and the module
# go away while traffic flows both ways and CQ rings are being created
# and mapped, and processes die holding many objects.  Runs as root
# inside the test VM, never on the host; meant for the debug kernel
# (KASAN, lockdep, kmemleak), where the VM runner fails the run on any
# report or leak:
#
#     selftests/vm/run --kernel KVER --timeout 2400 -- sh selftests/snaa/hostile/teardown.sh
#
#  +- ns snaa-a ---------------+      tdload (init ns): 4 UC QP pairs
#  | snaa0 - veth0 198.18.0.1  |      snaa0 <-> snaa1 streaming RDMA
#  +-----------||--------------+      WRITE WITH IMM both ways, every
#  +- ns snaa-b ---------------+      byte checked, plus a thread that
#  | snaa1 - veth1 198.18.0.2  |      creates and destroys CQs (mmaps)
#  +---------------------------+      all the time
#
# Each of these runs --repeat times (default 3), every time on a fresh
# setup with traffic flowing for 2 s first:
#   link     rdma link delete snaa1
#   netdev   ip link del veth0 (both ends, both devices)
#   netns    ip netns del snaa-b (veth1 and its peer go with it)
#   rmmod    rmmod snaa
#   kill     SIGKILL to tdload
# For the first four: tdload is told (SIGUSR1) just before the removal
# starts, after which a UC message lost on the way is counted, not an
# error (UC does not retransmit, and what is in flight when QPs, routes
# and sockets go away may vanish; every message delivered is still
# checked byte for byte).  The removal returns within 60 s although
# tdload holds the device (disassociation), tdload sees the loss within
# 30 s (IBV_EVENT_DEVICE_FATAL), every post it makes to a lost device
# fails, and it destroys everything and exits 3 ("device lost").  For
# kill: tdload is gone within 30 s and none of its QPs is left ("rdma
# resource show qp").  Then:
#   churn    tdload --churn for 20 s: QP pairs, CQs and MRs destroyed
#            under their sends while the checked traffic stays exact
#   exit     a process holding 10000 QPs is killed: its exit time is
#            measured (reported, not asserted) and no QP is left
# At the end snaa must unload and dmesg must be clean.
#
# Options: --repeat N.  Output: KTAP.  Exit status: 0 iff every check
# passed, 1 otherwise, 2 usage error, 4 (skip) if the setup is impossible.
#
# Features: hostile, teardown
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

# SNAA_TEARDOWN_REPEAT: the default of --repeat (make check's debug run
# sets 1: KASAN makes each round slow); SNAA_TEARDOWN_QPS: the QPs of the
# exit test (default 10000; the debug run sets 2000: creating them is
# most of the test's time there, and a leak shows with fewer)
TD_REPEAT=${SNAA_TEARDOWN_REPEAT:-3}
TD_QPS=${SNAA_TEARDOWN_QPS:-10000}
case ${1:-} in
--repeat) TD_REPEAT=$2 ;;
-h|--help) snaa_help; exit 0 ;;
"") ;;
*) echo "usage: $0 [--repeat N]" >&2; exit 2 ;;
esac

uc_vm_only
snaa_build TDLOAD tdload
snaa_build OBJHOG objhog
uc_backlog
TD_TMP=$(mktemp -d) || snaa_skip "mktemp failed"
TD_PID=

# Tear the setup down and wait until both devices are gone (their
# removal is asynchronous), so that the next setup can reuse the names.
td_cleanup() {
	[ -n "$TD_PID" ] && kill -9 "$TD_PID" 2>/dev/null && wait "$TD_PID"
	TD_PID=
	cleanup_snaa
	ip link del veth0 2>/dev/null
	wait_for 60 snaa_device_gone snaa0 && wait_for 60 snaa_device_gone snaa1
}
trap 'td_cleanup; rm -rf "$TD_TMP"; exit 130' INT TERM

ktap_header "snaa teardown under load"
DMESG_LINES=$(dmesg | wc -l)

# now_ms: milliseconds since boot.
now_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# wait_exit PID SECONDS: wait until PID has exited (it is our child);
# its exit status in $TD_RC, 0 if it did not exit in time (then killed).
wait_exit() {
	we_tries=$(($2 * 10))
	while kill -0 "$1" 2>/dev/null && [ "$we_tries" -gt 0 ]; do
		sleep 0.1
		we_tries=$((we_tries - 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1" 2>/dev/null
		wait "$1"
		return 1
	fi
	wait "$1"
	TD_RC=$?
	return 0
}

# start_load [ARGS]: tdload snaa0 <-> snaa1 with mmap churn, in the
# background; waits until it runs.
start_load() {
	: >"$TD_TMP/load.out"
	"$TDLOAD" --dev-a snaa0 --dev-b snaa1 --mmap-churn "$@" \
		>"$TD_TMP/load.out" 2>&1 &
	TD_PID=$!
	wait_for 60 grep -q 'running' "$TD_TMP/load.out"
}

# qps_of COMM: how many QPs "rdma resource show qp" lists for COMM.
qps_of() {
	rdma resource show qp 2>/dev/null | grep -c "comm $1"
}

# lose NAME CMD...: one device-loss case.
lose() {
	name=$1
	shift
	setup_snaa
	if ! start_load; then
		ktap_fail "$name: tdload starts" "$(cat "$TD_TMP/load.out")"
		td_cleanup
		return
	fi
	sleep 2
	# From here on UC may lose what is in flight: say so to tdload.
	kill -USR1 "$TD_PID"
	t0=$(now_ms)
	"$@" >"$TD_TMP/action.out" 2>&1 &
	apid=$!
	if wait_exit "$apid" 60; then
		arc=$TD_RC
		took=$(($(now_ms) - t0))
	else
		arc=timeout
		took=">60000"
	fi
	if wait_exit "$TD_PID" 30; then
		lrc=$TD_RC
	else
		lrc=timeout
	fi
	TD_PID=
	line=$(grep 'after the loss' "$TD_TMP/load.out")
	posts=$(printf '%s\n' "$line" | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) posts to .* failed/\1 \2/p')
	# shellcheck disable=SC2086 # "FAILED TRIED"
	set -- $posts
	if [ "$arc" = 0 ] && [ "$lrc" = 3 ] && [ "${1:-x}" = "${2:-y}" ] &&
	   [ "${2:-0}" -gt 0 ]; then
		ktap_ok "$name: done in $took ms under load; tdload saw the loss, all ${2} posts to the lost device(s) failed, cleaned up (exit 3)"
		grep -o '([0-9]* lost on the way[^)]*)' "$TD_TMP/load.out" |
			sed 's/^/# /'
	else
		ktap_fail "$name: done in $took ms under load; tdload saw the loss, all posts to the lost device(s) failed, cleaned up (exit 3)" \
			"action exit $arc: $(cat "$TD_TMP/action.out")" \
			"tdload exit $lrc:" "$(tail -n 20 "$TD_TMP/load.out")"
	fi
	td_cleanup
}

i=1
while [ "$i" -le "$TD_REPEAT" ]; do
	lose "link delete #$i" ip netns exec snaa-b rdma link delete snaa1
	lose "netdev removal #$i" ip netns exec snaa-a ip link del veth0
	lose "namespace deletion #$i" ip netns del snaa-b
	lose "rmmod snaa #$i" rmmod snaa

	setup_snaa
	if start_load; then
		sleep 2
		kill -9 "$TD_PID"
		if wait_exit "$TD_PID" 30; then
			TD_PID=
			check_eq "kill -9 #$i: tdload is gone, none of its QPs left" \
				"$(qps_of tdload)" 0
		else
			ktap_fail "kill -9 #$i: tdload did not exit within 30 s"
		fi
	else
		ktap_fail "kill -9 #$i: tdload starts" "$(cat "$TD_TMP/load.out")"
	fi
	td_cleanup
	i=$((i + 1))
done

# Objects destroyed under their own traffic, next to checked traffic.
setup_snaa
if out=$(timeout 120 "$TDLOAD" --dev-a snaa0 --dev-b snaa1 --mmap-churn \
		--churn --seconds 20 2>&1); then
	ktap_ok "churn: QPs, CQs and MRs destroyed under their sends for 20 s, checked traffic exact ($(printf '%s\n' "$out" | grep -E 'messages exact|churn:' | tr '\n' ' '))"
else
	ktap_fail "churn: QPs, CQs and MRs destroyed under their sends for 20 s, checked traffic exact" \
		"$out"
fi

# The exit of a process that holds $TD_QPS QPs.
"$OBJHOG" --dev snaa0 --qps "$TD_QPS" --hold >"$TD_TMP/hog.out" 2>&1 &
hog=$!
if wait_for 600 grep -q "^created $TD_QPS\$" "$TD_TMP/hog.out"; then
	t0=$(now_ms)
	kill -9 "$hog"
	if wait_exit "$hog" 600; then
		echo "# exit of a process holding $TD_QPS QPs: $(($(now_ms) - t0)) ms"
		check_eq "exit with $TD_QPS QPs: none of them left" \
			"$(qps_of objhog)" 0
	else
		ktap_fail "exit with $TD_QPS QPs: the process did not exit within 600 s"
	fi
else
	kill -9 "$hog" 2>/dev/null
	wait "$hog"
	ktap_fail "exit with $TD_QPS QPs: creating them" "$(tail -n 5 "$TD_TMP/hog.out")"
fi
td_cleanup

check "snaa unloads at the end" rmmod snaa
warn=$(dmesg | tail -n +"$((DMESG_LINES + 1))" |
	grep -E 'WARNING:|BUG:|Oops|Call Trace|UBSAN|KASAN|general protection')
check_eq "no kernel warning" "$warn" ""
rm -rf "$TD_TMP"
ktap_finish
