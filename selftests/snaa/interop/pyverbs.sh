#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's own test suite (pyverbs' tests/, python3-pyverbs) as a peer:
# the same suite on rdma_rxe and on snaa in one boot, compared test by
# test.  Runs as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 1800 -- sh selftests/snaa/run_tests.sh interop/pyverbs.sh
#
#   init namespace                         ns snaa-b
#  +---------------------------------+   +----------------------+
#  | rxe0, later snaa0 - veth0 ======|===|= veth1 198.18.0.2    |
#  |   198.18.0.1/24, 2001:2::1/64   |   +----------------------+
#  +---------------------------------+
#
# The suite runs every traffic test between two sets of resources on one
# device (loopback), so one device at a time is enough: first rdma_rxe
# (rxe0) on veth0, then rxe0 is deleted and snaa0 takes its place on the
# same netdev, with the same addresses, so that each run sees exactly one
# RDMA device (test_device.py iterates over all of them).  Both runs use
# the RoCE v2 GID of 198.18.0.1 (--gid).
#
# The suite (selftests/snaa/interop/pyverbs_suite.sh: a copy of
# /usr/share/doc/rdma-core/tests outside the tree) is driven by a small
# unittest runner (below) that records every test's outcome, ok / skip /
# fail / error, with its reason, bounds each test (SNAA_PYVERBS_TEST_TIMEOUT
# seconds, default 300: SIGALRM, an error "timeout") and each device's run
# (SNAA_PYVERBS_RUN_TIMEOUT, default 1200), and resumes after the test
# that killed the Python process (a crash in pyverbs, the provider or a
# hang cut by the run timeout is reported for that test).  Each test's
# start is written to the kernel log ("pyverbs: DEV: start TEST"), so a
# kernel warning in dmesg names its test.
#
# KTAP: one line per device (the suite ran to the end, some test passed,
# no kernel warning in dmesg meanwhile), one "not ok" per test that fails
# or errors on snaa (on rdma_rxe, the reference, failures are listed, not
# counted), and, for every test that passes on rdma_rxe but is skipped on
# snaa (a feature snaa reports as unsupported: EOPNOTSUPP, a missing
# capability), an "ok ... # TODO" line with the skip reason: the known
# gap, which shrinks as features land.  The target (issue 10) is no such
# line.  A side-by-side summary follows as comments.
#
# Environment (selftests/vm/run passes SNAA_* into the VM):
# SNAA_PYVERBS_TESTS=DIR a ready copy of the suite (else
# selftests/snaa/interop/pyverbs_suite.sh); SNAA_PYVERBS_PYTHON (python3);
# SNAA_PYVERBS_FILTER="PATTERN ..." only the
# tests whose id matches one of the fnmatch patterns (e.g. "*test_qp*");
# SNAA_PYVERBS_LIST=1 lists every test's outcome on both devices.
#
# The suite draws attributes at random (QP caps, create_qp_ex's comp_mask:
# with IBV_QP_INIT_ATTR_CREATE_FLAGS set, ibv_create_qp_ex needs the
# provider's create_qp_ex, without it libibverbs falls back to
# ibv_create_qp), so whether a test skips can vary from run to run.  The
# runner seeds Python's random module before each test from
# SNAA_PYVERBS_SEED (default "snaa") and the test's id: the same draws on
# both devices and in every run.  SNAA_PYVERBS_SEED=random: unseeded.
#
# Exit status: 0 iff every KTAP test passed, 1 otherwise, 4 (skip) if
# python3-pyverbs is missing or the setup is impossible.
#
# Features: verbs, interop
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

PV_TEST_TIMEOUT=${SNAA_PYVERBS_TEST_TIMEOUT:-300}
PV_RUN_TIMEOUT=${SNAA_PYVERBS_RUN_TIMEOUT:-1200}
PV_PYTHON=${SNAA_PYVERBS_PYTHON:-python3}
PV_ADDR=198.18.0.1
# A Python process that dies this many times ends the device's run.
PV_MAX_CRASHES=5

uc_vm_only
if [ -n "${SNAA_PYVERBS_TESTS:-}" ]; then
	pv_dir=$SNAA_PYVERBS_TESTS
else
	pv_dir=$(sh "$SNAA_SCRIPT_DIR/pyverbs_suite.sh") ||
		snaa_skip "rdma-core's test suite is not available (python3-pyverbs; make deps)"
