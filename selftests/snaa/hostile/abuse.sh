#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Hostile user space: an unprivileged process that misuses every verb,
# scribbles on its own mapped rings and rings raw doorbells (abuser.c)
# may break its own QPs, but never the kernel and never another
# process's traffic.  Runs as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/hostile/abuse.sh
#
# (2 to 4 minutes on 6.1 under TCG, 3.5 to 8 on the debug kernel,
# depending on the host's load: give that one --timeout 1800)
#
#  +- ns snaa-a -----------------+          +- ns snaa-b -----------------+
#  | snaa0 - veth0 198.18.0.1    |==========| snaa1 - veth1 198.18.0.2    |
#  +-----------------------------+   veth   +-----------------------------+
#       ^   ^                                    ^   ^
#       |   +-- victim QP A  <== UC traffic ==>  |   +-- victim QP B
#       |       (abuse_victim, root: every byte and completion checked)
#       |   +-- loopback victim QPs C <==> D on snaa0 (abuse_victim, root)
#       +---------------+------------------------+
#                       abuser (uid 65534, RLIMIT_MEMLOCK 64 MiB):
#                       contexts on snaa0 and snaa1, its QPs looped back
#                       and across the veth pair, garbage everywhere; QPs
#                       that name C and D and the PSNs "rdma" shows
#
# Sequence:
#   1. self-tests: the victim's data, canary and loss checks and the
#      abuser's foreign-key and slow-call checks must fail when made to
#   2. the victim starts (UC SEND/WRITE traffic snaa0 <-> snaa1) and
#      publishes its QPNs and a canary (address, keys) per side; so does
#      the loopback victim (snaa0 <-> snaa0), whose connection the
#      abuser's QPs try to join (every packet dropped and counted)
#   3. the abuser runs with seeds $ABUSE_SEEDS (--seconds
#      $ABUSE_SECONDS each, --resize-race $ABUSE_RACE_SECONDS), aiming
#      also at the victim's keys; after each run: it exited 0 (its own
#      checks: only ordinary errors, well-formed completions, no slow
#      call, foreign keys refused, the device still works, a flush
#      ends) within its time limit, the victim is alive and its QPs are
#      in RTS (rdma resource show), `rdma resource show` lists nothing
#      of the abuser and the per-device object counts are back to what
#      the victim alone has, nothing new in dmesg
#   4. once more (seed $ABUSE_KILL_SEED, storms most of the time), killed
#      with SIGKILL after $ABUSE_KILL_AFTER s: same checks
#   5. the victim stops: every message exact, none lost, QPs in RTS at
#      every check, canaries intact, enough messages
#   6. the devices go, `rmmod snaa` succeeds, nothing in dmesg, and with
#      ABUSE_KMEMLEAK=1 on a kernel with kmemleak no leak (the VM runner
#      checks kmemleak after the command anyway)
#
# Output: KTAP.  The programs' own output is shown as "#   " lines.
# Exit status: 0 iff every check passed, 1 otherwise, 2 usage error,
# 4 (skip) if the setup is impossible here.
#
# Environment: ABUSER=/path/to/abuser, ABUSE_VICTIM=/path/to/abuse_victim
# (else lib.sh's snaa_build); ABUSE_SEEDS (default $SNAA_ABUSE_SEEDS, which
# reaches the test VM, else "1 2 3"),
# ABUSE_SECONDS (default 12), ABUSE_ITERATIONS (default 3000),
# ABUSE_RACE_SECONDS (8), ABUSE_KILL_SEED (4), ABUSE_KILL_AFTER (10),
# ABUSE_ARGS (more abuser options, e.g. "--threads 8"), ABUSE_KMEMLEAK=1.
#
# Features: hostile, doorbell
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

