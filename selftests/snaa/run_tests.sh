#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run snaa VM tests in one VM boot:
#     selftests/vm/run -- sh selftests/snaa/run_tests.sh [TEST...]
#     sh selftests/snaa/run_tests.sh --total [TEST...]
#     sh selftests/snaa/run_tests.sh --budgets [TEST...]
#     sh selftests/snaa/run_tests.sh --list
# (default: every test, lib.sh's snaa_all_tests).  A TEST is named by its
# path in the collection: uc.sh, interop/uc.sh, hostile/fuzz.sh.  Each test prints its own
# KTAP document; the exit status is non-zero if any test failed.  Tests
# run in a fresh state: the module is unloaded and test namespaces/links
# are removed between them.
#
# Each test has a time budget (the file "budgets": seconds on a machine
# of normal speed, about twice what it takes there), multiplied by
# $SNAA_TIME_SCALE (scripts/check.sh measures it, lib.sh's snaa_secs).
# A test still running at the end of its budget is killed, with every
# program it started, and reported as one failed test that says which
# test and what its budget was; the next test runs as usual.  --total
# prints the sum of the budgets of the tests named (at scale 1:
# selftests/vm/run scales its --timeout itself), --budgets a line
# "TEST SECONDS" for each, --list every test.
set -u
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$SNAA_TEST_DIR" || exit 1

mode=
case ${1:-} in
--total|--budgets|--list)
	mode=$1
	shift
	;;
esac
tests=${*:-$(snaa_all_tests)}

# budget TEST: TEST's budget in seconds at scale 1 (600 if not listed)
budget() {
	awk -v t="$1" '$1 == t { b = $2 } END { print b ? b : 600 }' budgets
}

if [ "$mode" = --list ]; then
	printf '%s\n' $tests
	exit 0
elif [ "$mode" = --budgets ]; then
	for t in $tests; do
		echo "$t $(budget "$t")"
	done
	exit 0
elif [ "$mode" = --total ]; then
	sum=0
	for t in $tests; do
		sum=$((sum + $(budget "$t")))
	done
	echo "$sum"
	exit 0
fi

# run_budget SECONDS TEST: run TEST in a session of its own; if it is
# still running after SECONDS, end everything in that session (the
# programs it started under timeout(1) too, which live in process groups
# of their own) and return 124.  Else TEST's exit status.
run_budget() {
	setsid sh "./$2" &
	rb_pid=$!
	rb_end=$(($(date +%s) + $1))
	while kill -0 "$rb_pid" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$rb_end" ]; then
			pkill -TERM -s "$rb_pid"
			sleep 5
			pkill -KILL -s "$rb_pid"
			wait "$rb_pid"
			return 124
		fi
		sleep 1
	done
	wait "$rb_pid"
}

rc=0
for t in $tests; do
	lim=$(snaa_secs "$(budget "$t")")
	echo "# ==== $t (budget ${lim}s)"
	t0=$(date +%s)
	run_budget "$lim" "$t"
	trc=$?
	secs=$(($(date +%s) - t0))
	if [ "$trc" = 124 ]; then
		rc=1
		echo "KTAP version 1"
		echo "1..1"
		echo "# $t was still running after its budget of ${lim}s" \
			"($(budget "$t")s x time scale ${SNAA_TIME_SCALE:-1}): killed"
		echo "not ok 1 - $t finished within its time budget (${lim}s)"
	elif [ "$trc" != 0 ]; then
		rc=1
	fi
	echo "# ==== $t: ${secs}s of ${lim}s"
	# Leave nothing behind for the next test.
	ip -all netns delete 2>/dev/null
	for l in $(ip -o link show type veth 2>/dev/null |
		   sed -n 's/^[0-9]*: \([^@:]*\).*/\1/p'); do
		ip link del "$l" 2>/dev/null
	done
	rmmod snaa 2>/dev/null
	# rdma_rxe (the interop tests') holds UDP port 4791 while loaded
	modprobe -r rdma_rxe 2>/dev/null
done
exit $rc
