#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The library of the snaa VM test scripts, which run as root inside the
# test VM (selftests/vm/run), never on the host.  A script sources this
# file, which sources lib/:
#
#   lib/ktap.sh      KTAP output and assertions (ktap_ok, check_eq, ...)
#   lib/time.sh      time limits scaled to the machine (wait_for, snaa_run)
#   lib/module.sh    the module, the provider and the test programs from
#                    the build tree (snaa_install_module, snaa_build)
#   lib/topology.sh  two RDMA devices on a veth pair: setup_snaa,
#                    setup_interop, setup_rxe and their cleanups
#   lib/target.sh    driving uc_target instances (tgt_start, tgt_cmd)
#   lib/counters.sh  snapshots of hw counters (cnt_snap, cnt_delta)

SNAA_TOP=${SNAA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
# Where the test scripts are: the repository's selftests/snaa, or a
# kselftest install directory (scripts/kselftest.sh) with the programs
# the kernel's lib.mk built next to them (and lib/ with them).
SNAA_TEST_DIR=$(cd "$(dirname "$0")" && pwd)
SNAA_LIB=$SNAA_TEST_DIR/lib
[ -f "$SNAA_LIB/ktap.sh" ] || SNAA_LIB=$SNAA_TOP/selftests/snaa/lib

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
