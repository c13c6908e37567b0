#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# UC data path test: sets up two RDMA devices and runs uc_test (uc_test.c)
# between them over IPv4 and IPv6 RoCE v2 GIDs, and on one device in
# loopback.  Runs as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/uc.sh [MODE]
#
# Modes (one setup_MODE / cleanup_MODE function pair each):
#   rxe      the in-kernel soft-RoCE, rdma_rxe: the reference for snaa
#   snaa     two snaa devices in two network namespaces over a veth pair
#            (the default)
#   interop  rdma_rxe (initial namespace) <-> snaa (namespace snaa-b),
#            both directions (the default of interop/uc.sh, a link to
#            this file)
#
# Features: uc
#
# The topologies are lib/topology.sh's.
#
# Output: each uc_test run is one KTAP document (results at line start),
# preceded by a "# ==== ..." line.  Exit status: 0 iff every run passed,
# 1 otherwise, 2 usage error, 4 (skip) if the setup is impossible here.
#
# Environment: UC_TEST=/path/to/uc_test to use a prebuilt binary; else
# selftests/snaa/uc_test if it is up to date (make -C selftests/snaa),
# else it is built into a temporary directory (the VM's /tmp): lib.sh's
# snaa_build.
set -u

# From here, or from interop/ as a link to this file.
snaa_lib=$(dirname "$0")/lib.sh
[ -f "$snaa_lib" ] || snaa_lib=$(dirname "$0")/../lib.sh
# shellcheck source=lib.sh
. "$snaa_lib"

uc_usage() {
	echo "usage: $0 rxe|snaa|interop" >&2
	echo "  rxe      rdma_rxe on a veth pair (reference run)" >&2
	echo "  snaa     snaa <-> snaa in two namespaces, and snaa loopback" >&2
	echo "  interop  rdma_rxe <-> snaa, both directions" >&2
}

uc_main() {
	[ $# -le 1 ] || { uc_usage; exit 2; }
	mode=${1:-$(snaa_where_mode)}
	case $mode in
	rxe|snaa|interop) ;;
	-h|--help) uc_usage; exit 0 ;;
	*) uc_usage; exit 2 ;;
	esac
	uc_vm_only
	snaa_build UC_TEST uc_test
	uc_backlog
	"setup_$mode"
	trap '"cleanup_$mode"; exit 130' INT TERM

	# Each run takes ~10 s on rdma_rxe under TCG; the limits only keep a
	# data path that loses every message (20 s per case) inside the VM's
	# --timeout 900.
	# shellcheck disable=SC2086 # UC_ARGS is a list
	snaa_run 270 "$DEV_A<->$DEV_B IPv4" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" $UC_ARGS
	# shellcheck disable=SC2086
	snaa_run 270 "$DEV_A<->$DEV_B IPv6" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" --ipv6 $UC_ARGS
	# shellcheck disable=SC2086
	snaa_run 270 "$DEV_A loopback IPv4" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_A" $UC_ARGS
	if [ "$mode" = interop ]; then
		# shellcheck disable=SC2086
		snaa_run 270 "$DEV_B loopback IPv4" "$UC_TEST" \
			--dev-a "$DEV_B" --dev-b "$DEV_B" $UC_ARGS
	fi
	if [ "$mode" = snaa ]; then
		# The smallest path MTU (the runs above use 4096).
		# shellcheck disable=SC2086
		snaa_run 270 "$DEV_A<->$DEV_B IPv4 MTU 256" "$UC_TEST" \
			--dev-a "$DEV_A" --dev-b "$DEV_B" --mtu 256 \
			--sizes 0,1,63,64,mtu-1,mtu,mtu+1,64K,1M $UC_ARGS
	fi

	echo "# ==== uc.sh $mode summary:$snaa_run_summary"
	"cleanup_$mode"
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

uc_main "$@"
