#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# RC between two RDMA devices that lib/topology.sh's setup_MODE creates: the
# rc_test program (rc_test.c: every operation byte-exact, error statuses,
# RNR, retry, READ/atomic limits, atomics under contention, a 64 MiB
# checked stream) and rping (rdma_cm: address and route resolution, the
# CM handshake over QP1, SEND/READ/WRITE), checking the ping data.  Runs
# as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/rc.sh [MODE]
#
# Modes (the default: snaa; interop as interop/rc.sh, netem as
# rc_netem.sh, both links to this file):
#   snaa     snaa0 (ns snaa-a) <-> snaa1 (ns snaa-b): IPv4, IPv6,
#            loopback, path MTU 1024; rping both ways; then snaa1's
#            device is deleted during a stream (the requester must end in
#            IBV_WC_RETRY_EXC_ERR and flush, "rmmod snaa" must succeed)
#   interop  rdma_rxe (rxe0, initial namespace) <-> snaa1: rc_test with
#            each as the requester A, a responder slower than the ACK
#            timeout (rc.slow) both ways, rping with each as the server
#   netem    snaa0 <-> snaa1 with the link impaired (tc netem on both
#            veth ends: loss 1 % and 5 %, reordering, duplication 5 %,
#            corruption 0.5 %): the 64 MiB stream arrives exact, every
#            WR completes once, and the retransmit, duplicate and drop
#            counters move as the impairment predicts; and the error
#            and fixed-loss cases with every packet 5 ms late; a responder
#            slower than the ACK timeout (rc.slow)
#
# Features: rc, atomics, rdma_cm
# Features (rc_netem.sh): rc, netem
#
# Output: one KTAP document per run, preceded by a "# ==== ..." line.
# Exit status: 0 iff every run passed, 1 otherwise, 2 usage error, 4
# (skip) if the setup is impossible here.
#
# Environment: RC_TEST=/path/to/rc_test to use a prebuilt binary;
# SNAA_RC_QUICK=1 (make check sets it for the debug kernel, where KASAN
# slows the receiver down more than a 67 ms ACK timeout can wait for, and
# for the compat kernel, where the default kernel's run covers the rest):
# a local ACK timeout of 1 s in every mode; mode snaa without the IPv6,
# loopback and MTU 1024 runs and with 1 MiB the matrix's largest message,
# 16 MiB streams.
set -u

# From here, or from interop/ as a link to this file.
snaa_lib=$(dirname "$0")/lib.sh
[ -f "$snaa_lib" ] || snaa_lib=$(dirname "$0")/../lib.sh
# shellcheck source=lib.sh
. "$snaa_lib"

RPING_COUNT=200
RPING_SIZE=100

rc_usage() {
	echo "usage: $0 snaa|interop|netem" >&2
	echo "  RC between two RDMA devices: rc_test and rping" >&2
}

# rping_check_data FILE: FILE holds rping -v output; every "ping data:"
# line must be the text rping writes for that ping (rdma-ping-N: then
# letters A..z rotating one further per ping), RPING_COUNT of them.
rping_check_data() {
	awk -v size="$RPING_SIZE" -v count="$RPING_COUNT" '
		BEGIN { start = 65; n = 0; bad = 0 }
		/^ping data: / {
			s = "rdma-ping-" n ": "
			c = start
			for (i = length(s); i < size - 1; i++) {
				s = s sprintf("%c", c)
				if (++c > 122)
					c = 65
			}
			if (++start > 122)
				start = 65
			if (substr($0, 12) != s) {
				if (bad++ < 3)
					printf "ping %d: got \"%s\", expected \"%s\"\n",
						n, substr($0, 12), s
			}
			n++
		}
		END {
			if (n != count) {
				printf "%d pings, expected %d\n", n, count
				bad++
			}
			exit bad != 0
		}' "$1"
}

# rc_doc NAME FUNCTION ARGS...: FUNCTION prints one KTAP document and
# exits (lib.sh's ktap_finish), so it runs in a subshell.
rc_doc() {
	rd_name=$1
	shift
	echo "# ==== $rd_name"
	("$@")
	rd_rc=$?
	[ "$rd_rc" = 0 ] || snaa_runs_failed=$((snaa_runs_failed + 1))
	snaa_run_summary="$snaa_run_summary
# $rd_name: $([ "$rd_rc" = 0 ] && echo ok || echo "FAILED (exit $rd_rc)")"
}

# rping_listening NS: an rdma_cm ID in NS (here if empty) listens on
# rping's port.
# shellcheck disable=SC2317 # called through wait_for
rping_listening() {
	snaa_in "$1" rdma resource show cm_id 2>/dev/null | grep LISTEN |
		grep -qE ":7174( |$)"
}

