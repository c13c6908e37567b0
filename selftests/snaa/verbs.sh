#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Verbs semantics test: verbs_test (verbs_test.c: named tests by feature,
# kselftest_harness) between two snaa devices, snaa0 in namespace snaa-a
# and snaa1 in namespace snaa-b over a veth pair (lib/topology.sh's
# setup_snaa), and on snaa0 alone (the "dev" tests and the "loopback"
# variant of the "pair" tests).  Runs as root inside the test VM, never
# on the host:
#
#     selftests/vm/run --timeout 600 -- sh selftests/snaa/verbs.sh
#
# Output: the harness's TAP (one line per named test; each test's checks
# before it, indented), after a "# ==== ..." line.  Exit status: 0 iff
# every test passed, 1 otherwise, 2 usage error, 4 (skip) if the setup
# is impossible here.
#
# Environment: VERBS_TEST=/path/to/verbs_test to use a prebuilt binary;
# else selftests/snaa/verbs_test if it is up to date (make -C
# selftests/snaa), else it is built into a temporary directory (the VM's
# /tmp): lib.sh's snaa_build.  SNAA_VERBS_QUICK=1: no dev.crowd.
#
# Features: verbs
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

vt_usage() {
	echo "usage: $0 [--help]" >&2
	echo "  verbs semantics of snaa: snaa0 <-> snaa1 in two namespaces," >&2
	echo "  and snaa0 alone and in loopback" >&2
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
	# 4600 QPs and 8700 MRs (dev.crowd skipped), which takes minutes
	# under KASAN; there teardown.sh's 2000 QPs chain the QP table, and
	# 6.1 and 6.12 run the crowd itself.
	vt_quick=
	[ "${SNAA_VERBS_QUICK:-0}" = 1 ] && vt_quick=--no-crowd
	# The limit only keeps a hanging run inside the VM's --timeout.
	# shellcheck disable=SC2086 # empty or one option
	snaa_run 480 "$DEV_A<->$DEV_B" "$VERBS_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" $vt_quick

	echo "# ==== verbs.sh summary:$snaa_run_summary"
	cleanup_snaa
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

vt_main "$@"
