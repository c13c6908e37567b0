#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Resource limits: what a process takes from the kernel through snaa is
# charged where an administrator can bound it.  Runs as root inside the
# test VM, never on the host:
#
#     selftests/vm/run -- sh selftests/snaa/hostile/limits.sh
#
#  +- ns snaa-a ---------------+     objhog (objhog.c) takes resources
#  | snaa0 - veth0 198.18.0.1  |     of snaa0 from inside the cgroup
#  +---------------------------+     /sys/fs/cgroup/snaa-limits
#
#  - memory cgroup: the kernel memory of CQ/QP rings (and the rest snaa
#    allocates for a process) is charged to the process's memory cgroup:
#    16 CQs of 65536 entries (2 MiB of ring each) raise memory.current
#    by at least 32 MiB; with memory.max 48M ibv_create_cq fails with
#    ENOMEM (not the OOM killer) after 16 to 23 such CQs;
#  - RLIMIT_MEMLOCK: an unprivileged process cannot register (pin) more
#    than its locked-memory limit (the RDMA core's check, which snaa
#    relies on): 8 MiB with a 1 MiB limit fails with ENOMEM, with a
#    16 MiB limit it works;
#  - rdma cgroup: rdma.max "hca_object=50" bounds the objects (QPs, CQs,
#    MRs, ...) a process can create on the device, so that no user can
#    take all of its QP numbers or keys;
#  - address handles: a user gets 61440 of snaa1's 65536 (the rest is the
#    kernel's reserve), charged to its memory cgroup (slab and the per-CPU
#    route caches), and with all of them taken rping (rdma_cm, whose CM
#    creates kernel AHs) still connects to snaa1 (SNAA_LIMITS_AH=N: the
#    same with snaa1's AH limit lowered to N, 3840 of 4096 for N = 4096).
#
# Output: KTAP.  Exit status: 0 iff every check passed, 1 otherwise,
# 2 usage error, 4 (skip) if the setup is impossible here.
#
# Features: hostile, limits
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

snaa_no_args "$@"

uc_vm_only
snaa_build OBJHOG objhog
LM_TMP=$(mktemp -d) || snaa_skip "mktemp failed"
CG_ROOT=/sys/fs/cgroup
CG=$CG_ROOT/snaa-limits
MIB=1048576

lm_cleanup() {
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null
	cleanup_snaa
	rm -rf "$LM_TMP"
}

if [ ! -e "$CG_ROOT/cgroup.controllers" ]; then
	mount -t cgroup2 none "$CG_ROOT" ||
		snaa_skip "cannot mount cgroup2 on $CG_ROOT"
fi
grep -qw memory "$CG_ROOT/cgroup.controllers" ||
	snaa_skip "no memory controller (CONFIG_MEMCG)"
grep -qw rdma "$CG_ROOT/cgroup.controllers" ||
	snaa_skip "no rdma controller (CONFIG_CGROUP_RDMA)"
echo "+memory +rdma" >"$CG_ROOT/cgroup.subtree_control" ||
	snaa_skip "cannot enable the memory and rdma controllers"

ktap_header "snaa resource limits"
setup_snaa
trap 'lm_cleanup; exit 130' INT TERM
trap lm_cleanup EXIT
mkdir "$CG" || snaa_skip "cannot create $CG"

# The shell code that moves itself into the test cgroup, then execs "$@"
# (so that $! of "sh -c ... &" is the program's PID).
IN_CG='echo $$ >"$1/cgroup.procs" && shift && exec "$@"'

# in_cg CMD...: run CMD in the test cgroup.
in_cg() {
	sh -c "$IN_CG" sh "$CG" "$@"
}

# hold OUT ARGS...: objhog ARGS --hold in the cgroup, in the background
# ($HOG); waits until it has created what it was asked for.
hold() {
	out=$1
	shift
	sh -c "$IN_CG" sh "$CG" "$OBJHOG" "$@" --hold >"$out" 2>&1 &
	HOG=$!
	wait_for 120 grep -qE '^(created|failed)' "$out"
}

unhold() {
	kill "$HOG" 2>/dev/null
	wait "$HOG" 2>/dev/null
}