# rping_doc NAME SRV_NS SRV_ADDR CLI_NS: rping -s in SRV_NS bound to
# SRV_ADDR, rping -c from CLI_NS; both must exit 0 and the client's ping
# data must be exact.
rping_doc() {
	rr_out=$(mktemp)
	rr_err=$(mktemp)
	rr_srv=$(mktemp)
	ktap_header "rping $1"
	snaa_in "$2" timeout -k 5 120 rping -s -a "$3" -C "$RPING_COUNT" \
		-S "$RPING_SIZE" -V >"$rr_srv" 2>&1 &
	rr_pid=$!
	# rping's port, 7174: listening before the client connects
	wait_for 30 rping_listening "$2"
	snaa_in "$4" timeout -k 5 120 rping -c -a "$3" -C "$RPING_COUNT" \
		-S "$RPING_SIZE" -v -V >"$rr_out" 2>"$rr_err"
	rr_crc=$?
	wait "$rr_pid"
	rr_src=$?
	if [ "$rr_crc" = 0 ] && [ "$rr_src" = 0 ]; then
		ktap_ok "rping $1: client and server exit 0 after $RPING_COUNT pings"
	else
		ktap_fail "rping $1: client and server exit 0" \
			"client exit $rr_crc, server exit $rr_src (124: timeout)" \
			"--- client:" "$(tail -n 5 "$rr_out")" "$(cat "$rr_err")" \
			"--- server:" "$(tail -n 5 "$rr_srv")"
	fi
	if rr_why=$(rping_check_data "$rr_out"); then
		ktap_ok "rping $1: $RPING_COUNT pings of $RPING_SIZE bytes, each the exact data"
	else
		ktap_fail "rping $1: $RPING_COUNT pings of $RPING_SIZE bytes, each the exact data" \
			"$rr_why"
	fi
	rm -f "$rr_out" "$rr_err" "$rr_srv"
	ktap_finish
}

rping_run() {
	rc_doc "rping $1" rping_doc "$@"
}

# rmmod_doc: after the peer loss the module must unload.
rmmod_doc() {
	ktap_header "rmmod after peer loss"
	if rmmod snaa 2>/dev/null; then
		ktap_ok "rmmod snaa after the peer loss: no QP, timer or device left"
	else
		ktap_fail "rmmod snaa after the peer loss" \
			"$(lsmod | grep '^snaa')"
	fi
	ktap_finish
}

# rc_peer_loss: a stream from snaa0 to snaa1; snaa1 is deleted once the
# stream is under way (1000 packets received: a fixed delay was outlasted
# by rc_test's own setup on a slow day).
rc_peer_loss() {
	pl_cnt=/sys/class/infiniband/$DEV_B/ports/1/hw_counters/rx_packets
	pl_n0=$(cat "$pl_cnt" 2>/dev/null || echo 0)
	(
		wait_for 120 sh -c "[ \"\$(cat '$pl_cnt')\" -gt $((pl_n0 + 1000)) ]"
		ip netns exec "$NS_B" rdma link delete "$DEV_B"
	) &
	pl_pid=$!
	snaa_run 200 "$DEV_B deleted during a stream" "$RC_TEST" \
		--dev-a "$DEV_A" --dev-b "$DEV_B" --tests rc.stream \
		--stream 4294967296 --expect-peer-loss
	wait "$pl_pid"
	cleanup_snaa
	rc_doc "rmmod snaa after the peer loss" rmmod_doc
}

# rc_netem_run NAME NETEM RC_TEST_ARGS...: rc_test with NETEM on both
# veth ends.
rc_netem_run() {
	rn_name=$1
	rn_netem=$2
	shift 2
	# shellcheck disable=SC2086 # rn_netem is a list
	ip netns exec "$NS_A" tc qdisc add dev veth0 root netem $rn_netem &&
	ip netns exec "$NS_B" tc qdisc add dev veth1 root netem $rn_netem ||
		{ snaa_runs_failed=$((snaa_runs_failed + 1)); return; }
	snaa_run 900 "$rn_name" "$RC_TEST" --dev-a "$DEV_A" --dev-b "$DEV_B" \
		"$@"
	ip netns exec "$NS_A" tc qdisc del dev veth0 root 2>/dev/null
	ip netns exec "$NS_B" tc qdisc del dev veth1 root 2>/dev/null
}

# rc_netem_stream NAME NETEM EXPECT: the stream under NETEM, the counters
# as rc_test's --netem-expect EXPECT says.
rc_netem_stream() {
	# shellcheck disable=SC2086 # RC_NETEM_ARGS is a list
	rc_netem_run "netem $1" "$2" --tests rc.stream $RC_NETEM_ARGS \
		--netem-expect "$3"
}

