#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shared helpers for the snaa VM tests: KTAP output, assertions, module
# and provider setup from the build tree.  Sourced by the test scripts,
# which run as root inside the test VM (selftests/vm/run), never on the
# host.

SNAA_TOP=${SNAA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
# Where the test scripts are: the repository's selftests/snaa, or a
# kselftest install directory (scripts/kselftest.sh) with the programs
# the kernel's lib.mk built next to them.
SNAA_TEST_DIR=$(cd "$(dirname "$0")" && pwd)
# The module built for the running kernel (scripts/modbuild.sh): in place
# for the default kernel, under build/kver/KVER/ for another one.
SNAA_KO=$SNAA_TOP/$(sh "$SNAA_TOP/scripts/modbuild.sh" "$(uname -r)")/snaa.ko
SNAA_PROVIDER=$SNAA_TOP/userspace/provider/libsnaa

ktap_n=0
ktap_failed=0

# snaa_secs SECONDS: SECONDS scaled by the machine's speed, as a whole
# number: $SNAA_TIME_SCALE (a decimal >= 1, set by scripts/check.sh from
# selftests/vm/calibrate.sh; 1 if unset) times SECONDS, rounded up.
# Every time limit of a test goes through it, so that a slow machine
# gets more time rather than failures.
snaa_secs() {
	awk -v s="$1" -v f="${SNAA_TIME_SCALE:-1}" 'BEGIN {
		if (f !~ /^[0-9]+(\.[0-9]+)?$/ || f < 1)
			f = 1
		t = s * f
		print (t == int(t)) ? t : int(t) + 1
	}'
}

# snaa_ack_timeout BASE: an RC local ACK timeout of BASE (4.096 us <<
# BASE) on a machine of normal speed, one step more per doubling of
# $SNAA_TIME_SCALE, as verbs_util's vu_ack_timeout().
snaa_ack_timeout() {
	awk -v t="$1" -v f="${SNAA_TIME_SCALE:-1}" 'BEGIN {
		for (s = 1; s < f + 0 && t < 31; s *= 2)
			t++
		print t
	}'
}

ktap_header() {
	echo "KTAP version 1"
	echo "# suite: $1"
}

# ktap_ok NAME / ktap_fail NAME [DIAG...]
ktap_ok() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n - $1"
}

# (Variables of helpers are prefixed: sh has no locals, and a caller's
# "name" must survive a ktap_fail.)
ktap_fail() {
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	kf_name=$1
	shift
	for kf_l in "$@"; do
		printf '%s\n' "$kf_l" | sed 's/^/# /'
	done
	echo "not ok $ktap_n - $kf_name"
}

ktap_finish() {
	echo "1..$ktap_n"
	echo "# $((ktap_n - ktap_failed)) passed, $ktap_failed failed"
	[ "$ktap_failed" = 0 ] && exit 0
	exit 1
}

# snaa_skip REASON: the environment cannot run the test at all: an empty
# KTAP plan with the reason, exit status 4 (kselftest's skip).
snaa_skip() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	exit 4
}

# snaa_build VAR NAME: set VAR to a usable binary of the selftests/snaa
# program NAME (see its Makefile).  If VAR is set already, it must name an
# executable.  In a kselftest install directory, the NAME installed there
# is used.  Else selftests/snaa/NAME is used if make says it is up to
# date ("make -C selftests/snaa" builds it), else NAME is built with that
# Makefile into a temporary directory (the VM's /tmp; nothing is written
# into the tree).  Skips the test if the program cannot be built.
snaa_build() {
	eval "sb_bin=\${$1:-}"
	if [ -n "$sb_bin" ]; then
		[ -x "$sb_bin" ] || snaa_skip "$1=$sb_bin is not executable"
		return 0
	fi
	sb_dir=$SNAA_TOP/selftests/snaa
	[ -f "$sb_dir/lib.sh" ] ||
		snaa_skip "SNAA_TOP=$SNAA_TOP is not the snaa repository; set it"
	# Installed by kselftest: use the programs installed with us.
	if [ "$SNAA_TEST_DIR" != "$sb_dir" ] && [ -x "$SNAA_TEST_DIR/$2" ]; then
		eval "$1=\$SNAA_TEST_DIR/\$2"
		return 0
	fi
	if make -s -q -C "$sb_dir" "$2" 2>/dev/null; then
		sb_bin=$sb_dir/$2
	else
		sb_out=$(mktemp -d) || snaa_skip "mktemp failed"
		sb_bin=$sb_out/$2
		echo "# building $sb_bin"
		make -s -C "$sb_dir" OUTPUT="$sb_out" "$sb_bin" >&2 ||
			snaa_skip "cannot build $2 (libibverbs-dev installed?)"
	fi
	eval "$1=\$sb_bin"
}

