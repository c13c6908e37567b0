#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run the test suites and print the total as "N passed, N failed".
#
#   scripts/check.sh [host|kbuild|vm|compat|matrix|debug|soak|all|full]
#                                                     (default: all)
#
#   host    unit tests, fuzz targets (regression inputs, then a fixed
#           number of runs from a fixed seed), provider, libnaaice and
#           libwcubuf tests on the host; the feature index of
#           Documentation/testing.rst (scripts/test-index.sh --check)
#   kbuild  W=1 + sparse build of snaa.ko from scratch for the default
#           kernel and for every compat kernel (scripts/kbuild-check.sh,
#           under build/kcheck/: the VM tests' modules stay as they are)
#   vm      the VM runner's self-test (with "all": in the host stage's
#           background lane), the VM tests of $SNAA_VM_TESTS on
#           the default kernel ($SNAA_KVER, else scripts/kver.sh:
#           bookworm's 6.1), then ktest.sh through the kernel's kselftest
#           framework (scripts/kselftest.sh)
#   compat  the VM tests in $SNAA_COMPAT_TESTS on every compat kernel
#   matrix  each distribution of $SNAA_MATRIX (default "trixie sid"; empty:
#           none): its cached root made (scripts/roots.sh), snaa built
#           in it from scratch and its kernel and userland booted in the
#           VM for $SNAA_MATRIX_TESTS (scripts/matrix.sh; NAAICE's
#           quick set)
#   debug   the VM tests in $SNAA_DEBUG_TESTS on the debug kernel (KASAN,
#           lockdep, kmemleak, UBSAN, DEBUG_OBJECTS, KFENCE), built once
#           per machine by scripts/debug-kernel.sh; any report fails
#   soak    selftests/snaa/soak.sh on the debug kernel (make soak)
#   all     make check: every stage above but soak, at the same time
#           where they can be (below)
#   full    make check-full: as "all", with every VM test on the default
#           and the compat kernels and the repeats that "all" leaves out
#
# What "all" leaves out, because it runs elsewhere already (each check
# still runs at least once; "full" runs everything everywhere):
#   - on the default kernel, the tests whose only subject is hostile
#     input or teardown (hostile/fuzz.sh, hostile/abuse.sh,
#     hostile/teardown.sh) and ktest.sh: the debug kernel, a 6.1 of the
#     same source, runs them (and the kselftest stage runs ktest.sh on
#     the default kernel);
#   - perftest between two snaa devices (perf/uc.sh, perf/rc.sh):
#     perf/uc_interop.sh and perf/rc_interop.sh run the same programs
#     between snaa and rdma_rxe in both directions;
#   - the compat kernel's VM suite (bookworm-backports' 6.12): the trixie
#     row of the matrix boots trixie's 6.12 (with trixie's userland);
#     the compat kernel is still built (kbuild);
#   - on the debug kernel, hostile/limits.sh and wcubuf_rx.sh (the
#     default and the compat kernels run them), hostile/abuse.sh's seeds
#     2 and 3, hostile/fuzz.sh's rounds 5 to 8, hostile/teardown.sh's
#     second and third rounds, verbs_test's crowd of QPs and MRs.
#
# How "all" and "full" use the machine: two VM lanes and a host lane run
# side by side.  The host lane runs the host stage, the VM runner's
# self-test and the kbuild stage.  The debug lane builds the debug kernel
# if it is not cached (SCHED_IDLE), the default kernel's lane runs the
# first half of its suite; then each lane takes the next VM job that no
# lane has taken (the other half, the two halves of the debug suite, the
# compat suite, each matrix row).  The host lane also makes the matrix's
# roots, once per machine (debootstrap).  A VM that
# shares the machine with another gets twice the time limits.  Each
# stage's output is printed whole when it ends, with its time; at the
# end, a table of the stages' times.
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
case $what in
host | kbuild | vm | compat | matrix | debug | soak | all | full) ;;
*)
	echo "usage: $0 [host|kbuild|vm|compat|matrix|debug|soak|all|full]" >&2
	exit 2 ;;
esac
: "${SNAA_KVER:=$(sh scripts/kver.sh)}"
export SNAA_KVER
t_start=$(date +%s)

