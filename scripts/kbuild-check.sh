#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build snaa.ko and the test module snaa_ktest.ko from scratch for one
# kernel and check that the build is clean (KTAP):
#
#   scripts/kbuild-check.sh [KVER]     (default: scripts/kver.sh)
#
# 1. "make modules ktest KVER=..." (W=1) succeeds, 2. without a compiler
# warning, 3.-4. both modules are built for KVER, 5. "make sparse
# KVER=..." (sparse over every file, C=2) reports nothing.  It builds
# under build/kcheck/KVER (SNAA_MODBUILD_ROOT, scripts/modbuild.sh), not
# where the VM tests take their modules from (build/kver/KVER), so that it
# can run while they do.
set -u
cd "$(dirname "$0")/.." || exit 1
SNAA_MODBUILD_ROOT=build/kcheck
export SNAA_MODBUILD_ROOT
kver=${1:-$(sh scripts/kver.sh)}
log=$(mktemp /tmp/snaa-kbuild.XXXXXX)
trap 'rm -f "$log"' EXIT
n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

# show_log REGEX: the matching lines of the last make, else its tail.
show_log() {
	if grep -qE "$1" "$log"; then
		grep -E "$1" "$log" | head -n 40 | sed 's/^/# /'
	else
		tail -n 20 "$log" | sed 's/^/# /'
	fi
}

echo "KTAP version 1"
echo "# suite: kbuild-$kver"
echo "1..5"
kdir=/lib/modules/$kver/build
if ! mod=$(sh scripts/modbuild.sh --prepare "$kver") ||
   ! ktest=$(sh scripts/modbuild.sh --prepare "$kver" selftests/snaa/ktest) ||
   [ ! -d "$kdir" ]; then
	echo "# no build directory for $kver ($kdir)"
	echo "Bail out! cannot build for $kver"
	exit 1
fi

# Make every file compile again so that every warning shows.
make -C "$kdir" M="$PWD/$mod" clean >/dev/null 2>&1
make -C "$kdir" M="$PWD/$ktest" clean >/dev/null 2>&1
if make modules ktest KVER="$kver" >"$log" 2>&1 &&
   [ -f "$mod/snaa.ko" ] &&
   [ -f "$ktest/snaa_ktest.ko" ]; then
	ok "W=1 build for $kver"
else
	show_log 'error|Error'
	not_ok "W=1 build for $kver"
fi
if grep -qE '(warning|error):' "$log"; then
	show_log '(warning|error):'
	not_ok "W=1 build for $kver has no compiler warning"
else
	ok "W=1 build for $kver has no compiler warning"
fi
for ko in "$mod/snaa.ko" "$ktest/snaa_ktest.ko"; do
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	if [ "${vermagic%% *}" = "$kver" ]; then
		ok "$ko is built for $kver"
	else
		echo "# vermagic: '$vermagic'"
		not_ok "$ko is built for $kver"
	fi
done
# Up to date now: this runs sparse over every file, compiles nothing.
if make sparse KVER="$kver" >"$log" 2>&1 &&
   ! grep -qE '(warning|error):' "$log"; then
	ok "sparse for $kver reports nothing"
else
	show_log '(warning|error):'
	not_ok "sparse for $kver reports nothing"
fi
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