# rc_slow A B: rc_test's rc.slow, A the requester, with every packet on
# the link (veth0 in NS_A, veth1 in NS_B) late by more than A's local ACK
# timeout (200 ms against 67 ms; 1.5 s against 1.07 s with
# SNAA_RC_QUICK), so that every READ is requested again while the
# responder answers it.
rc_slow() {
	rs_delay=200ms
	rs_args="--ack-timeout 14"
	[ -n "$RC_QUICK_ARGS" ] && rs_delay=1500ms rs_args=$RC_QUICK_ARGS
	rs_netem="delay $rs_delay limit 100000"
	# shellcheck disable=SC2086 # rs_netem is a list
	snaa_in "${NS_A:-}" tc qdisc add dev veth0 root netem $rs_netem &&
	snaa_in "$NS_B" tc qdisc add dev veth1 root netem $rs_netem ||
		{ snaa_runs_failed=$((snaa_runs_failed + 1)); return; }
	# shellcheck disable=SC2086 # rs_args is a list
	snaa_run 600 "slow responder: A=$1 B=$2, every packet $rs_delay late" \
		"$RC_TEST" --dev-a "$1" --dev-b "$2" --tests rc.slow --link-delay \
		$rs_args
	snaa_in "${NS_A:-}" tc qdisc del dev veth0 root 2>/dev/null
	snaa_in "$NS_B" tc qdisc del dev veth1 root 2>/dev/null
}

# rc_affinity_doc: rc_test's unsignaled fetch & adds over loopback on
# DEV_A (rc.atomics), the process pinned to CPU 0: the doorbell hands such a
# send queue to a work item on another CPU (verbs.rst, Loopback), but
# only to one the poster may run on.  workqueue_execute_start events say
# where snaa_sq_work ran.
rc_affinity_doc() {
	ktap_header "loopback hand-off within the poster's CPUs"
	ra_t=/sys/kernel/tracing
	[ -d "$ra_t/events" ] || mount -t tracefs none "$ra_t" 2>/dev/null
	ra_ev=$ra_t/events/workqueue/workqueue_execute_start/enable
	if ! [ -w "$ra_ev" ]; then
		ktap_fail "tracefs with workqueue events" "no $ra_ev"
		ktap_finish
	fi
	echo 0 >"$ra_t/tracing_on"
	: >"$ra_t/trace"
	echo 1 >"$ra_ev"
	echo 1 >"$ra_t/tracing_on"
	ra_out=$(taskset -c 0 timeout -k 5 "$(snaa_secs 300)" "$RC_TEST" \
		--dev-a "$DEV_A" --dev-b "$DEV_A" --tests rc.atomics 2>&1)
	ra_rc=$?
	echo 0 >"$ra_t/tracing_on"
	echo 0 >"$ra_ev"
	ra_all=$(grep -c 'function snaa_sq_work' "$ra_t/trace")
	ra_cpu0=$(grep 'function snaa_sq_work' "$ra_t/trace" | grep -c '\[000\]')
	check_eq "rc_test rc.atomics over loopback, pinned to CPU 0: exit 0" \
		"$ra_rc" 0
	[ "$ra_rc" = 0 ] || printf '%s\n' "$ra_out" | tail -n 20 | sed 's/^/# /'
	check_eq "the send queue work ran on CPU 0 only ($ra_all runs)" \
		"$((ra_all - ra_cpu0))" 0
	ktap_finish
}

# rc_snaa_more: IPv6, loopback and path MTU 1024.
rc_snaa_more() {
	snaa_run 300 "$DEV_A<->$DEV_B IPv6" "$RC_TEST" \
		--dev-a "$DEV_A" --dev-b "$DEV_B" --ipv6 \
		--tests rc.matrix,rc.errors,rc.stream --stream 16777216
	snaa_run 300 "$DEV_A loopback" "$RC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_A" \
		--tests rc.matrix,rc.errors,rc.rnr,rc.rd_atomic,rc.atomics,rc.stream \
		--stream 16777216
	snaa_run 300 "$DEV_A<->$DEV_B path MTU 1024" "$RC_TEST" \
		--dev-a "$DEV_A" --dev-b "$DEV_B" --mtu 1024 \
		--tests rc.matrix,rc.rd_atomic,rc.stream --stream 16777216
}

