#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The feature -> test index of Documentation/testing.rst, generated from
# the tests' names:
#
#   - each VM test script (run_tests.sh --list: TEST_PROGS of
#     selftests/snaa/Makefile and of its subdirectories) names its
#     features on a "# Features: a, b" line of its header; a script that
#     runs as several tests through links to it names each one's on a
#     "# Features (NAME.sh): a, b" line; a test in hostile/, interop/ or
#     perf/ has that feature too;
#   - each named test of verbs_test and rc_test (selftests/snaa/*.c,
#     kselftest_harness: a DEV_TEST, PAIR_TEST, RC_TEST or TEST_F_TIMEOUT
#     line) names its feature in a comment after it:
#     "PAIR_TEST(srq, case_srq)	/* srq */".
#
#   scripts/test-index.sh            print the index (reStructuredText)
#   scripts/test-index.sh --update   write it into Documentation/testing.rst,
#                                    between its two ".. test-index" lines
#   scripts/test-index.sh --check    KTAP: is testing.rst's index current,
#                                    does every test name a known feature?
#
# Exit status: 0, 1 (--check: stale or unknown feature), 2 usage error.
set -eu
cd "$(dirname "$0")/.."

doc=Documentation/testing.rst
dir=selftests/snaa

# The features, in the order of the index, and what each is.
features='device|devices, ports, GIDs, sysfs, asynchronous events, module load
verbs|verbs objects, arguments and limits
qp_state|the QP state machine, modify_qp, flush on ERR
cq|completion queues: events, overflow, the extended CQ
uc|Unreliable Connected data path
rc|Reliable Connected data path: ACKs, retransmission, READ
atomics|atomics and the READ/atomic resources of RC
ud|Unreliable Datagram, address handles
srq|shared receive queues
mw|memory windows
doorbell|the doorbell method
rdma_cm|connections through rdma_cm (rping, perftest -R)
kernel|in-kernel consumers (kernel verbs)
wcubuf|the WCU.BUF receive mode and its emulation
naaice|the NAAICE library and software NAA
interop|against rdma_rxe, a peer no one here wrote
perf|perftest bandwidth and latency
netem|impaired links: loss, reordering, duplication, corruption
wire|the receive path on malformed and mutated packets
hostile|hostile input: packets, user space, resource exhaustion
limits|resource limits and large numbers of objects
teardown|devices, netdevs, namespaces and the module removed under load'

# "feature test" pairs, one per line.
pairs() {
	for t in $(sh "$dir/run_tests.sh" --list); do
		n=${t##*/}
		fl=$(sed -n "s/^# Features ($n): *//p" "$dir/$t")
		[ -n "$fl" ] || fl=$(sed -n 's/^# Features: *//p' "$dir/$t")
		case $t in
		*/*) fl="$fl, ${t%/*}" ;;
		esac
		printf '%s\n' "$fl" | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
			sort -u | while read -r f; do
				[ -n "$f" ] && echo "$f $t"
			done
	done
	# the named tests of the kselftest_harness programs: FIXTURE.TEST
	for prog in verbs_test rc_test; do
		sed -n 's/^\([A-Z]*\)_TEST(\([a-z_0-9]*\),.*\/\* *\([a-z_]*\) *\*\/$/\1 \2 \3/p
			s/^TEST_F_TIMEOUT(\([a-z]*\), \([a-z_0-9]*\),.*\/\* *\([a-z_]*\) *\*\/$/\1 \2 \3/p' \
			"$dir/$prog.c" |
			while read -r fx name f; do
				fx=$(printf '%s' "$fx" | tr 'A-Z' 'a-z')
				echo "$f $prog:$fx.$name"
			done
	done
}

index() {
	p=$(pairs)
	echo "=============  =========================================================="
	echo "feature        tests"
	echo "=============  =========================================================="
	printf '%s\n' "$features" | while IFS='|' read -r f what; do
		list=$(printf '%s\n' "$p" | awk -v f="$f" '
			$1 != f { next }
			$2 !~ /:/ { printf "%s``%s``", s, $2; s = ", "; next }
			{	split($2, a, ":")
				if (a[1] != prog) {
					printf "%s%s: ", s ? "; " : "", a[1]
					prog = a[1]
				} else
					printf ", "
				printf "``%s``", a[2]
				s = ", " }')
		[ -n "$list" ] || list="(none)"
		printf '%s\n' "$what: $list" | fold -s -w 58 | awk -v f="$f" '
			NR == 1 { printf "%-13s  %s\n", "``" f "``", $0; next }
			{ printf "%-13s  %s\n", "", $0 }' | sed 's/ *$//'
	done
	echo "=============  =========================================================="
}

# unknown: the features the tests name that the list above does not know.
unknown() {
	known=$(printf '%s\n' "$features" | cut -d'|' -f1)
	pairs | while read -r f t; do
		printf '%s\n' "$known" | grep -qx "$f" || echo "$t: $f"
	done
}

# current: testing.rst with the index between its markers replaced.
current() {
	idx=$(index)
	awk -v idx="$idx" '
		/^\.\. test-index-begin/ { print; print ""; print idx; print ""; skip = 1; next }
		/^\.\. test-index-end/ { skip = 0 }
		!skip' "$doc"
}

case ${1:-} in
"") index ;;
--update)
	grep -q '^\.\. test-index-begin' "$doc" ||
		{ echo "test-index: no '.. test-index-begin' line in $doc" >&2; exit 1; }
	current >"$doc.new" && mv "$doc.new" "$doc"
	;;
--check)
	echo "KTAP version 1"
	echo "1..2"
	bad=$(unknown)
	if [ -z "$bad" ]; then
		echo "ok 1 - every test names a known feature"
	else
		printf '%s\n' "$bad" | sed 's/^/# unknown feature: /'
		echo "not ok 1 - every test names a known feature"
	fi
	if current | cmp -s - "$doc"; then
		echo "ok 2 - $doc's feature index is current"
	else
		current | diff -u "$doc" - | sed 's/^/# /' | head -n 40
		echo "# run scripts/test-index.sh --update"
		echo "not ok 2 - $doc's feature index is current"
	fi
	[ -z "$bad" ] && current | cmp -s - "$doc" || exit 1
	;;
-h | --help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
*) echo "usage: $0 [--update|--check]" >&2; exit 2 ;;
esac