fi
[ -f "$pv_dir/run_tests.py" ] || snaa_skip "$pv_dir/run_tests.py missing"
"$PV_PYTHON" -c 'import pyverbs.device' 2>/dev/null ||
	snaa_skip "$PV_PYTHON cannot import pyverbs (python3-pyverbs)"
pv_ver=$(dpkg-query -W -f='${Version}' python3-pyverbs 2>/dev/null)

pv_tmp=$(mktemp -d) || snaa_skip "mktemp failed"

# ---- the runner ----------------------------------------------------------
# runner.py TESTDIR RESULTS TIMEOUT AFTER LABEL [run_tests.py options...]
# Runs the suite as run_tests.py does, appending to RESULTS one line per
# event, tab-separated:
#   start  ID                      a test starts
#   R      ID  STATUS  SECS  REASON  its outcome: ok skip fail error
#   D      ID  LINE                 a traceback line of a failure/error
#   end                             the whole suite ran
# AFTER: resume after the test of that id (a previous run died in it).
cat >"$pv_tmp/runner.py" <<'EOF'
import os, random, signal, sys, time, traceback, unittest
from importlib.machinery import SourceFileLoader

testdir, results, timeout, after, label = sys.argv[1:6]
timeout = int(timeout)
seed = os.environ.get('SNAA_PYVERBS_SEED', 'snaa')
sys.argv = [os.path.join(testdir, 'run_tests.py')] + sys.argv[6:]
sys.path.insert(0, testdir)
from args_parser import parser
parser.parse_args()
out = open(results, 'a', buffering=1)

def clean(s):
    return ' '.join(str(s).split())

def emit(*fields):
    out.write('\t'.join(clean(f) for f in fields) + '\n')

def kmsg(s):
    try:
        with open('/dev/kmsg', 'w') as f:
            f.write(s + '\n')
    except OSError:
        pass

class Timeout(Exception):
    pass

def on_alarm(signum, frame):
    # One more alarm for tearDown, should it hang as well.
    signal.alarm(60)
    raise Timeout('per-test timeout of %d s' % timeout)

class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.t0 = time.monotonic()
        self.done = set()

    def startTest(self, test):
        super().startTest(test)
        emit('start', test.id())
        kmsg('pyverbs: %s: start %s' % (label, test.id()))
        if seed != 'random':
            random.seed('%s %s' % (seed, test.id()))
        self.t0 = time.monotonic()
        signal.alarm(timeout)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def record(self, test, status, reason='', err=None):
        tid = test.id()
        if tid in self.done:
            return
        self.done.add(tid)
        emit('R', tid, status, '%.1f' % (time.monotonic() - self.t0), reason)
        if err is not None:
            for chunk in traceback.format_exception(*err)[-12:]:
                for line in chunk.rstrip('\n').split('\n'):
                    emit('D', tid, line)

    def why(self, err):
        return traceback.format_exception_only(err[0], err[1])[-1].strip()

    def addSuccess(self, test):
        super().addSuccess(test)
        self.record(test, 'ok')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.record(test, 'skip', reason)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.record(test, 'fail', self.why(err), err)

    def addError(self, test, err):
        super().addError(test, err)
        self.record(test, 'error', self.why(err), err)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.record(test, 'ok', 'expected failure')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.record(test, 'fail', 'unexpected success')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            st = 'fail' if issubclass(err[0], test.failureException) else 'error'
            self.record(test, st, '%s: %s' % (subtest.id(), self.why(err)), err)

def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t

signal.signal(signal.SIGALRM, on_alarm)
tests_mod = SourceFileLoader('tests', os.path.join(testdir, '__init__.py')).load_module()
loader = unittest.TestLoader()
pats = os.environ.get('SNAA_PYVERBS_FILTER', '').split()
if pats:
    loader.testNamePatterns = pats
todo = list(flatten(loader.loadTestsFromModule(tests_mod)))
if after:
    ids = [t.id() for t in todo]
    if after in ids:
        todo = todo[ids.index(after) + 1:]
res = Result()
unittest.TestSuite(todo).run(res)
emit('end')
EOF