AB_SEEDS=${ABUSE_SEEDS:-${SNAA_ABUSE_SEEDS:-1 2 3}}
AB_SECONDS=${ABUSE_SECONDS:-12}
AB_RACE=${ABUSE_RACE_SECONDS:-8}
AB_ITER=${ABUSE_ITERATIONS:-3000}
AB_KILL_SEED=${ABUSE_KILL_SEED:-4}
AB_KILL_AFTER=${ABUSE_KILL_AFTER:-10}
AB_ARGS=${ABUSE_ARGS:-}
AB_MEMLOCK_KB=65536

snaa_no_args "$@"

uc_vm_only
snaa_build ABUSER abuser
snaa_build ABUSE_VICTIM abuse_victim
command -v setpriv >/dev/null || snaa_skip "setpriv (util-linux) missing"
command -v rdma >/dev/null || snaa_skip "rdma (iproute2) missing"

AB_TMP=$(mktemp -d) || snaa_skip "mktemp failed"
chmod 755 "$AB_TMP"
# snaa_build may have built them into a private temporary directory,
# which uid 65534 could not enter
for d in "$(dirname "$ABUSER")" "$(dirname "$ABUSE_VICTIM")"; do
	case $d in
	"${TMPDIR:-/tmp}"/*) chmod 755 "$d" ;;
	esac
done

VICTIM_PID=
LOVICTIM_PID=
ab_cleanup() {
	trap - EXIT INT TERM
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
	[ -n "$LOVICTIM_PID" ] && kill -KILL "$LOVICTIM_PID" 2>/dev/null
	ab_kill_abusers
	cleanup_snaa
	rm -rf "$AB_TMP"
}

# Only the abuser processes this script started (by their pid files).
ab_kill_abusers() {
	for f in "$AB_TMP"/abuser.*.pid; do
		[ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
	done
}

trap 'ab_cleanup; exit 130' INT TERM
trap 'ab_cleanup' EXIT

AB_T0=$(date +%s)

# ab_phase TEXT: a "# t+N s: TEXT" line, for the time budget.
ab_phase() {
	echo "# t+$(($(date +%s) - AB_T0))s: $*"
}

# ab_show FILE: a program's output as KTAP diagnostics.
ab_show() {
	sed 's/^/#   /' "$1"
}

# ab_mark NAME: put a marker line into the kernel log.
ab_mark() {
	echo "abuse.sh: mark $1" >/dev/kmsg
}

# ab_dmesg_since MARK WHAT: no bad line in the kernel log since the
# marker MARK (the whole log if it has scrolled away).
ab_dmesg_since() {
	ads_new=$(dmesg | sed -n "/abuse.sh: mark $1\$/,\$p")
	[ -n "$ads_new" ] || ads_new=$(dmesg)
	ads_bad=$(printf '%s\n' "$ads_new" | grep -E -- "$SNAA_DMESG_BAD")
	if [ -z "$ads_bad" ]; then
		ktap_ok "no kernel warning in dmesg $2"
	else
		ktap_fail "no kernel warning in dmesg $2" \
			"$(printf '%s\n' "$ads_new" | grep -E -B 5 -A 40 -m 3 -- \
			   "$SNAA_DMESG_BAD" | head -n 150)"
	fi
}

# The objects of the process named $1 in rdma resource show.
ab_res_of() {
	for r in qp cq mr pd ctx; do
		rdma resource show "$r" 2>/dev/null | grep -E "comm \[?$1\]?( |$)"
	done
}

# "snaa0: pd 3 cq 4 ..." per snaa device: the object counts.
ab_res_counts() {
	rdma resource show 2>/dev/null | grep -E 'snaa[01]:' |
		sed 's/^[0-9]*: *//'
}

ab_nothing_of_abuser() {
	[ -z "$(ab_res_of abuser)" ] &&
		[ "$(ab_res_counts)" = "$AB_BASE_COUNTS" ]
}

# The victims' QPs as rdma lists them: all four in RTS.
ab_victim_rts() {
	v=$(rdma resource show qp 2>/dev/null | grep -E 'comm \[?abuse_victim')
	[ "$(printf '%s\n' "$v" | grep -c 'state RTS')" = 4 ]
}

