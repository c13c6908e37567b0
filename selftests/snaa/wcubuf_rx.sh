#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The WCU.BUF receive mode of snaa (Documentation/wcubuf.rst), frame by
# frame: wcubuf_test (wcubuf_test.c) drives a WCU.BUF QP on snaa1 from a
# worker QP on snaa0, and again from rdma_rxe, checking every ACK/NACK
# byte, every delivered frame and every counter; rawpkt crafts what
# verbs cannot send (PSN gaps, frames without a start, bad ICRCs,
# oversized packets, lying RETHs) and debugfs injects parity and ECC
# errors.  Ends with "rmmod snaa".  Runs as root inside the test VM:
#
#     selftests/vm/run --timeout 600 -- sh selftests/snaa/wcubuf_rx.sh
#
# Exit status: 0 iff every run passed, 1 otherwise, 4 (skip) if the
# setup is impossible here.
#
# Features: wcubuf
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

rmmod_doc() {
	ktap_header "rmmod after the WCU.BUF runs"
	if rmmod snaa 2>/dev/null; then
		ktap_ok "rmmod snaa: no QP, ring or device left"
	else
		ktap_fail "rmmod snaa" "$(lsmod | grep '^snaa')"
	fi
	ktap_finish
}

# wcu_run NAME NS: wcubuf_test from $DEV_A (in namespace NS, "" for
# this one) to $DEV_B, raw packets from veth0.
wcu_run() {
	mac1=$(ip -n "$NS_B" -br link show veth1 | awk '{ print $3 }')
	if [ -n "$2" ]; then
		in_a="ip netns exec $2"
	else
		in_a=
	fi
	snaa_run 300 "$1" "$WCUBUF_TEST" --dev-a "$DEV_A" --dev-b "$DEV_B" \
		--rawpkt "$in_a $RAWPKT --dev veth0 --dmac $mac1 --saddr $ADDR_A --daddr $ADDR_B" \
		--debugfs "/sys/kernel/debug/snaa/$DEV_B"
}

wcu_main() {
	case ${1:-} in
	-h|--help)
		echo "usage: $0: the WCU.BUF receive mode, snaa and rdma_rxe workers"
		exit 0 ;;
	esac
	uc_vm_only
	snaa_build RAWPKT rawpkt
	snaa_build WCUBUF_TEST wcubuf_test
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs none /sys/kernel/debug ||
		snaa_skip "cannot mount debugfs"

	setup_snaa
	wcu_run "worker $DEV_A, WCU.BUF $DEV_B" "$NS_A"
	cleanup_snaa

	setup_interop
	# jumbo frames, for a packet of more than 4096 bytes
	ip link set veth0 mtu 9000 && ip -n "$NS_B" link set veth1 mtu 9000 ||
		snaa_runs_failed=$((snaa_runs_failed + 1))
	wcu_run "worker $DEV_A (rdma_rxe), WCU.BUF $DEV_B" ""
	cleanup_interop

	echo "# ==== rmmod"
	(rmmod_doc) || snaa_runs_failed=$((snaa_runs_failed + 1))
	echo "# ==== wcubuf_rx.sh summary:$snaa_run_summary"
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

wcu_main "$@"