all_tests=$(sh selftests/snaa/run_tests.sh --list | tr '\n' ' ')
# without_tests "A B": $all_tests less A and B
without_tests() {
	for t in $all_tests; do
		case " $1 " in
		*" $t "*) ;;
		*) printf '%s ' "$t" ;;
		esac
	done
}
# What runs where.  On the compat kernels, what their differences can
# break: the module and device setup, the verbs and kernel-consumer APIs
# (compat.h), the receive path's view of the network stack, RC and
# rdma_cm (rc.sh, quick), the WCU.BUF mode, the object limits and
# the hand-off's CPU choice (rc.sh).  The UC datapath is the same
# code as on 6.1 once those work.
#
# On the debug kernel (KASAN makes everything several times slower): the
# tests that exercise the most kernel code per second.  verbs and ktest
# create and destroy every kind of object (memory windows, fast
# registration, SRQs), fuzz fires malformed packets by the thousand,
# teardown (one round of each) and abuse carry live UC traffic; rc.sh
# runs every RC operation over IPv4, rping (QP1, rdma_cm) and a peer lost
# mid-stream ("full" adds limits and wcubuf_rx).  Two groups of about
# the same time ("|" between them), each a VM boot of its own, so that
# both VM lanes can take one.  SNAA_DEBUG_TESTS="..." runs others.  There
# "all" runs one abuser seed of the three, half of the fuzzer's rounds
# and verbs without its crowd of QPs and MRs (verbs.sh says why).
if [ "$what" = full ]; then
	: "${SNAA_VM_TESTS:=$all_tests}"
	: "${SNAA_COMPAT_TESTS:=$all_tests}"
	: "${SNAA_DEBUG_TESTS:=verbs.sh hostile/teardown.sh hostile/fuzz.sh wcubuf_rx.sh | hostile/abuse.sh rc.sh hostile/limits.sh ktest.sh}"
	compat_rc_quick=0
	debug_seeds="1 2 3"
	debug_fuzz_rounds=8
	debug_verbs_quick=0
else
	: "${SNAA_VM_TESTS:=$(without_tests "ktest.sh hostile/fuzz.sh hostile/abuse.sh hostile/teardown.sh perf/uc.sh perf/rc.sh")}"
	# In "all", 6.12 is booted by the trixie row of the matrix (its
	# own 6.12, with its own userland); the compat kernel is built
	# (kbuild) only.
	if [ "$what" = all ]; then
		: "${SNAA_COMPAT_TESTS=}"
	else
		: "${SNAA_COMPAT_TESTS:=device.sh hostile/malformed.sh verbs.sh ktest.sh wcubuf_rx.sh hostile/limits.sh rc.sh}"
	fi
	: "${SNAA_DEBUG_TESTS:=verbs.sh hostile/teardown.sh hostile/fuzz.sh | hostile/abuse.sh rc.sh ktest.sh}"
	export SNAA_TEARDOWN_REPEAT="${SNAA_TEARDOWN_REPEAT:-1}"
	compat_rc_quick=1
	debug_seeds=1
	debug_fuzz_rounds=4
	debug_verbs_quick=1
fi

# The support matrix's rows besides bookworm (scripts/matrix.sh) and the
# tests each runs ("all": NAAICE's and rc.sh's quick sets).
: "${SNAA_MATRIX=trixie sid}"
matrix_quick=1
[ "$what" != full ] || matrix_quick=0
: "${SNAA_MATRIX_TESTS:=device.sh verbs.sh interop/uc.sh interop/rc.sh interop/pyverbs.sh perf/uc_interop.sh wcubuf_rx.sh naaice.sh}"

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
# machine of normal speed (2 cores, nothing else running).
calib_ref_ms=4500
calib_max=4

log=$(mktemp -d /tmp/snaa-check.XXXXXX)
bg_jobs=
trap 'for j in $bg_jobs; do kill -- "-${j%%:*}" 2>/dev/null; done
      rm -rf "$log"' EXIT
trap 'exit 130' INT TERM
passed=0
failed=0
todo=0

# stage_time NAME SECONDS: remember a stage's time for the table at the end.
stage_time() {
	echo "$1 $2" >>"$log/times"
}

# suite_not_ok TEXT: what went wrong with suite $name as a whole.
suite_not_ok() {
	echo "not ok - suite $name: $*"
	echo "$name: $*" >>"$log/failures"
}