# pv_run DEV LABEL: run the suite on DEV into $pv_tmp/LABEL.res (the
# runner's events plus, for a test the Python process died in, an R line
# with status "error"), its output into $pv_tmp/LABEL.log; sets pv_status
# to "complete", or why the run ended early.
pv_run() {
	pr_dev=$1
	pr_res=$pv_tmp/$2.res
	pr_log=$pv_tmp/$2.log
	: >"$pr_res"
	: >"$pr_log"
	pr_gid=$(snaa_gid_index "$pr_dev" "$PV_ADDR") ||
		{ pv_status="no RoCE v2 GID for $PV_ADDR on $pr_dev"; return; }
	pr_after=
	pr_crashes=0
	pr_start=$(date +%s)
	while :; do
		pr_left=$((PV_RUN_TIMEOUT - ($(date +%s) - pr_start)))
		if [ "$pr_left" -le 0 ]; then
			pv_status="run timeout (${PV_RUN_TIMEOUT}s) before the end of the suite"
			return
		fi
		(cd "$pv_dir" && timeout -k 10 "$pr_left" "$PV_PYTHON" \
			"$pv_tmp/runner.py" "$pv_dir" "$pr_res" \
			"$PV_TEST_TIMEOUT" "$pr_after" "$2" \
			--dev "$pr_dev" --gid "$pr_gid" -v) >>"$pr_log" 2>&1
		pr_rc=$?
		if grep -q '^end$' "$pr_res"; then
			pv_status=complete
			return
		fi
		# The test that was running when the process died: the last
		# started one, if it has no result.
		pr_last=$(awk -F'\t' '$1 == "start" { s = $2 }
			$1 == "R" && $2 == s { s = "" } END { print s }' "$pr_res")
		case $pr_rc in
		124|137) pr_why="killed by the run timeout (${PV_RUN_TIMEOUT}s): hung" ;;
		*) pr_why="the Python process died (exit status $pr_rc)" ;;
		esac
		if [ -z "$pr_last" ]; then
			pv_status="runner failed outside a test ($pr_why)"
			return
		fi
		printf 'R\t%s\terror\t-\t%s\n' "$pr_last" "$pr_why" >>"$pr_res"
		echo "# $2: $pr_last: $pr_why; last output:"
		tail -n 15 "$pr_log" | sed 's/^/#   /'
		case $pr_rc in
		124|137)
			pv_status="run timeout in $pr_last"
			return
			;;
		esac
		pr_crashes=$((pr_crashes + 1))
		if [ "$pr_crashes" -ge "$PV_MAX_CRASHES" ]; then
			pv_status="the Python process died $pr_crashes times"
			return
		fi
		pr_after=$pr_last
	done
}

# pv_results LABEL: "ID STATUS REASON" (tab-separated) per test, sorted.
pv_results() {
	awk -F'\t' -v OFS='\t' '$1 == "R" { print $2, $3, $5 }' \
		"$pv_tmp/$1.res" | sort -t "$(printf '\t')" -k1,1
}

# pv_count LABEL STATUS
pv_count() {
	awk -F'\t' -v s="$2" '$1 == "R" && $3 == s { n++ } END { print n + 0 }' \
		"$pv_tmp/$1.res"
}

# pv_details LABEL ID: the traceback of ID's failure, as comments.
pv_details() {
	awk -F'\t' -v id="$2" '$1 == "D" && $2 == id { print "#     " $3 }' \
		"$pv_tmp/$1.res"
}

# pv_dmesg_check MARK: the kernel's warnings logged after the line MARK,
# each after the "pyverbs: DEV: start TEST" line of the test that ran.
pv_dmesg_check() {
	dmesg | awk -v m="$1" '
		index($0, m) { on = 1 }
		!on { next }
		/pyverbs: .*: start / { last = $0; next }
		/BUG:|WARNING:|Oops|Call Trace|KASAN|UBSAN|general protection|soft lockup|hung_task|blocked for more than/ {
			if (last != shown) {
				print "during: " last
				shown = last
			}
			n = 13
		}
		n > 0 { print; n-- }' | head -n 80
}

pv_cleanup() {
	rdma link delete rxe0 2>/dev/null
	rdma link delete snaa0 2>/dev/null
	ip link del veth0 2>/dev/null
	ip netns del snaa-b 2>/dev/null
}

ktap_todo() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n - $1 # TODO $2"
}