# ---- the memory cgroup pays for the rings --------------------------------

hold "$LM_TMP/base.out" --dev snaa0 --cqs 1 --cqe 1
base=$(cat "$CG/memory.current")
unhold
hold "$LM_TMP/cqs.out" --dev snaa0 --cqs 16 --cqe 65536
cur=$(cat "$CG/memory.current")
unhold
echo "# memory.current: $base with 1 small CQ, $cur with 16 CQs of 65536 entries"
if grep -q '^created 16$' "$LM_TMP/cqs.out" &&
   [ $((cur - base)) -ge $((32 * MIB)) ]; then
	ktap_ok "16 CQs of 65536 entries raise the creator's memory.current by $(((cur - base) / MIB)) MiB (>= 32)"
else
	ktap_fail "16 CQs of 65536 entries raise the creator's memory.current by >= 32 MiB" \
		"memory.current $base -> $cur" "$(cat "$LM_TMP/cqs.out")"
fi

echo $((48 * MIB)) >"$CG/memory.max"
in_cg "$OBJHOG" --dev snaa0 --cqs 256 --cqe 65536 >"$LM_TMP/max.out" 2>&1
rc=$?
n=$(grep -c '^cq ' "$LM_TMP/max.out")
echo "# memory.max 48M: $n CQs created, exit $rc, $(tail -n 1 "$LM_TMP/max.out")"
if [ "$n" -ge 16 ] && [ "$n" -lt 24 ] && [ "$rc" = 3 ] &&
   grep -q '^failed after .*: ENOMEM' "$LM_TMP/max.out"; then
	ktap_ok "memory.max 48M: ibv_create_cq fails with ENOMEM after $n CQs of 2 MiB (no OOM kill)"
else
	ktap_fail "memory.max 48M: ibv_create_cq fails with ENOMEM after 16..23 CQs of 2 MiB (no OOM kill)" \
		"$n created, exit $rc" "$(tail -n 3 "$LM_TMP/max.out")"
fi
echo max >"$CG/memory.max"

# ---- RLIMIT_MEMLOCK bounds what an unprivileged process pins ---------------

# as_nobody LIMIT CMD...: CMD as user nobody with RLIMIT_MEMLOCK LIMIT.
as_nobody() {
	lim=$1
	shift
	prlimit --memlock="$lim:$lim" setpriv --reuid=65534 --regid=65534 \
		--clear-groups -- "$@"
}

out=$(as_nobody $MIB "$OBJHOG" --dev snaa0 --mr $((8 * MIB)) 2>&1)
rc=$?
if [ "$rc" = 3 ] && printf '%s\n' "$out" | grep -q 'ENOMEM'; then
	ktap_ok "unprivileged, RLIMIT_MEMLOCK 1 MiB: registering 8 MiB fails with ENOMEM"
else
	ktap_fail "unprivileged, RLIMIT_MEMLOCK 1 MiB: registering 8 MiB fails with ENOMEM" \
		"exit $rc: $out"
fi
out=$(as_nobody $((16 * MIB)) "$OBJHOG" --dev snaa0 --mr $((8 * MIB)) 2>&1)
check_eq "unprivileged, RLIMIT_MEMLOCK 16 MiB: registering 8 MiB works" \
	"$out" "created 1"

# ---- the rdma cgroup bounds the objects -------------------------------------

echo "snaa0 hca_handle=4 hca_object=50" >"$CG/rdma.max" ||
	ktap_fail "rdma.max accepts a limit for snaa0"
in_cg "$OBJHOG" --dev snaa0 --qps 1000 >"$LM_TMP/rdma.out" 2>&1
rc=$?
last=$(tail -n 1 "$LM_TMP/rdma.out")
n=$(printf '%s\n' "$last" | sed -n 's/^failed after \([0-9]*\):.*/\1/p')
echo "# rdma.max hca_object=50: $last (exit $rc)"
if [ "$rc" = 3 ] && [ -n "$n" ] && [ "$n" -lt 50 ]; then
	ktap_ok "rdma.max hca_object=50 stops a process after $n QPs"
else
	ktap_fail "rdma.max hca_object=50 stops a process before 50 QPs" \
		"exit $rc: $last"
