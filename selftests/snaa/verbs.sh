#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Verbs semantics test: runs verbs_test (verbs_test.c) between two snaa
# devices, snaa0 in namespace snaa-a and snaa1 in namespace snaa-b over a
# veth pair (uc_test.sh's setup_snaa), then once more on snaa0 alone
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
# else selftests/snaa/verbs_test (make -C selftests/snaa verbs_test) if it
# is newer than verbs_test.c, else it is built into a temporary directory
# (the VM's /tmp).
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
UC_TEST_SOURCED=1
# shellcheck source=uc_test.sh
. "$UC_HERE/uc_test.sh"
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

vt_usage() {
	echo "usage: $0 [--help]" >&2
	echo "  verbs semantics of snaa: snaa0 <-> snaa1 in two namespaces," >&2
	echo "  then snaa0 loopback" >&2
}

# vt_build: set VERBS_TEST to a usable verbs_test binary.
vt_build() {
	if [ -n "${VERBS_TEST:-}" ]; then
		[ -x "$VERBS_TEST" ] ||
			uc_skip "VERBS_TEST=$VERBS_TEST is not executable"
		return 0
	fi
	VERBS_TEST=$UC_HERE/verbs_test
	if [ -x "$VERBS_TEST" ] &&
	   [ -z "$(find "$UC_HERE/verbs_test.c" -newer "$VERBS_TEST")" ]; then
		return 0
	fi
	VERBS_TEST=$(mktemp -d)/verbs_test
	uc_log "building $VERBS_TEST"
	cc -std=c11 -Wall -Wextra -Werror -O2 -o "$VERBS_TEST" \
		"$UC_HERE/verbs_test.c" -libverbs ||
		uc_skip "cannot build verbs_test (libibverbs-dev installed?)"
}

vt_failed=0
vt_summary=

# vt_run TIMEOUT NAME ARGS...: one verbs_test run (one KTAP document).
vt_run() {
	t=$1
	name=$2
	shift 2
	echo "# ==== verbs_test $name: $*"
	start=$(date +%s)
	timeout -k 10 "$t" "$VERBS_TEST" "$@"
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) res=ok ;;
	124|137) res="TIMEOUT after ${t}s" ;;
	4) res="SKIP (exit 4)" ;;
	*) res="FAILED (exit $rc)" ;;
	esac
	[ "$rc" = 0 ] || vt_failed=$((vt_failed + 1))
	echo "# ==== verbs_test $name: $res, ${secs}s"
	vt_summary="$vt_summary
# $name: $res, ${secs}s"
}

vt_main() {
	case ${1:-} in
	"") ;;
	-h|--help) vt_usage; exit 0 ;;
	*) vt_usage; exit 2 ;;
	esac
	uc_vm_only
	vt_build
	uc_backlog
	setup_snaa
	trap 'cleanup_snaa; exit 130' INT TERM

	# The limits only keep a hanging run inside the VM's --timeout 600.
	vt_run 240 "$DEV_A<->$DEV_B" --dev-a "$DEV_A" --dev-b "$DEV_B"
	# Case 1 (objects) and 3 (posting) use device A alone: run above.
	vt_run 240 "$DEV_A loopback" --dev-a "$DEV_A" --dev-b "$DEV_A" \
		--cases 2,4,5,6,7

	echo "# ==== verbs.sh summary:$vt_summary"
	cleanup_snaa
	[ "$vt_failed" = 0 ] || exit 1
	exit 0
}

vt_main "$@"