# pv_device KIND DEV: create DEV (rdma link type KIND) on veth0, run the
# suite on it, delete it.  Writes $pv_tmp/DEV.status (pv_run's
# pv_status), DEV.secs and DEV.dmesg (pv_dmesg_check).
pv_device() {
	pd_mark="pyverbs: $2: begin $(date +%s)"
	echo "$pd_mark" >/dev/kmsg 2>/dev/null
	pd_t0=$(date +%s)
	if ! rdma link add "$2" type "$1" netdev veth0; then
		pv_status="rdma link add $2 type $1 failed"
	elif ! wait_for 10 uc_has_gid "$2" "::ffff:$PV_ADDR"; then
		pv_status="no GID ::ffff:$PV_ADDR on $2"
	else
		echo "# ==== $2: $PV_PYTHON run_tests.py --dev $2 (per test ${PV_TEST_TIMEOUT}s, run ${PV_RUN_TIMEOUT}s)"
		pv_run "$2" "$2"
		echo "# ==== $2: $pv_status, $(($(date +%s) - pd_t0))s"
	fi
	echo "$pv_status" >"$pv_tmp/$2.status"
	echo "$(($(date +%s) - pd_t0))" >"$pv_tmp/$2.secs"
	pv_dmesg_check "$pd_mark" >"$pv_tmp/$2.dmesg"
	rdma link delete "$2" 2>/dev/null
}

# ---- setup and the two runs -------------------------------------------------

trap 'pv_cleanup; exit 130' INT TERM
if ! { ip netns add snaa-b &&
       ip link add veth0 type veth peer name veth1 &&
       ip addr add "$PV_ADDR/24" dev veth0 &&
       ip addr add 2001:2::1/64 dev veth0 nodad &&
       ip link set veth0 up &&
       uc_ns_end snaa-b veth1 198.18.0.2 2001:2::2; }; then
	pv_cleanup
	snaa_skip "veth setup failed"
fi
ktap_header pyverbs
echo "# rdma-core's test suite: $pv_dir (python3-pyverbs $pv_ver)"

for d in rxe0 snaa0; do
	: >"$pv_tmp/$d.res"
	: >"$pv_tmp/$d.log"
	: >"$pv_tmp/$d.dmesg"
	echo 0 >"$pv_tmp/$d.secs"
done
if modprobe rdma_rxe; then
	# Only the installed providers: the snaa provider stays out of it.
	(unset RDMAV_DRIVERS; pv_device rxe rxe0)
	rmmod rdma_rxe 2>/dev/null
else
	echo "modprobe rdma_rxe failed" >"$pv_tmp/rxe0.status"
fi
snaa_install_module
snaa_use_build_provider
if modprobe snaa; then
	pv_device snaa snaa0
else
	echo "modprobe snaa failed" >"$pv_tmp/snaa0.status"
fi
pv_cleanup

# ---- verdicts ----------------------------------------------------------------

pv_line() {
	echo "$(pv_count "$1" ok) ok, $(pv_count "$1" skip) skipped, $(pv_count "$1" fail) failed, $(pv_count "$1" error) errors"
}

pv_results rxe0 >"$pv_tmp/rxe0.tsv"
pv_results snaa0 >"$pv_tmp/snaa0.tsv"
# ID  RXE-STATUS  SNAA-STATUS  SNAA-REASON  RXE-REASON ("-": not run)
awk -F'\t' -v OFS='\t' '
	NR == FNR { rs[$1] = $2; rr[$1] = $3; ids[$1] = 1; next }
	{ ss[$1] = $2; sr[$1] = $3; ids[$1] = 1 }
	END {
		for (i in ids)
			print i, (i in rs ? rs[i] : "-"), (i in ss ? ss[i] : "-"),
				(i in sr ? sr[i] : ""), (i in rr ? rr[i] : "")
	}' "$pv_tmp/rxe0.tsv" "$pv_tmp/snaa0.tsv" | sort >"$pv_tmp/cmp.tsv"

for d in rxe0 snaa0; do
	st=$(cat "$pv_tmp/$d.status")
	name="$d ($( [ $d = rxe0 ] && echo rdma_rxe || echo snaa)): the suite runs to the end"
	nf=$(($(pv_count $d fail) + $(pv_count $d error)))
	dm=$(cat "$pv_tmp/$d.dmesg")
	if [ "$st" != complete ]; then
		ktap_fail "$name" "$st" "$(pv_line $d)"
	elif [ "$(pv_count $d ok)" = 0 ]; then
		ktap_fail "$name" "no test passed: $(pv_line $d)" "$(tail -n 20 "$pv_tmp/$d.log")"
	elif [ -n "$dm" ]; then
		ktap_fail "$name without a kernel warning" "$(pv_line $d)" "$dm"
	else
		[ $d = rxe0 ] && [ "$nf" != 0 ] &&
			echo "# rdma_rxe fails or errors $nf test(s): the reference's own problems, listed below, not counted"
		ktap_ok "$name: $(pv_line $d)"
	fi
