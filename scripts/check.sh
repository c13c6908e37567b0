#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run the test suites and print the total as "N passed, N failed".
#
#   scripts/check.sh [host|vm|all]     (default: all)
#
# Every suite prints KTAP; each "ok N" / "not ok N" line at the start of
# a line counts as one test.  A suite that exits non-zero without
# reporting a failure (a crash, a VM that did not come back) counts as
# one failed test of its own, so nothing can pass by dying quietly.
set -u

cd "$(dirname "$0")/.." || exit 1
what=${1:-all}
: "${SNAA_KVER:=$(sh scripts/kver.sh)}"
export SNAA_KVER

log=$(mktemp /tmp/snaa-check.XXXXXX)
trap 'rm -f "$log" "$log.out"' EXIT
passed=0
failed=0

suite() {
	name=$1
	shift
	echo "# ---- suite $name: $*"
	"$@" > "$log.out" 2>&1
	rc=$?
	cat "$log.out"
	p=$(grep -cE '^ok [0-9]+' "$log.out")
	f=$(grep -cE '^not ok [0-9]+' "$log.out")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - suite $name exited with status $rc"
		f=1
	fi
	if [ "$rc" = 0 ] && [ "$p" = 0 ]; then
		echo "not ok - suite $name ran no test"
		f=1
	fi
	echo "# ---- suite $name: $p passed, $f failed (exit $rc)"
	passed=$((passed + p))
	failed=$((failed + f))
}

if [ "$what" = host ] || [ "$what" = all ]; then
	suite unit make -s -C tests/unit check
	suite provider make -s -C userspace/provider check
fi

if [ "$what" = vm ] || [ "$what" = all ]; then
	sh scripts/modroot.sh "$SNAA_KVER" || failed=$((failed + 1))
	suite vm-runner bash selftests/vm/selftest.sh
	suite vm-device selftests/vm/run --timeout 900 -- \
		sh selftests/snaa/run_tests.sh
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
