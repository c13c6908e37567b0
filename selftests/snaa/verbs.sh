#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Verbs semantics test: runs verbs_test (verbs_test.c) between two snaa
# devices, snaa0 in namespace snaa-a and snaa1 in namespace snaa-b over a
# veth pair (lib/topology.sh's setup_snaa), then once more on snaa0 alone
# (loopback) for the cases that need a peer.  Runs as root inside the
# test VM, never on the host:
#
#     selftests/vm/run --timeout 600 -- sh selftests/snaa/verbs.sh
#
# Output: each verbs_test run is one KTAP document (results at line
# start), preceded by a "# ==== ..." line.  Exit status: 0 iff every run
# passed, 1 otherwise, 2 usage error, 4 (skip) if the setup is impossible
# here.
#
# Environment: VERBS_TEST=/path/to/verbs_test to use a prebuilt binary;
# else selftests/snaa/verbs_test if it is up to date (make -C
# selftests/snaa), else it is built into a temporary directory (the VM's
# /tmp): lib.sh's snaa_build.
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

vt_usage() {
	echo "usage: $0 [--help]" >&2
	echo "  verbs semantics of snaa: snaa0 <-> snaa1 in two namespaces," >&2
	echo "  then snaa0 loopback" >&2
}

vt_main() {
	case ${1:-} in
	"") ;;
	-h|--help) vt_usage; exit 0 ;;
	*) vt_usage; exit 2 ;;
	esac
	uc_vm_only
	snaa_build VERBS_TEST verbs_test
	uc_backlog
	setup_snaa
	trap 'cleanup_snaa; exit 130' INT TERM

	# SNAA_VERBS_QUICK=1 (make check's debug kernel run): no crowd of
	# 4600 QPs and 8700 MRs, which takes minutes under KASAN; there
	# teardown.sh's 2000 QPs chain the QP table, and 6.1 and 6.12 run
	# the crowd itself.
	vt_quick=
	[ "${SNAA_VERBS_QUICK:-0}" = 1 ] && vt_quick=--no-crowd
	# The limits only keep a hanging run inside the VM's --timeout 600.
	# shellcheck disable=SC2086 # empty or one option
	snaa_run 240 "$DEV_A<->$DEV_B" "$VERBS_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" $vt_quick
	# Case 1 (objects) and 3 (posting) use device A alone: run above;
	# so do the checks of case 9 that --pairs-only leaves out.
	snaa_run 240 "$DEV_A loopback" "$VERBS_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_A" --cases 2,4,5,6,7,8,9 --pairs-only

	echo "# ==== verbs.sh summary:$snaa_run_summary"
	cleanup_snaa
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

vt_main "$@"