# snaa_run TIMEOUT NAME PROG ARGS...: one run of the test program PROG,
# which prints a KTAP document of its own, killed after TIMEOUT seconds,
# between "# ==== PROGNAME NAME: ..." lines.  Adds a line to
# snaa_run_summary and counts the run in snaa_runs_failed unless it exited
# with 0 (4, kselftest's skip, counts too: a skipped run is no pass).
snaa_runs_failed=0
snaa_run_summary=
snaa_run() {
	sr_t=$(snaa_secs "$1")
	sr_name=$2
	sr_prog=$3
	shift 3
	echo "# ==== ${sr_prog##*/} $sr_name: $*"
	sr_start=$(date +%s)
	timeout -k 10 "$sr_t" "$sr_prog" "$@"
	sr_rc=$?
	sr_secs=$(($(date +%s) - sr_start))
	case $sr_rc in
	0) sr_res=ok ;;
	124|137) sr_res="TIMEOUT after ${sr_t}s" ;;
	4) sr_res="SKIP (exit 4)" ;;
	*) sr_res="FAILED (exit $sr_rc)" ;;
	esac
	[ "$sr_rc" = 0 ] || snaa_runs_failed=$((snaa_runs_failed + 1))
	echo "# ==== ${sr_prog##*/} $sr_name: $sr_res, ${sr_secs}s"
	snaa_run_summary="$snaa_run_summary
# $sr_name: $sr_res, ${sr_secs}s"
}

# check NAME CMD...: one test that passes iff CMD succeeds.
check() {
	ck_name=$1
	shift
	if ck_out=$("$@" 2>&1); then
		ktap_ok "$ck_name"
	else
		ktap_fail "$ck_name" "command failed: $*" "$ck_out"
	fi
}

# check_fails NAME CMD...: passes iff CMD fails.
check_fails() {
	ck_name=$1
	shift
	if ck_out=$("$@" 2>&1); then
		ktap_fail "$ck_name" "command unexpectedly succeeded: $*" \
			"$ck_out"
	else
		ktap_ok "$ck_name"
	fi
}

# check_eq NAME GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "got:  '$2'" "want: '$3'"
	fi
}

# check_match NAME TEXT REGEX (grep -E, one line of TEXT must match)
check_match() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "no line matches /$3/ in:" "$2"
	fi
}