# ab_checks_after NAME MARK: what must hold once an abuser is gone.
ab_checks_after() {
	if kill -0 "$VICTIM_PID" 2>/dev/null &&
	   kill -0 "$LOVICTIM_PID" 2>/dev/null; then
		ktap_ok "$1: the victims are still running"
	else
		ktap_fail "$1: the victims are still running" \
			"$(tail -n 30 "$AB_TMP/victim.log")" \
			"$(tail -n 30 "$AB_TMP/victim_lo.log")"
	fi
	if ab_victim_rts; then
		ktap_ok "$1: the victim's QPs are in RTS"
	else
		ktap_fail "$1: the victim's QPs are in RTS" \
			"$(rdma resource show qp 2>&1)"
	fi
	# an exited process's uverbs files are released before its parent
	# can reap it; the wait only covers a slow release
	if wait_for 20 ab_nothing_of_abuser; then
		ktap_ok "$1: rdma resource show lists nothing of the abuser"
	else
		ktap_fail "$1: rdma resource show lists nothing of the abuser" \
			"left of the abuser:" "$(ab_res_of abuser)" \
			"counts now:" "$(ab_res_counts)" \
			"counts with the victim alone:" "$AB_BASE_COUNTS"
	fi
	ab_dmesg_since "$2" "($1)"
}

# $AB_NOBODY CMD...: run CMD as uid/gid 65534 with a memlock limit
# (what an unprivileged user has; the abuser's MRs are bounded by it),
# its pid written to $SNAA_PIDFILE if set (env SNAA_PIDFILE=F $AB_NOBODY ...).
AB_NOBODY=$AB_TMP/nobody
snaa_nobody_wrapper "$AB_NOBODY" "$AB_MEMLOCK_KB"

# ---- setup ---------------------------------------------------------------

ktap_header abuse
uc_backlog
setup_snaa
trap 'ab_cleanup; exit 130' INT TERM
trap 'ab_cleanup' EXIT
for d in /dev/infiniband/uverbs*; do
	[ -e "$d" ] || snaa_skip "no /dev/infiniband/uverbs*"
	chmod 0666 "$d"
done
# kmemleak is checked by the VM runner after the command; scanning here
# too costs minutes on a busy host, so only with ABUSE_KMEMLEAK=1
KMEMLEAK=
if [ "${ABUSE_KMEMLEAK:-0}" = 1 ]; then
	KMEMLEAK=/sys/kernel/debug/kmemleak
	[ -e "$KMEMLEAK" ] ||
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
fi
if [ -n "$KMEMLEAK" ] && [ -w "$KMEMLEAK" ]; then
	echo scan >"$KMEMLEAK" 2>/dev/null
	echo clear >"$KMEMLEAK" 2>/dev/null
fi
ab_mark start
echo "# abuser $ABUSER, victim $ABUSE_VICTIM, kernel $(uname -r)"

# ---- 1. the checks can fail ------------------------------------------------

ab_phase "self-tests"
# ab_selftest NAME WANT_REGEX CMD...: CMD must exit 1 with a KTAP line
# matching WANT_REGEX ("not ok ..." of the check made to fail).
ab_selftest() {
	st_name=$1
	st_want=$2
	shift 2
	timeout -k 5 120 "$@" >"$AB_TMP/self.log" 2>&1
	st_rc=$?
	if [ "$st_rc" = 1 ] && grep -qE -- "$st_want" "$AB_TMP/self.log"; then
		ktap_ok "self-test: $st_name"
	else
		ktap_fail "self-test: $st_name" "exit $st_rc, want 1 and a line" \
			"matching /$st_want/:" "$(cat "$AB_TMP/self.log")"
	fi
}

ab_selftest "the victim catches corrupt data" '^not ok 1 - every message' \
	"$ABUSE_VICTIM" --dev-a "$DEV_A" --dev-b "$DEV_B" --seconds 2 \
	--self-test data
ab_selftest "the victim catches a write to its canary" \
	'^not ok 4 - canaries intact' \
	"$ABUSE_VICTIM" --dev-a "$DEV_A" --dev-b "$DEV_B" --seconds 2 \
	--self-test canary
