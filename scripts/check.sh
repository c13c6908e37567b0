#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run the test suites and print the total as "N passed, N failed".
#
#   scripts/check.sh [host|kbuild|vm|compat|debug|all]   (default: all)
#
#   host    unit tests, fuzz targets (regression inputs, then a fixed
#           number of runs from a fixed seed), provider and libnaaice tests
#           on the host
#   kbuild  W=1 + sparse build of snaa.ko for the default kernel and for
#           every compat kernel (scripts/kbuild-check.sh)
#   vm      the VM runner's self-test and every VM test on the default
#           kernel ($SNAA_KVER, else scripts/kver.sh: bookworm's 6.1),
#           then ktest.sh once more through the kernel's kselftest
#           framework (scripts/kselftest.sh)
#   compat  the VM tests in $SNAA_COMPAT_TESTS on every compat kernel
#           (builds the module for it first)
#   debug   the VM tests in $SNAA_DEBUG_TESTS on the debug kernel (KASAN,
#           lockdep, kmemleak, UBSAN, DEBUG_OBJECTS, KFENCE), built once
#           per machine by scripts/debug-kernel.sh (with "all", in the
#           background from the start); any report fails
#
# The compat kernels are $SNAA_COMPAT_KVERS if set (empty: none), else the
# newest installed 6.12 *-amd64 kernel with headers (bookworm-backports,
# "SNAA_BACKPORTS=1 make deps"); with none installed that is a failure
# unless SNAA_BACKPORTS=0.
#
# Time limits: every VM test has a budget (selftests/snaa/budgets), and
# every limit (the budgets, the VM's timeout, lib.sh's snaa_run and
# wait_for) is multiplied by SNAA_TIME_SCALE: how much slower than
# normal the test VM is today, measured once per run before the first VM
# suite (selftests/vm/calibrate.sh against its time on a normal day,
# $calib_ref_ms ms; at least 1, at most $calib_max).  Set SNAA_TIME_SCALE
# to skip the measurement.  A test that runs out of its budget is killed
# and reported with its time; a VM that runs out of time names the test
# that was running.
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
# On the compat kernels, what their differences can break: the module
# and device setup, the verbs and kernel-consumer APIs (compat.h), the
# receive path's view of the network stack, RC and rdma_cm against
# rdma_rxe, and the WCU.BUF mode.  The UC datapath is the same code as
# on 6.1 once those work.
: "${SNAA_COMPAT_TESTS:=device.sh malformed.sh verbs.sh ktest.sh rc_interop.sh wcubuf_rx.sh}"
# On the debug kernel (KASAN makes everything several times slower, and
# the CI budget is an hour from a cold machine): the tests that exercise
# the most kernel code per second.  verbs and ktest create and destroy
# every kind of object (memory windows, fast registration, SRQs), fuzz
# fires malformed packets by the thousand, teardown (one round of each),
# limits and abuse carry live UC traffic; rc_snaa runs every RC
# operation over IPv4, rping (QP1, rdma_cm) and a peer lost mid-stream.
# SNAA_DEBUG_TESTS="..." runs others (all of them: the TEST_PROGS of
# selftests/snaa/Makefile).
: "${SNAA_DEBUG_TESTS:=verbs.sh ktest.sh fuzz.sh teardown.sh limits.sh abuse.sh rc_snaa.sh wcubuf_rx.sh}"

# The newest 6.12 kernel that has headers and an image, unless it is the
# default kernel already.
compat_kvers() {
	for d in /lib/modules/6.12.*-amd64; do
		v=${d##*/}
		[ -d "$d/build" ] && [ -e "/boot/vmlinuz-$v" ] &&
			[ "$v" != "$SNAA_KVER" ] && echo "$v"
	done | sort -V | tail -n 1
}
if [ -z "${SNAA_COMPAT_KVERS+set}" ]; then
	SNAA_COMPAT_KVERS=$(compat_kvers)
	case $SNAA_KVER in
	6.12.*) ;;	# the default kernel is 6.12 already
	*)
		if [ -z "$SNAA_COMPAT_KVERS" ] &&
		   [ "${SNAA_BACKPORTS:-1}" != 0 ]; then
			no_compat="no 6.12 kernel with headers installed (SNAA_BACKPORTS=1 make deps)"
		fi
		;;
	esac
fi

# selftests/vm/calibrate.sh takes about this long in the test VM on a
# machine of normal speed (2 cores, nothing else running but the
# debug-kernel build that "all" starts beside it).
calib_ref_ms=4500
calib_max=4

log=$(mktemp /tmp/snaa-check.XXXXXX)
dk_pid=
trap 'rm -f "$log" "$log.out" "$log.dk" "$log.dkmsg"
      [ -n "$dk_pid" ] && kill -- "-$dk_pid" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