fi
echo "snaa0 hca_handle=max hca_object=max" >"$CG/rdma.max"

# ---- address handles: charged, and the kernel keeps a reserve ----------------

# SNAA_LIMITS_AH=N (make check's debug run: 65536 AHs take five minutes
# under KASAN) lowers snaa1's AH limit to N through debugfs
# (snaa/snaa1/ah_limit, counters.rst) for this part; the kernel's reserve
# is a sixteenth of whichever limit holds.
LM_AH_MAX=${SNAA_LIMITS_AH:-65536}
lm_ah() {
	# All the AHs a user may have (the limit less the kernel's reserve, a
	# sixteenth), held by a process in the cgroup: their memory (the
	# per-CPU route caches included) is the process's, and the kernel's CM
	# still gets the AHs it needs, so rping over the device works.
	lim=$LM_AH_MAX
	user=$((lim - lim / 16))
	if [ "$lim" != 65536 ]; then
		[ -d /sys/kernel/debug/snaa ] ||
			mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
		if ! echo "$lim" >/sys/kernel/debug/snaa/snaa1/ah_limit; then
			ktap_fail "snaa1's AH limit lowered to $lim (debugfs ah_limit)"
			return
		fi
		echo "# snaa1's AH limit lowered to $lim (SNAA_LIMITS_AH)"
	fi
	pc0=$(sed -n 's/^percpu //p' "$CG/memory.stat")
	sl0=$(sed -n 's/^slab //p' "$CG/memory.stat")
	hold "$LM_TMP/ahs.out" --dev snaa1 --ahs "$lim"
	pc1=$(sed -n 's/^percpu //p' "$CG/memory.stat")
	sl1=$(sed -n 's/^slab //p' "$CG/memory.stat")
	last=$(tail -n 1 "$LM_TMP/ahs.out")
	echo "# objhog --ahs $lim on snaa1: $last; memory.stat percpu $pc0 -> $pc1, slab $sl0 -> $sl1"
	check_eq "a user gets $user AHs of snaa1 ($lim less the kernel's $((lim / 16))), then ENOMEM" \
		"$last" "failed after $user: ENOMEM (Cannot allocate memory)"
	ncpu=$(nproc)
	if [ $((pc1 - pc0)) -ge $((user * ncpu * 16)) ] &&
	   [ $((sl1 - sl0)) -ge $((user * 64)) ]; then
		ktap_ok "$user AHs are charged to their creator's memory cgroup: percpu +$((pc1 - pc0)), slab +$((sl1 - sl0)) bytes (>= 16 per AH and CPU, >= 64 per AH)"
	else
		ktap_fail "$user AHs are charged to their creator's memory cgroup (percpu >= 16 bytes per AH and CPU, slab >= 64 per AH)" \
			"percpu $pc0 -> $pc1, slab $sl0 -> $sl1"
	fi
	RPING_COUNT=20
	ip netns exec snaa-b timeout -k 5 120 rping -s -a 198.18.0.2 -C "$RPING_COUNT" \
		-S 100 -V >"$LM_TMP/rping-s.out" 2>&1 &
	rs_pid=$!
	# rping's port, 7174: listening before the client connects
	wait_for 30 sh -c 'ip netns exec snaa-b rdma resource show cm_id 2>/dev/null |
		grep LISTEN | grep -qE ":7174( |\$)"'
	ip netns exec snaa-a timeout -k 5 120 rping -c -a 198.18.0.2 -C "$RPING_COUNT" \
		-S 100 -V >"$LM_TMP/rping-c.out" 2>&1
	rc_c=$?
	wait "$rs_pid"
	rc_s=$?
	unhold
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]; then
		ktap_ok "with every user AH of snaa1 taken, rping (rdma_cm: the kernel's AHs) to snaa1 works"
	else
		ktap_fail "with every user AH of snaa1 taken, rping (rdma_cm: the kernel's AHs) to snaa1 works" \
			"client exit $rc_c, server exit $rc_s" "$(tail -n 5 "$LM_TMP/rping-c.out")" \
			"$(tail -n 5 "$LM_TMP/rping-s.out")"
	fi
}

lm_ah

ktap_finish
