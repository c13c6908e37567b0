#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The library of the snaa VM test scripts, which run as root inside the
# test VM (selftests/vm/run), never on the host.  A script sources this
# file (a script in a subdirectory "../lib.sh"), which sources lib/:
#
#   lib/ktap.sh      KTAP output and assertions (ktap_ok, check_eq, ...)
#   lib/time.sh      time limits scaled to the machine (wait_for, snaa_run)
#   lib/module.sh    the module, the provider and the test programs from
#                    the build tree (snaa_install_module, snaa_build)
#   lib/topology.sh  two RDMA devices on a veth pair: setup_snaa,
#                    setup_interop, setup_rxe and their cleanups
#   lib/target.sh    driving uc_target instances (tgt_start, tgt_cmd)
#   lib/counters.sh  snapshots of hw counters (cnt_snap, cnt_delta)

# Where the test collection is: the repository's selftests/snaa, or a
# kselftest install directory (scripts/kselftest.sh) with the programs
# the kernel's lib.mk built next to the scripts (and lib/ with them).
# A script is either at its top or in one of its subdirectories
# (hostile/, interop/, perf/); SNAA_SCRIPT_DIR is the script's own.
SNAA_SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SNAA_TEST_DIR=$SNAA_SCRIPT_DIR
[ -f "$SNAA_TEST_DIR/lib.sh" ] || SNAA_TEST_DIR=${SNAA_TEST_DIR%/*}
SNAA_TOP=${SNAA_TOP:-$(cd "$SNAA_TEST_DIR/../.." && pwd)}
SNAA_LIB=$SNAA_TEST_DIR/lib
[ -f "$SNAA_LIB/ktap.sh" ] || SNAA_LIB=$SNAA_TOP/selftests/snaa/lib

# snaa_test_progs MAKEFILE: the TEST_PROGS of MAKEFILE, one per line (the
# list may go on over continuation lines).
snaa_test_progs() {
	awk '/^TEST_PROGS *:=/ { on = 1; sub(/^TEST_PROGS *:= */, "") }
	     on { more = sub(/\\$/, ""); for (i = 1; i <= NF; i++) print $i
		  if (!more) on = 0 }' "$1"
}

# snaa_all_tests: every test's path in the collection (TEST_PROGS of the
# Makefile, then of each of its SUBDIRS), in that order.
snaa_all_tests() {
	snaa_test_progs "$SNAA_TEST_DIR/Makefile"
	for d in $(sed -n 's/^SUBDIRS *:= *//p' "$SNAA_TEST_DIR/Makefile"); do
		snaa_test_progs "$SNAA_TEST_DIR/$d/Makefile" | sed "s|^|$d/|"
	done
}

# snaa_help: a script's --help: its header (line 3 up to "set -u"),
# without the comment marks.
snaa_help() {
	sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

# snaa_no_args "$@": for a script that takes no arguments: --help prints
# its header and exits 0, anything else is a usage error (exit 2).
snaa_no_args() {
	case ${1:-} in
	-h|--help) snaa_help; exit 0 ;;
	"") ;;
	*) echo "usage: $0 [--help]" >&2; exit 2 ;;
	esac
}

# snaa_where_mode: the mode of a script that runs between two devices
# (uc.sh, rc.sh), from where it was started: "interop" (rdma_rxe <->
# snaa) as interop/NAME.sh, "snaa" (snaa <-> snaa) at the top.
snaa_where_mode() {
	case $SNAA_SCRIPT_DIR in
	*/interop) echo interop ;;
	*) echo snaa ;;
	esac
}

# shellcheck source=lib/ktap.sh
. "$SNAA_LIB/ktap.sh"
# shellcheck source=lib/time.sh
. "$SNAA_LIB/time.sh"
# shellcheck source=lib/module.sh
. "$SNAA_LIB/module.sh"
# shellcheck source=lib/topology.sh
. "$SNAA_LIB/topology.sh"
# shellcheck source=lib/target.sh
. "$SNAA_LIB/target.sh"
# shellcheck source=lib/counters.sh
. "$SNAA_LIB/counters.sh"