ab_selftest "the victim catches a lost message" '^not ok 2 - no message lost' \
	"$ABUSE_VICTIM" --dev-a "$DEV_A" --dev-b "$DEV_B" --seconds 2 \
	--timeout 2 --self-test lost
printf 'canary A %s 0x1000 64 0x100 0x100\n' "$DEV_A" >"$AB_TMP/fake.info"
chmod 644 "$AB_TMP/fake.info"
ab_selftest "the abuser catches a usable foreign key" \
	'^not ok 6 - the victim.s keys were refused' \
	"$AB_NOBODY" "$ABUSER" --dev "$DEV_A" --iterations 0 --chase 0 \
	--resize-race 0 --victim-info "$AB_TMP/fake.info" --self-test foreign
ab_selftest "the abuser catches a slow call" '^not ok 4 - no call slower' \
	"$AB_NOBODY" "$ABUSER" --dev "$DEV_A" --iterations 0 --chase 0 \
	--resize-race 0 --slow-limit 1 --self-test slow
ab_dmesg_since start "(self-tests)"

# ---- 2. the victim -----------------------------------------------------------

ab_phase "victim starts"
"$ABUSE_VICTIM" --dev-a "$DEV_A" --dev-b "$DEV_B" --seconds 1800 \
	--ready-file "$AB_TMP/victim.ready" --info-file "$AB_TMP/victim.info" \
	--min-messages 100 >"$AB_TMP/victim.log" 2>&1 &
VICTIM_PID=$!
"$ABUSE_VICTIM" --dev-a "$DEV_A" --dev-b "$DEV_A" --seconds 1800 \
	--ready-file "$AB_TMP/victim_lo.ready" \
	--info-file "$AB_TMP/victim_lo.info" \
	--min-messages 100 >"$AB_TMP/victim_lo.log" 2>&1 &
LOVICTIM_PID=$!
if ! wait_for 60 test -e "$AB_TMP/victim.ready" ||
   ! wait_for 60 test -e "$AB_TMP/victim_lo.ready"; then
	ktap_fail "the victims' traffic flows" "$(cat "$AB_TMP/victim.log")" \
		"$(cat "$AB_TMP/victim_lo.log")"
	ktap_finish
fi
chmod 644 "$AB_TMP/victim.info" "$AB_TMP/victim_lo.info"
ktap_ok "the victims' traffic flows ($DEV_A <-> $DEV_B, $DEV_A <-> $DEV_A)"
sed 's/^/# victim: /' "$AB_TMP/victim.info"
sed 's/^/# loopback victim: /' "$AB_TMP/victim_lo.info"
# what the victim alone has: the abuser must leave exactly this
AB_BASE_COUNTS=$(ab_res_counts)
printf '%s\n' "$AB_BASE_COUNTS" | sed 's/^/# objects with the victim alone: /'

# ---- 3. the abuser, several seeds ---------------------------------------------

for seed in $AB_SEEDS; do
	ab_name="abuser seed $seed"
	ab_phase "$ab_name"
	ab_mark "seed-$seed"
	limit=$((AB_SECONDS + 150))
	t0=$(date +%s)
	# shellcheck disable=SC2086 # AB_ARGS is a list
	timeout -k 10 "$limit" env SNAA_PIDFILE="$AB_TMP/abuser.$seed.pid" \
		"$AB_NOBODY" "$ABUSER" --dev "$DEV_A" --dev2 "$DEV_B" --seed "$seed" \
		--seconds "$AB_SECONDS" --iterations "$AB_ITER" \
		--resize-race "$AB_RACE" --victim-info "$AB_TMP/victim.info" \
		--loopback-victim "$AB_TMP/victim_lo.info" $AB_ARGS \
		>"$AB_TMP/abuser.$seed.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	ab_phase "$ab_name exited"
	ab_show "$AB_TMP/abuser.$seed.log"
	case $rc in
	0) ktap_ok "$ab_name: exit 0, every check of its own passed (${secs}s)" ;;
	124|137) ktap_fail "$ab_name: exit 0, every check of its own passed" \
		"killed by the time limit of ${limit}s: a hang?" ;;
	*) ktap_fail "$ab_name: exit 0, every check of its own passed" \
		"exit status $rc after ${secs}s" ;;
	esac
	ab_checks_after "$ab_name" "seed-$seed"