passed=0
failed=0
todo=0

suite() {
	name=$1
	shift
	echo "# ---- suite $name: $*"
	t0=$(date +%s)
	"$@" > "$log.out" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	cat "$log.out"
	if [ "$rc" = 124 ]; then
		# selftests/vm/run's timeout: which test was running?
		running=$(awk '
			/^# ==== [A-Za-z0-9_.-]+\.sh \(budget/ { t = $3; b = $5 }
			/^# ==== [A-Za-z0-9_.-]+\.sh: [0-9]+s of/ { t = "" }
			END { if (t != "") print t " (budget " b }' "$log.out")
		echo "not ok - suite $name: the VM ran out of time after ${secs}s${running:+ while $running}"
	fi
	p=$(grep -cE '^ok [0-9]+' "$log.out")
	f=$(grep -cE '^not ok [0-9]+' "$log.out")
	# "ok N - ... # TODO/SKIP": a known gap or a test that could not
	# run here; reported apart, never as a pass.
	t=$(grep -cE '^ok [0-9]+ .*# (TODO|SKIP)' "$log.out")
	p=$((p - t))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - suite $name exited with status $rc"
		f=1
	fi
	if [ "$rc" = 0 ] && [ "$p" = 0 ] && [ "$t" = 0 ]; then
		echo "not ok - suite $name ran no test"
		f=1
	fi
	echo "# ---- suite $name: $p passed, $f failed, $t todo/skipped (exit $rc, ${secs}s)"
	passed=$((passed + p))
	failed=$((failed + f))
	todo=$((todo + t))
}

# The debug kernel takes a quarter of an hour to build on a cold machine
# (scripts/debug-kernel.sh; then it is cached).  With "all" it builds in
# the background, in its own session, as SCHED_IDLE and with idle I/O
# priority, while the other stages run: the VM tests leave a third of
# the CPU idle, and a task of theirs that wakes up preempts the build at
# once.  (Measured at nice 19: built in 19 min alongside the 6.1 suite,
# which took 29 min instead of 22.)
if [ "$what" = all ]; then
	setsid chrt --idle 0 ionice -c 3 sh scripts/debug-kernel.sh \
		>"$log.dk" 2>"$log.dkmsg" &
	dk_pid=$!
fi

if [ "$what" = host ] || [ "$what" = all ]; then
	suite unit make -s -C tests/unit check
	suite fuzz make -s -C tests/fuzz check
	suite provider make -s -C userspace/provider check
	suite naaice make -s -C userspace/libnaaice check
	suite wcubuf make -s -C userspace/libwcubuf check
fi

if [ "$what" = kbuild ] || [ "$what" = all ]; then
	for k in "$SNAA_KVER" $SNAA_COMPAT_KVERS; do
		suite "kbuild-$k" sh scripts/kbuild-check.sh "$k"
	done
fi

# calibrate: set SNAA_TIME_SCALE (unless set) from one boot of
# selftests/vm/calibrate.sh on the default kernel.
calibrate() {
	[ -n "${SNAA_TIME_SCALE:-}" ] && return 0
	cal=$(SNAA_TIME_SCALE=1 selftests/vm/run --timeout 300 -- \
		sh selftests/vm/calibrate.sh 2>&1 |
		sed -n 's/^calibrate: \([0-9][0-9]*\)$/\1/p')
	if [ -z "$cal" ]; then
		SNAA_TIME_SCALE=$calib_max
		echo "# machine speed: the calibration VM failed; time limits x $SNAA_TIME_SCALE"
	else
		SNAA_TIME_SCALE=$(awk -v c="$cal" -v r="$calib_ref_ms" \
			-v m="$calib_max" 'BEGIN {
				f = int(c * 10 / r + 0.999) / 10
				if (f < 1)
					f = 1
				if (f > m)
					f = m
				print f }')
		echo "# machine speed: calibrate.sh took ${cal} ms (${calib_ref_ms} ms on a normal day): time limits x $SNAA_TIME_SCALE"
	fi
	export SNAA_TIME_SCALE
}

# vm_timeout TEST...: the VM's timeout for run_tests.sh TEST... (all
# of them if none): the tests' budgets and a minute per test for the
# boot and the cleanup between them (selftests/vm/run scales it).
vm_timeout() {
	vt_n=$#
	[ "$vt_n" = 0 ] &&
		vt_n=$(sed -n 's/^TEST_PROGS *:= *//p' selftests/snaa/Makefile | wc -w)
	echo $(($(SNAA_TIME_SCALE=1 sh selftests/snaa/run_tests.sh --total "$@") + 60 * vt_n))
}

if [ "$what" = vm ] || [ "$what" = all ]; then
	sh scripts/modroot.sh "$SNAA_KVER" || failed=$((failed + 1))
	suite vm-runner bash selftests/vm/selftest.sh
	calibrate
	suite vm-device selftests/vm/run --timeout "$(vm_timeout)" -- \
		sh selftests/snaa/run_tests.sh
	# The same collection through the kernel's kselftest framework, as
	# a kernel developer runs it in-tree (installed whole; one test run,
	# for the time).
	if ks=$(sh scripts/kselftest.sh 2>"$log.out"); then
		suite "vm-kselftest" selftests/vm/run --timeout 600 -- \
			env SNAA_TOP="$PWD" "$ks/run_kselftest.sh" \
			-t snaa:ktest.sh
	else
		cat "$log.out"
		echo "not ok - kselftest: scripts/kselftest.sh failed"
		failed=$((failed + 1))
	fi
fi

if [ "$what" = compat ] || [ "$what" = all ]; then
	if [ -n "${no_compat:-}" ]; then
		echo "not ok - compat: $no_compat"
		failed=$((failed + 1))
	fi
	for k in $SNAA_COMPAT_KVERS; do
		# "all" built it in the kbuild step already.
		if [ "$what" = compat ]; then
			make -s modules ktest KVER="$k" >/dev/null 2>&1 ||
				echo "# compat: make modules ktest KVER=$k failed"
		fi
		if ! sh scripts/modroot.sh "$k"; then
			echo "not ok - compat: scripts/modroot.sh $k"
			failed=$((failed + 1))
			continue
		fi
		calibrate
		# shellcheck disable=SC2086 # a list of test names
		suite "vm-$k" selftests/vm/run --kernel "$k" \
			--timeout "$(vm_timeout $SNAA_COMPAT_TESTS)" -- \
			sh selftests/snaa/run_tests.sh $SNAA_COMPAT_TESTS
	done
fi

# "soak": selftests/snaa/soak.sh on the debug kernel for
# $SNAA_SOAK_SECONDS (make soak; never part of "all").
if [ "$what" = debug ] || [ "$what" = all ] || [ "$what" = soak ]; then
	# Builds the kernel the first time on a machine (minutes), then
	# reuses it from the cache; with "all" that build started first.
	if [ -n "$dk_pid" ]; then
		t0=$(date +%s)
		wait "$dk_pid"
		dk_rc=$?
		dk_pid=
		echo "# debug kernel: waited $(($(date +%s) - t0))s for its build"
	else
		sh scripts/debug-kernel.sh >"$log.dk" 2>"$log.dkmsg"
		dk_rc=$?
	fi
	sed 's/^/# /' "$log.dkmsg"
	dk=$(cat "$log.dk")
	if [ "$dk_rc" = 0 ] && [ -n "$dk" ]; then
		if make -s modules ktest KVER="$dk" >"$log.out" 2>&1 &&
		   sh scripts/modroot.sh "$dk"; then
			# KASAN, lockdep and kmemleak make it about three
			# times slower than the distribution's kernel.
			calibrate
			dk_scale=$(awk -v f="$SNAA_TIME_SCALE" \
				'BEGIN { print f * 3 }')
			if [ "$what" = soak ]; then
				sk=${SNAA_SOAK_SECONDS:-1800}
				suite "vm-soak" env SNAA_TIME_SCALE="$dk_scale" \
					SNAA_SOAK_SECONDS="$sk" \
					selftests/vm/run --kernel "$dk" \
					--timeout $((sk + 900)) -- \
					sh selftests/snaa/soak.sh
			else
				# shellcheck disable=SC2086 # a list of test names
				suite "vm-debug" env SNAA_TIME_SCALE="$dk_scale" \
					SNAA_TEARDOWN_REPEAT=1 SNAA_LIMITS_AH=0 \
					SNAA_TEARDOWN_QPS=2000 SNAA_RC_QUICK=1 \
					selftests/vm/run --kernel "$dk" \
					--timeout "$(vm_timeout $SNAA_DEBUG_TESTS)" -- \
					sh selftests/snaa/run_tests.sh $SNAA_DEBUG_TESTS
			fi
		else
			cat "$log.out"
			echo "not ok - debug: building snaa.ko for $dk failed"
			failed=$((failed + 1))
		fi
	else
		echo "not ok - debug: scripts/debug-kernel.sh failed"
		failed=$((failed + 1))
	fi
fi

if [ $((passed + failed)) = 0 ]; then
	echo "not ok - no test ran"
	failed=1
fi
echo "# $todo todo/skipped (known gaps and tests that cannot run here)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