rc_main() {
	[ $# -le 1 ] || { rc_usage; exit 2; }
	mode=${1:-}
	if [ -z "$mode" ]; then
		case ${0##*/} in
		rc_netem.sh) mode=netem ;;
		*) mode=$(snaa_where_mode) ;;
		esac
	fi
	case $mode in
	snaa|interop|netem) ;;
	-h|--help) rc_usage; exit 0 ;;
	*) rc_usage; exit 2 ;;
	esac
	uc_vm_only
	command -v rping >/dev/null 2>&1 || snaa_skip "rping not installed (rdmacm-utils)"
	snaa_build RC_TEST rc_test
	uc_backlog
	RC_QUICK_ARGS=
	[ "${SNAA_RC_QUICK:-0}" = 1 ] && RC_QUICK_ARGS="--ack-timeout 18"
	setup=$mode
	[ "$mode" = netem ] && setup=snaa
	"setup_$setup"
	trap '"cleanup_$setup"; exit 130' INT TERM

	case $mode in
	snaa)
		# SNAA_RC_QUICK=1 (make check's debug and compat runs):
		# IPv4, rping and the peer loss only, with a local ACK
		# timeout of 1 s: KASAN slows the receiver down more than
		# 67 ms can wait for.  The matrix's largest message is 1 MiB
		# and the stream 16 MiB: 16 MiB messages take the same paths,
		# only more often (the default kernel runs them)
		if [ "${SNAA_RC_QUICK:-0}" = 1 ]; then
			snaa_run 900 "$DEV_A<->$DEV_B IPv4, ACK timeout 1 s" \
				"$RC_TEST" --dev-a "$DEV_A" --dev-b "$DEV_B" \
				--ack-timeout 18 --max-msg 1048576 \
				--stream 16777216
		else
			snaa_run 400 "$DEV_A<->$DEV_B IPv4" "$RC_TEST" \
				--dev-a "$DEV_A" --dev-b "$DEV_B"
			rc_snaa_more
		fi
		rping_run "server $DEV_B, client $DEV_A" "$NS_B" "$ADDR_B" "$NS_A"
		rping_run "server $DEV_A, client $DEV_B" "$NS_A" "$ADDR_A" "$NS_B"
		rc_doc "loopback hand-off within the poster's CPUs" \
			rc_affinity_doc
		rc_peer_loss
		;;
	interop)
		# shellcheck disable=SC2086 # RC_QUICK_ARGS is a list
		snaa_run 900 "A=$DEV_A B=$DEV_B" "$RC_TEST" \
			--dev-a "$DEV_A" --dev-b "$DEV_B" $RC_QUICK_ARGS
		# shellcheck disable=SC2086 # RC_QUICK_ARGS is a list
		snaa_run 900 "A=$DEV_B B=$DEV_A" "$RC_TEST" \
			--dev-a "$DEV_B" --dev-b "$DEV_A" $RC_QUICK_ARGS
		# snaa's requester against rdma_rxe's replays, and back
		rc_slow "$DEV_B" "$DEV_A"
		rc_slow "$DEV_A" "$DEV_B"
		rping_run "server $DEV_B, client $DEV_A" "$NS_B" "$ADDR_B" ""
		rping_run "server $DEV_A, client $DEV_B" "" "$ADDR_A" "$NS_B"
		"cleanup_$setup"
		;;
	netem)
		# ARP over a lossy link could fail the path resolution of
		# ibv_modify_qp(RTR): static neighbours
		mac0=$(ip -n "$NS_A" -br link show veth0 | awk '{ print $3 }')
		mac1=$(ip -n "$NS_B" -br link show veth1 | awk '{ print $3 }')
		ip -n "$NS_A" neigh replace "$ADDR_B" lladdr "$mac1" dev veth0 \
			nud permanent &&
		ip -n "$NS_B" neigh replace "$ADDR_A" lladdr "$mac0" dev veth1 \
			nud permanent ||
			{ cleanup_snaa; snaa_skip "cannot set static neighbours"; }
		if [ -n "$RC_QUICK_ARGS" ]; then
			RC_NETEM_ARGS="--stream 16777216 $RC_QUICK_ARGS"
		else
			RC_NETEM_ARGS="--stream 67108864"
		fi
		rc_netem_stream "loss 1%" "loss 1%" retransmits
		rc_netem_stream "loss 5%" "loss 5%" retransmits
		rc_netem_stream "reorder" "delay 5ms reorder 25% 50%" any
		rc_netem_stream "duplicate 5%" "duplicate 5%" duplicates
		rc_netem_stream "corrupt 0.5%" "corrupt 0.5%" icrc
		# The error cases with every packet 5 ms late, so that ACKs
		# come back while the requester works on the WRs behind (on
		# a bare veth they are back before it looks at the next WR);
		# and the fixed losses, where the requester sends its
		# restart window after a timeout, then waits for the ACK.
		# shellcheck disable=SC2086 # RC_QUICK_ARGS is a list
		rc_netem_run "errors and fixed losses, delay 5 ms" "delay 5ms" \
			--tests rc.errors,rc.loss --link-delay $RC_QUICK_ARGS
		rc_slow "$DEV_A" "$DEV_B"
		"cleanup_$setup"
		;;
	esac

	echo "# ==== rc.sh $mode summary:$snaa_run_summary"
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

rc_main "$@"