done

# ---- 4. killed in the middle ----------------------------------------------------

ab_name="abuser seed $AB_KILL_SEED killed"
ab_phase "$ab_name"
ab_mark kill
# shellcheck disable=SC2086
"$AB_NOBODY" "$ABUSER" --dev "$DEV_A" --dev2 "$DEV_B" \
	--seed "$AB_KILL_SEED" --seconds 600 --iterations 1000000 \
	--chase 0 --resize-race 0 --storm-every 40 --storm-ms 3000 $AB_ARGS \
	>"$AB_TMP/abuser.kill.log" 2>&1 &
kpid=$!
echo "$kpid" >"$AB_TMP/abuser.kill.pid"
sleep "$AB_KILL_AFTER"
if kill -0 "$kpid" 2>/dev/null; then
	kill -KILL "$kpid"
	wait "$kpid" 2>/dev/null
	ab_show "$AB_TMP/abuser.kill.log"
	ktap_ok "$ab_name: SIGKILL after ${AB_KILL_AFTER}s, mid-run"
else
	wait "$kpid"
	rc=$?
	ab_show "$AB_TMP/abuser.kill.log"
	ktap_fail "$ab_name: SIGKILL after ${AB_KILL_AFTER}s, mid-run" \
		"it had exited already (status $rc)"
fi
ab_checks_after "$ab_name" kill

# ---- 5. the victim's verdict --------------------------------------------------

ab_phase "victims stop"
kill -TERM "$VICTIM_PID" "$LOVICTIM_PID"
# ab_verdict PID LOG NAME
ab_verdict() {
	wait "$1"
	rc=$?
	ab_show "$2"
	if [ "$rc" = 0 ] && ! grep -q '^not ok' "$2"; then
		ktap_ok "$3: every message exact, none lost, QPs in RTS, canaries intact"
	else
		ktap_fail "$3: every message exact, none lost, QPs in RTS, canaries intact" \
			"exit status $rc:" "$(grep -E '^(not ok|# )' "$2" |
					     tail -n 40)"
	fi
}
ab_verdict "$VICTIM_PID" "$AB_TMP/victim.log" victim
ab_verdict "$LOVICTIM_PID" "$AB_TMP/victim_lo.log" "loopback victim"
VICTIM_PID=
LOVICTIM_PID=

# ---- 6. the module goes ------------------------------------------------------

ab_phase "teardown"
ab_mark teardown
cleanup_snaa
if wait_for 30 snaa_device_gone snaa0 && wait_for 30 snaa_device_gone snaa1;
then
	ktap_ok "the devices are gone with their namespaces"
else
	ktap_fail "the devices are gone with their namespaces" \
		"$(rdma link show 2>&1)"
fi
if out=$(rmmod snaa 2>&1); then
	ktap_ok "rmmod snaa"
else
	ktap_fail "rmmod snaa" "$out" "$(lsmod | grep -E '^(snaa|ib_)')"
fi
ab_dmesg_since teardown "(teardown, rmmod)"
ab_dmesg_since start "(the whole test)"
if [ -n "$KMEMLEAK" ] && [ -w "$KMEMLEAK" ]; then
	# reported: objects older than 5 s unreferenced in two scans
	sleep 6
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	leaks=$(cat "$KMEMLEAK")
	if [ -z "$leaks" ]; then
		ktap_ok "kmemleak: no leak"
	else
		ktap_fail "kmemleak: no leak" "$(printf '%s\n' "$leaks" |
						 head -n 120)"
	fi
elif [ -n "$KMEMLEAK" ]; then
	ktap_ok "kmemleak: no leak # SKIP kernel without kmemleak"
fi
ab_phase "done"
ktap_finish