# suite NAME CMD...: run CMD, print its output and count its KTAP lines.
suite() {
	name=$1
	shift
	echo "# ---- suite $name: $*"
	t0=$(date +%s)
	"$@" > "$log/$name.out" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	cat "$log/$name.out"
	if [ "$rc" = 124 ]; then
		# selftests/vm/run's timeout: which test was running?
		running=$(awk '
			/^# ==== [A-Za-z0-9_.\/-]+\.sh \(budget/ { t = $3; b = $5 }
			/^# ==== [A-Za-z0-9_.\/-]+\.sh: [0-9]+s of/ { t = "" }
			END { if (t != "") print t " (budget " b }' "$log/$name.out")
		suite_not_ok "the VM ran out of time after ${secs}s${running:+ while $running}"
	fi
	p=$(grep -cE '^ok [0-9]+' "$log/$name.out")
	f=$(grep -cE '^not ok [0-9]+' "$log/$name.out")
	# "ok N - ... # TODO/SKIP": a known gap or a test that could not
	# run here; reported apart, never as a pass.  "# SKIP not selected":
	# a named test its program was told not to run (vu_harness.h): no
	# test at all.
	t=$(grep -cE '^ok [0-9]+ .*# (TODO|SKIP)' "$log/$name.out")
	n=$(grep -cE '^ok [0-9]+ .*# SKIP not selected' "$log/$name.out")
	p=$((p - t))
	t=$((t - n))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		suite_not_ok "exited with status $rc"
		f=1
	fi
	if [ "$rc" = 0 ] && [ "$p" = 0 ] && [ "$t" = 0 ]; then
		suite_not_ok "ran no test"
		f=1
	fi
	# the failures again at the end of the run, where CI's tail of
	# the log shows them
	grep -E '^[[:space:]]*not ok ' "$log/$name.out" | grep -vE '# (TODO|SKIP)' |
		sed "s|^|$name: |" >>"$log/failures"
	echo "# ---- suite $name: $p passed, $f failed, $t todo/skipped (exit $rc, ${secs}s)"
	passed=$((passed + p))
	failed=$((failed + f))
	todo=$((todo + t))
}

# not_ok TEXT: one failed test of the runner itself.
not_ok() {
	echo "not ok - $*"
	echo "runner: $*" >>"$log/failures"
	failed=$((failed + 1))
}

# bg NAME FUNCTION: run FUNCTION (stages that call suite) in the
# background, in a process group of its own; bg_collect prints its output and
# adds its counts.
# shellcheck disable=SC2030 # the counts are the subshell's own, on purpose
bg() {
	# job control on: the job gets a process group of its own, which
	# the EXIT trap can end with everything it started
	set -m
	(
		passed=0
		failed=0
		todo=0
		bg_t0=$(date +%s)
		"$2"
		stage_time "$1" $(($(date +%s) - bg_t0))
		echo "$passed $failed $todo" >"$log/$1.counts"
	) >"$log/$1.bg" 2>&1 &
	bg_jobs="$bg_jobs $!:$1"
	set +m
	echo "# ---- stage $1 runs in the background"
}

# shellcheck disable=SC2031 # the lanes' counts come back in files
bg_collect() {
	for j in $bg_jobs; do
		wait "${j%%:*}"
		n=${j#*:}
		echo "# ==== stage $n (ran in the background)"
		cat "$log/$n.bg"
		if read -r p f t <"$log/$n.counts" 2>/dev/null; then
			passed=$((passed + p))
			failed=$((failed + f))
			todo=$((todo + t))
		else
			not_ok "stage $n ended without its counts"
		fi
	done
	bg_jobs=
}

# calibrate: set SNAA_TIME_SCALE (unless set) from one boot of
# selftests/vm/calibrate.sh on the default kernel, alone on the machine.
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

# scaled FACTOR: $SNAA_TIME_SCALE times FACTOR
scaled() {
	awk -v f="$SNAA_TIME_SCALE" -v g="$1" 'BEGIN { print f * g }'
}

# vm_timeout TEST...: the VM's timeout for run_tests.sh TEST...: the
# tests' budgets and a minute per test for the boot and the cleanup
# between them (selftests/vm/run scales it).
vm_timeout() {
	echo $(($(SNAA_TIME_SCALE=1 sh selftests/snaa/run_tests.sh --total "$@") + 60 * $#))
}

# modules_for KVER: build snaa.ko and snaa_ktest.ko for KVER and stage
# them for the VM (scripts/modroot.sh); false (and the log) if that fails.
modules_for() {
	if make -s modules ktest KVER="$1" >"$log/mod-$1.out" 2>&1 &&
	   sh scripts/modroot.sh "$1" >>"$log/mod-$1.out" 2>&1; then
		return 0
	fi
	sed 's/^/# /' "$log/mod-$1.out" | tail -n 40
	return 1
}

stage_host() {
	suite unit make -s -C tests/unit check
	suite fuzz make -s -C tests/fuzz check
	suite provider make -s -C userspace/provider check
	suite common make -s -C userspace/common check
	suite naaice make -s -C userspace/libnaaice check
	suite wcubuf make -s -C userspace/libwcubuf check
	suite test-index sh scripts/test-index.sh --check
}

stage_kbuild() {
	for k in "$SNAA_KVER" $SNAA_COMPAT_KVERS; do
		suite "kbuild-$k" sh scripts/kbuild-check.sh "$k"
	done
}

# The VM runner's own tests (VM boots that must fail as they should).
stage_runner() {
	suite vm-runner bash selftests/vm/selftest.sh
}

stage_host_kbuild() {
	stage_host
	stage_runner
	stage_kbuild
	matrix_roots
}

# matrix_roots: make the matrix's roots that are not cached yet (the
# rows wait for them).
matrix_roots() {
	[ -n "$SNAA_MATRIX" ] || return 0
	t0=$(date +%s)
	# shellcheck disable=SC2086 # a list of suites
	if sh scripts/roots.sh $SNAA_MATRIX >"$log/roots.out" 2>&1; then
		sed 's/^/# /' "$log/roots.out"
	else
		sed 's/^/# /' "$log/roots.out" | tail -n 20
		not_ok "matrix: scripts/roots.sh $SNAA_MATRIX failed"
	fi
	stage_time roots $(($(date +%s) - t0))
}

# matrix_row SUITE: build snaa in SUITE's root, then its VM tests.
matrix_row() {
	suite "build-$1" sh scripts/matrix.sh --build "$1"
	[ "$rc" = 0 ] || return 0
	# shellcheck disable=SC2086 # a list of test names
	suite "vm-$1" env SNAA_TIME_SCALE="$(scaled $VM_SCALE)" \
		SNAA_NAAICE_QUICK=$matrix_quick SNAA_RC_QUICK=$matrix_quick \
		sh scripts/matrix.sh --test "$1" $SNAA_MATRIX_TESTS
}

stage_matrix() {
	for m in $SNAA_MATRIX; do
		matrix_row "$m"
	done
}

matrix_jobs() {
	for m in $SNAA_MATRIX; do
		printf 'matrix-%s ' "$m"
	done
}

# VM_SCALE: the time limits' factor for the VM stages (2 when they share
# the machine with another VM).
VM_SCALE=1

# vm_group N: the Nth of the two halves of $SNAA_VM_TESTS, in their
# order: each test, largest budget (run_tests.sh's) first, joins the
# half with the smaller sum of budgets so far, so that the halves take
# about the same time.
vm_group() {
	# shellcheck disable=SC2086 # a list of test names
	SNAA_TIME_SCALE=1 sh selftests/snaa/run_tests.sh --budgets \
		$SNAA_VM_TESTS | awk -v n="$1" '
		{ name[NR] = $1; b[NR] = $2 + 0 }
		END {
			for (k = 1; k <= NR; k++) {	# the largest left
				m = 0
				for (i = 1; i <= NR; i++)
					if (!(i in g) && (!m || b[i] > b[m]))
						m = i
				g[m] = w[1] <= w[2] ? 1 : 2
				w[g[m]] += b[m]
			}
			for (i = 1; i <= NR; i++)
				if (g[i] == n)
					printf "%s ", name[i]
		}'
}

# vm_suite N: half N of the default kernel's suite, a VM boot of its own
# (the modules are built by the first caller; the other lane waits).
vm_suite() {
	if mkdir "$log/vm-mod" 2>/dev/null; then
		if modules_for "$SNAA_KVER"; then
			: >"$log/vm-mod.ok"
		else
			not_ok "vm: building the modules for $SNAA_KVER failed"
			: >"$log/vm-mod.failed"
		fi
	fi
	while [ ! -e "$log/vm-mod.ok" ] && [ ! -e "$log/vm-mod.failed" ]; do
		sleep 5
	done
	[ -e "$log/vm-mod.ok" ] || return 0
	tests=$(vm_group "$1")
	[ -n "$tests" ] || return 0
	# shellcheck disable=SC2086 # a list of test names
	suite "vm-$SNAA_KVER-$1" env SNAA_TIME_SCALE="$(scaled $VM_SCALE)" \
		selftests/vm/run --timeout "$(vm_timeout $tests)" -- \
		sh selftests/snaa/run_tests.sh $tests
}

# ktest.sh through the kernel's kselftest framework, as a kernel
# developer runs it in-tree (the collection installed whole).
vm_kselftest() {
	[ -e "$log/vm-mod.ok" ] || return 0
	if ks=$(sh scripts/kselftest.sh 2>"$log/kselftest.err"); then
		suite "vm-kselftest" env SNAA_TIME_SCALE="$(scaled $VM_SCALE)" \
			selftests/vm/run --timeout 600 -- \
			env SNAA_TOP="$PWD" "$ks/run_kselftest.sh" -t snaa:ktest.sh
	else
		cat "$log/kselftest.err"
		not_ok "kselftest: scripts/kselftest.sh failed"
	fi
}

stage_vm() {
	vm_suite 1
	vm_suite 2
	vm_kselftest
}

stage_compat() {
	if [ -n "${no_compat:-}" ]; then
		not_ok "compat: $no_compat"
	fi
	[ -n "$SNAA_COMPAT_TESTS" ] || return 0
	for k in $SNAA_COMPAT_KVERS; do
		if ! modules_for "$k"; then
			not_ok "compat: building the modules for $k failed"
			continue
		fi
		# shellcheck disable=SC2086 # a list of test names
		suite "vm-$k" env SNAA_TIME_SCALE="$(scaled $VM_SCALE)" \
			SNAA_RC_QUICK="${SNAA_RC_QUICK:-$compat_rc_quick}" \
			selftests/vm/run --kernel "$k" \
			--timeout "$(vm_timeout $SNAA_COMPAT_TESTS)" -- \
			sh selftests/snaa/run_tests.sh $SNAA_COMPAT_TESTS
	done
}

# The debug kernel: built the first time on a machine (a quarter of an
# hour; with "all" beside the other stages, SCHED_IDLE and with idle I/O
# priority: a VM task that wakes up preempts the build at once), then
# reused from the cache; then snaa.ko is built for it.  Leaves its KVER
# in $log/dk.kver, or $log/dk.failed.
debug_kernel() {
	t0=$(date +%s)
	if [ "$what" = all ] || [ "$what" = full ]; then
		dk=$(chrt --idle 0 ionice -c 3 sh scripts/debug-kernel.sh \
			2>"$log/dk.err")
	else
		dk=$(sh scripts/debug-kernel.sh 2>"$log/dk.err")
	fi
	dk_rc=$?
	sed 's/^/# /' "$log/dk.err"
	echo "# debug kernel: ready after $(($(date +%s) - t0))s"
	if [ "$dk_rc" != 0 ] || [ -z "$dk" ]; then
		not_ok "debug: scripts/debug-kernel.sh failed"
		: >"$log/dk.failed"
	elif ! modules_for "$dk"; then
		not_ok "debug: building the modules for $dk failed"
		: >"$log/dk.failed"
	else
		echo "$dk" >"$log/dk.kver"
	fi
	stage_time debug-kernel $(($(date +%s) - t0))
}

# debug_kver: wait for debug_kernel (in the other lane, maybe) and print
# its KVER; false if it failed.
debug_kver() {
	while [ ! -e "$log/dk.kver" ] && [ ! -e "$log/dk.failed" ]; do
		sleep 5
	done
	cat "$log/dk.kver" 2>/dev/null
}

# debug_suite N: the Nth group of $SNAA_DEBUG_TESTS ("|" separates the
# groups: each is a VM boot of its own, so that the two VM lanes can
# share them) on the debug kernel.  KASAN, lockdep and kmemleak make it
# about three times slower than the distribution's kernel.
debug_suite() {
	dk=$(debug_kver) || return 0	# debug_kernel said why
	tests=$(printf '%s\n' "$SNAA_DEBUG_TESTS" | awk -F'|' -v n="$1" \
		'{ print $n }')
	# shellcheck disable=SC2086 # a list of test names
	suite "vm-debug-$1" env SNAA_TIME_SCALE="$(scaled $((3 * VM_SCALE)))" \
		SNAA_TEARDOWN_REPEAT=1 SNAA_LIMITS_AH=4096 \
		SNAA_ABUSE_SEEDS="${SNAA_ABUSE_SEEDS:-$debug_seeds}" \
		SNAA_TEARDOWN_QPS=2000 SNAA_RC_QUICK=1 \
		SNAA_VERBS_QUICK="$debug_verbs_quick" \
		SNAA_FUZZ_ROUNDS="${SNAA_FUZZ_ROUNDS:-$debug_fuzz_rounds}" \
		selftests/vm/run --kernel "$dk" \
		--timeout "$(vm_timeout $tests)" -- \
		sh selftests/snaa/run_tests.sh $tests
}

# The debug groups' numbers: 1 .. the number of "|"-separated groups.
debug_groups() {
	printf '%s\n' "$SNAA_DEBUG_TESTS" | awk -F'|' '{
		for (i = 1; i <= NF; i++) print i }'
}

stage_debug() {
	debug_kernel
	for g in $(debug_groups); do
		debug_suite "$g"
	done
}

stage_soak() {
	debug_kernel
	dk=$(debug_kver) || return 0
	sk=${SNAA_SOAK_SECONDS:-1800}
	suite "vm-soak" env SNAA_TIME_SCALE="$(scaled 3)" \
		SNAA_SOAK_SECONDS="$sk" \
		selftests/vm/run --kernel "$dk" --timeout $((sk + 900)) -- \
		sh selftests/snaa/soak.sh
}

# The VM jobs of "all" and "full" besides the default kernel's suite:
# the compat suite and the debug groups.  Each of the two VM lanes (the
# default kernel's, in the foreground; the debug kernel's, which builds
# it first) takes the next job no lane has taken, in its own order of
# preference, until none is left.
take_jobs() {
	for job in "$@"; do
		mkdir "$log/job.$job" 2>/dev/null || continue
		case $job in
		vm-2) run_stage vm-2 vm_suite 2 ;;
		compat) run_stage compat stage_compat ;;
		matrix-*) run_stage "$job" matrix_row "${job#matrix-}" ;;
		debug-*) run_stage "$job" debug_suite "${job#debug-}" ;;
		esac
	done
}