check_nomatch() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_fail "$1" "a line matches /$3/ in:" "$2"
	else
		ktap_ok "$1"
	fi
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
# (Its variables have a prefix of their own: callers have a "tries".)
wait_for() {
	wf_tries=$(($(snaa_secs "$1") * 10))
	shift
	while [ "$wf_tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		wf_tries=$((wf_tries - 1))
	done
	return 1
}

# snaa_gid_index DEV IPV4: print the index of DEV's (port 1) RoCE v2 GID
# ::ffff:IPV4 (what perftest's -x wants); fail if DEV has none.
snaa_gid_index() {
	sg_want=$(echo "$2" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	for sg_f in "/sys/class/infiniband/$1/ports/1/gids/"*; do
		sg_i=${sg_f##*/}
		[ "$(cat "$sg_f" 2>/dev/null)" = "$sg_want" ] || continue
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$sg_i" \
			2>/dev/null)" = "RoCE v2" ] || continue
		echo "$sg_i"
		return 0
	done
	return 1
}

# Install the build-tree module so that modprobe and the rdma-link
# autoload find it (the VM's /lib/modules is a writable overlay).  The
# module indexes were made on the host by scripts/modroot.sh; running
# depmod here instead takes a minute under TCG.
snaa_install_module() {
	kdir=/lib/modules/$(uname -r)
	staged=$SNAA_TOP/build/modroot/lib/modules/$(uname -r)
	mkdir -p "$kdir/updates"
	if [ -f "$staged/modules.dep" ] && cmp -s "$staged/updates/snaa.ko" "$SNAA_KO"; then
		cp "$staged"/modules.* "$kdir/"
		cp "$SNAA_KO" "$kdir/updates/snaa.ko"
	else
		echo "# module indexes not staged (scripts/modroot.sh): running depmod"
		cp "$SNAA_KO" "$kdir/updates/snaa.ko"
		depmod -a
	fi
	# SNAA_DYNDBG="+p" (or "func snaa_qp_error +p"-style flags for the
	# whole module): the driver's debug messages, in dmesg, from load on
	rm -f /etc/modprobe.d/snaa-dyndbg.conf
	if [ -n "${SNAA_DYNDBG:-}" ]; then
		echo "options snaa dyndbg=\"$SNAA_DYNDBG\"" \
			>/etc/modprobe.d/snaa-dyndbg.conf
	fi
}

# Use the build-tree provider, not an installed one.
snaa_use_build_provider() {
	export RDMAV_DRIVERS="$SNAA_PROVIDER"
}

snaa_device_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

snaa_device_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# ---- uc_target control ------------------------------------------------------
# uc_target (uc_target.c) instances T1..T4 run in namespace $TGT_NS on
# RDMA device $TGT_DEV with a path to GID ::ffff:$TGT_DGID; their FIFOs
# and output live in $TGT_TMP.  The caller sets those four variables and
# UC_TARGET, and kills $T1_PID.. at cleanup (tgt_stop_all).

# tgt_fd T: the file descriptor feeding target T (T1 .. T4).
tgt_fd() {
	case $1 in
	T1) echo 3 ;;
	T2) echo 4 ;;
	T3) echo 5 ;;
	T4) echo 6 ;;
	T5) echo 7 ;;
	esac
}

# tgt_start T ARGS...: start uc_target T; its info line ends up in $T_INFO.
tgt_start() {
	t=$1
	shift
	mkfifo "$TGT_TMP/$t.in" || return 1
	ip netns exec "$TGT_NS" "$UC_TARGET" --dev "$TGT_DEV" \
		--dgid "$TGT_DGID" "$@" <"$TGT_TMP/$t.in" \
		>"$TGT_TMP/$t.out" 2>"$TGT_TMP/$t.err" &
	eval "${t}_PID=\$!"
	case $t in
	T1) exec 3>"$TGT_TMP/$t.in" ;;
	T2) exec 4>"$TGT_TMP/$t.in" ;;
	T3) exec 5>"$TGT_TMP/$t.in" ;;
	T4) exec 6>"$TGT_TMP/$t.in" ;;
	T5) exec 7>"$TGT_TMP/$t.in" ;;
	esac
	if ! wait_for 30 grep -q '^qpn=' "$TGT_TMP/$t.out"; then
		echo "# $t did not start:"
		sed 's/^/# /' "$TGT_TMP/$t.err"
		return 1
	fi
	eval "${t}_INFO=\$(grep '^qpn=' \"\$TGT_TMP/\$t.out\")"
}