done

# One "not ok" per test that fails or errors on snaa (whatever rxe does);
# then, for every test that rxe passes, an "ok # TODO" if snaa skips it, and
# one "not ok" for all of those the snaa run did not reach.
tab=$(printf '\t')
while IFS=$tab read -r id rs ss sreason _; do
	case $ss in
	fail|error)
		det=$(pv_details snaa0 "$id" | sed 's/^# //')
		ktap_fail "${id#tests.}: $ss on snaa (rdma_rxe: $rs)" \
			"$sreason" ${det:+"$det"}
		;;
	esac
done <"$pv_tmp/cmp.tsv"
gaps=0
while IFS=$tab read -r id rs ss sreason _; do
	[ "$rs/$ss" = ok/skip ] || continue
	gaps=$((gaps + 1))
	ktap_todo "${id#tests.}" "passes on rdma_rxe, skipped on snaa: $(printf '%s' "$sreason" | tr '#' ' ')"
done <"$pv_tmp/cmp.tsv"
notrun=$(awk -F'\t' '$2 == "ok" && $3 == "-" { sub(/^tests\./, "", $1); print $1 }' \
	"$pv_tmp/cmp.tsv")
if [ -n "$notrun" ]; then
	ktap_fail "every test that passes on rdma_rxe runs on snaa" \
		"the snaa run ended early ($(cat "$pv_tmp/snaa0.status")); not run:" \
		"$notrun"
	gaps=$((gaps + $(printf '%s\n' "$notrun" | wc -l)))
fi

# ---- the side-by-side summary --------------------------------------------------

echo "# ==== pyverbs summary (rdma-core $pv_ver)"
printf '# %-10s %8s %8s\n' "" rxe0 snaa0
for s in ok skip fail error; do
	printf '# %-10s %8s %8s\n' "$s" "$(pv_count rxe0 $s)" "$(pv_count snaa0 $s)"
done
printf '# %-10s %7ss %7ss\n' time "$(cat "$pv_tmp/rxe0.secs")" "$(cat "$pv_tmp/snaa0.secs")"
echo "# passes on rdma_rxe, not on snaa: $gaps skipped or not run, $(awk -F'\t' '$2 == "ok" && ($3 == "fail" || $3 == "error")' "$pv_tmp/cmp.tsv" | wc -l) failed or errored"
awk -F'\t' '$2 == "ok" && $3 != "ok" {
	sub(/^tests\./, "", $1); printf "#   %s: %s: %s\n", $1, $3, $4 }' "$pv_tmp/cmp.tsv"
echo "# not ok on rdma_rxe (reference's own failures):"
awk -F'\t' '$2 == "fail" || $2 == "error" {
	sub(/^tests\./, "", $1); printf "#   %s: rxe %s: %s (snaa: %s)\n", $1, $2, $5, $3 }' "$pv_tmp/cmp.tsv"
echo "# passes on snaa, not on rdma_rxe:"
awk -F'\t' '$3 == "ok" && $2 != "ok" {
	sub(/^tests\./, "", $1); printf "#   %s: rxe %s: %s\n", $1, $2, $5 }' "$pv_tmp/cmp.tsv"
echo "# skipped on both (tests: snaa's reason):"
awk -F'\t' '$2 == "skip" && $3 == "skip" { print $4 }' "$pv_tmp/cmp.tsv" |
	sort | uniq -c | sort -rn | sed 's/^ */#   /'
if [ "${SNAA_PYVERBS_LIST:-0}" = 1 ]; then
	echo "# every test: rxe0 snaa0 (snaa's reason | rxe's reason):"
	awk -F'\t' '{ sub(/^tests\./, "", $1)
		printf "#   %-5s %-5s %s (%s | %s)\n", $2, $3, $1, $4, $5 }' "$pv_tmp/cmp.tsv"
fi
rm -rf "$pv_tmp"
ktap_finish
