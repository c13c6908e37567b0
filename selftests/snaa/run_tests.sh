#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run every snaa VM test in one VM boot:
#     selftests/vm/run -- sh selftests/snaa/run_tests.sh [TEST...]
# Each test prints its own KTAP document; the exit status is non-zero
# if any test failed.  Tests run in a fresh state: the module is
# unloaded and test namespaces/links are removed between them.
set -u
cd "$(dirname "$0")" || exit 1

tests=${*:-$(sed -n 's/^TEST_PROGS *:= *//p' Makefile)}
rc=0
for t in $tests; do
	echo "# ==== $t"
	t0=$(date +%s)
	sh "./$t" || rc=1
	echo "# ==== $t: $(($(date +%s) - t0))s"
	# Leave nothing behind for the next test.
	ip -all netns delete 2>/dev/null
	for l in $(ip -o link show type veth 2>/dev/null |
		   sed -n 's/^[0-9]*: \([^@:]*\).*/\1/p'); do
		ip link del "$l" 2>/dev/null
	done
	rmmod snaa 2>/dev/null
done
exit $rc