# debug_jobs [-r]: the debug groups' job names, in the order lane B takes
# them (-r: reversed, lane A's order).
debug_jobs() {
	for g in $(debug_groups | sort -n ${1:+"$1"}); do
		printf 'debug-%s ' "$g"
	done
}

lane_debug() {
	debug_kernel
	# shellcheck disable=SC2046 # a list of job names
	take_jobs $(debug_jobs) vm-2 compat $(matrix_jobs)
}

# run_stage NAME FUNCTION [ARG]: a stage, timed.
run_stage() {
	echo "# ==== stage $1"
	rs_name=$1
	rs_t0=$(date +%s)
	shift
	"$@"
	stage_time "$rs_name" $(($(date +%s) - rs_t0))
}

case $what in
host) run_stage host stage_host ;;
kbuild) run_stage kbuild stage_kbuild ;;
vm) calibrate; run_stage runner stage_runner; run_stage vm stage_vm ;;
compat) calibrate; run_stage compat stage_compat ;;
matrix) calibrate; matrix_roots; run_stage matrix stage_matrix ;;
debug) calibrate; run_stage debug stage_debug ;;
soak) calibrate; run_stage soak stage_soak ;;
all | full)
	calibrate
	VM_SCALE=2
	bg debug-lane lane_debug
	bg host-kbuild stage_host_kbuild
	mkdir "$log/job.vm-1"
	run_stage vm-1 vm_suite 1
	run_stage kselftest vm_kselftest
	# shellcheck disable=SC2046 # a list of job names
	take_jobs vm-2 compat $(matrix_jobs) $(debug_jobs -r)
	bg_collect
	;;
esac

echo "# ==== stage times (the background ones overlap the others)"
while read -r st_name st_secs; do
	printf '#   %-12s %5d s\n' "$st_name" "$st_secs"
done <"$log/times"
printf '#   %-12s %5d s\n' total $(($(date +%s) - t_start))
if [ $((passed + failed)) = 0 ]; then
	not_ok "no test ran"
fi
echo "# $todo todo/skipped (known gaps and tests that cannot run here)"
if [ -s "$log/failures" ]; then
	echo "# ==== what failed (each suite's output above says more)"
	head -n 40 "$log/failures" | sed 's/^/#   /'
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