# tgt_stop_all: kill every target started and close its FIFO.
tgt_stop_all() {
	for p in ${T1_PID:-} ${T2_PID:-} ${T3_PID:-} ${T4_PID:-} ${T5_PID:-}; do
		kill "$p" 2>/dev/null
	done
	for p in ${T1_PID:-} ${T2_PID:-} ${T3_PID:-} ${T4_PID:-} ${T5_PID:-}; do
		wait "$p" 2>/dev/null
	done
	T1_PID= T2_PID= T3_PID= T4_PID= T5_PID=
	exec 3>&- 4>&- 5>&- 6>&- 7>&-
}

# field KEY LINE: the value of KEY=VALUE in LINE.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# tgt_cmd T COMMAND: send COMMAND, print the answer (without "end").
# Commands are answered in order; the answer to this one follows the
# last "end" already in the output (tgt_cmd runs in subshells: the
# count must come from the file).
tgt_cmd() {
	t=$1
	fd=$(tgt_fd "$t")
	n=$(($(grep -c '^end$' "$TGT_TMP/$t.out") + 1))
	# shellcheck disable=SC2039,SC3021 # fd number from a variable
	eval "printf '%s\n' \"\$2\" >&$fd" || return 1
	tries=300
	while [ "$(grep -c '^end$' "$TGT_TMP/$t.out")" -lt "$n" ]; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || { echo "error: $t does not answer"; return 1; }
		sleep 0.1
	done
	awk -v n="$n" 'BEGIN { e = 0 }
		/^end$/ { e++; next }
		e == n - 1 && !/^qpn=/' "$TGT_TMP/$t.out"
}

# ---- counters --------------------------------------------------------------

# cnt_snap DEV FILE: "name value" for every hw counter of DEV (port 1).
cnt_snap() {
	awk '{ n = FILENAME; sub(/.*\//, "", n); print n, $0 }' \
		"/sys/class/infiniband/$1/ports/1/hw_counters"/* >"$2"
}

# cnt_changed BEFORE AFTER: "name=delta" of every counter that moved
# between the snapshots, separated by spaces.
cnt_changed() {
	awk 'NR == FNR { b[$1] = $2; next }
	     $2 != b[$1] { printf "%s%s=%d", s, $1, $2 - b[$1]; s = " " }' \
		"$1" "$2"
}

# cnt_delta BEFORE AFTER NAME: how much counter NAME grew between the
# snapshots (empty if there is no such counter).
cnt_delta() {
	awk -v k="$3" 'NR == FNR { if ($1 == k) b = $2; next }
		$1 == k { print $2 - b }' "$1" "$2"
}

# ---- kernel reports and unprivileged users -----------------------------------

# Kernel log lines that fail a test: reports of every debug option of the
# debug kernel (KASAN, lockdep, kmemleak, UBSAN, DEBUG_OBJECTS, KFENCE) and
# of the lockup, stall and hung task detectors.
SNAA_DMESG_BAD='BUG:|WARNING:|Oops|Call Trace|general protection|refcount_t|list_add corruption|list_del corruption|KASAN|UBSAN|kernel BUG|soft lockup|hard LOCKUP|rcu_sched self-detected stall|rcu: INFO|hung_task|blocked for more than|Kernel panic|ODEBUG|KFENCE|possible circular locking|possible recursive locking|inconsistent lock state|unreferenced object|bad page|page allocation failure'

# snaa_nobody_wrapper FILE MEMLOCK_KB: write FILE, a script that runs its
# arguments as uid/gid 65534 without capabilities and with RLIMIT_MEMLOCK
# MEMLOCK_KB (what an unprivileged user has), writing its pid to
# $SNAA_PIDFILE first if that is set (env SNAA_PIDFILE=F FILE CMD...).
snaa_nobody_wrapper() {
	{
		echo '#!/bin/sh'
		echo "ulimit -l $2 || exit 1"
		echo '[ -n "${SNAA_PIDFILE:-}" ] && echo $$ >"$SNAA_PIDFILE"'
		echo 'exec setpriv --reuid=65534 --regid=65534 --clear-groups \'
		echo '	--inh-caps=-all -- "$@"'
	} >"$1" && chmod 755 "$1"
}
