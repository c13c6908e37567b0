#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Packet fuzzer of the snaa receive path: rawpkt --mutate fires mutants of
# valid RoCEv2 packets (every header field, lengths, cuts, opcodes, PSNs,
# keys, VAs, flipped bytes, bad ICRCs) at victim UC QPs of snaa1 while
# uc_test moves traffic between snaa0 and snaa1 in both directions and
# checks every byte of it.  Runs as root inside the test VM, never on the
# host (and is meant for the debug kernel: KASAN, lockdep, kmemleak):
#
#     selftests/vm/run --kernel KVER --timeout 1800 -- sh selftests/snaa/hostile/fuzz.sh
#
#  +- ns snaa-a -----------------------------------+
#  | snaa0 - veth0 198.18.0.1   rawpkt --mutate -> |  (AF_PACKET on veth0,
#  +------------||---------------------------------+   source 198.18.0.1)
#               || veth pair, MTU 9000
#  +------------||- ns snaa-b ---------------------------------------+
#  | snaa1 - veth1 198.18.0.2                                        |
#  |   V1 uc_target: UC QP, MTU 1024, 64 receive WRs of 4 KiB        |
#  |   V2 uc_target: UC QP, MTU 256, 8 receive WRs of 256 bytes,     |
#  |      no REMOTE_WRITE access                                      |
#  +-----------------------------------------------------------------+
#  uc_test (init ns): snaa0 <-> snaa1, UC, every byte checked, looping
#  for as long as the fuzzing lasts.
#
# The victims' paths lead to 198.18.0.1, so mutants pass the address
# check and reach the responder; uc_test's QPs have random numbers the
# fuzzer does not know.  Asserted afterwards:
#  - every uc_test run passed (the live traffic was never disturbed);
#  - snaa1's counters add up: rx_packets grew by the mutants with a valid
#    ICRC plus what snaa0 sent (tx_packets), drop_bad_icrc by the mutants
#    with a bad one, and the drop_* counters together by no more than the
#    number of mutants (uc_test's packets are never dropped);
#  - both victims still answer, and after a reset each takes a valid
#    SEND into a fresh receive WR;
#  - nothing in dmesg (and the VM runner checks for KASAN, lockdep,
#    UBSAN and leaks).
#
# Options: --rounds N (default $SNAA_FUZZ_ROUNDS, else 8; make check's
# debug run sets 4, make check-full keeps 8), --mutants N per round
# (default 2000), --seed S of the first round (default 1; round i uses
# S + i).
#
# Output: KTAP.  Exit status: 0 iff every check passed, 1 otherwise,
# 2 usage error, 4 (skip) if the setup is impossible here.
#
# Features: hostile, wire
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

FZ_ROUNDS=${SNAA_FUZZ_ROUNDS:-8}
FZ_MUTANTS=2000
FZ_SEED=1

while [ $# -gt 0 ]; do
	case $1 in
	--rounds) FZ_ROUNDS=$2; shift 2 ;;
	--mutants) FZ_MUTANTS=$2; shift 2 ;;
	--seed) FZ_SEED=$2; shift 2 ;;
	-h|--help) snaa_help; exit 0 ;;
	*) snaa_help >&2; exit 2 ;;
	esac
done

uc_vm_only
snaa_build UC_TEST uc_test
snaa_build UC_TARGET uc_target
snaa_build RAWPKT rawpkt
uc_backlog
FZ_TMP=$(mktemp -d) || snaa_skip "mktemp failed"
TGT_NS=snaa-b
TGT_DEV=snaa1
TGT_DGID=198.18.0.1
TGT_TMP=$FZ_TMP
LIVE_PID=

fz_cleanup() {
	trap - EXIT INT TERM
	if [ -n "$LIVE_PID" ]; then
		# the loop ends after the current uc_test run
		touch "$FZ_TMP/stop"
		wait "$LIVE_PID" 2>/dev/null
	fi
	tgt_stop_all
	cleanup_snaa
	rm -rf "$FZ_TMP"
}

ktap_header "snaa packet fuzzer"
setup_snaa
trap 'fz_cleanup; exit 130' INT TERM
trap fz_cleanup EXIT
trap '' PIPE
DMESG_LINES=$(dmesg | wc -l)

MAC1=$(ip netns exec snaa-b cat /sys/class/net/veth1/address)
tgt_start T1 --mtu 1024 --recv 64 --recv-len 4096 --size 1048576 ||
	snaa_skip "victim V1 did not start"
tgt_start T2 --mtu 256 --recv 8 --recv-len 256 --qp-no-remote-write ||
	snaa_skip "victim V2 did not start"
ktap_ok "victims V1 ($T1_INFO) and V2 ($T2_INFO) in RTR on snaa1"

# ---- live traffic -------------------------------------------------------------

cnt_snap snaa0 "$FZ_TMP/a.before"
cnt_snap snaa1 "$FZ_TMP/b.before"

# uc_test runs back to back until $FZ_TMP/stop exists; one line per run.
(
	while [ ! -e "$FZ_TMP/stop" ]; do
		if "$UC_TEST" --dev-a snaa0 --dev-b snaa1 --timeout 60 \
		      --sizes 0,1,64,mtu-1,mtu,mtu+1,64K >"$FZ_TMP/live.out" 2>&1
		then
			echo ok >>"$FZ_TMP/live.runs"
		else
			echo failed >>"$FZ_TMP/live.runs"
			cat "$FZ_TMP/live.out" >>"$FZ_TMP/live.failed"
		fi
	done
) &
LIVE_PID=$!

# ---- fuzzing ---------------------------------------------------------------------

total=0
icrc_ok=0
icrc_bad=0
round=0
fz_fail=0
while [ "$round" -lt "$FZ_ROUNDS" ]; do
	seed=$((FZ_SEED + round))
	# Alternate the packet the mutants come from: a WRITE to V1, a SEND
	# to V1, a WRITE to V2 (whose QP has no REMOTE_WRITE access).
	case $((round % 3)) in
	0) t=T1; base="--opcode UC_RDMA_WRITE_ONLY --payload-len 512" ;;
	1) t=T1; base="--opcode UC_SEND_ONLY --payload-len 200" ;;
	2) t=T2; base="--opcode UC_RDMA_WRITE_FIRST --payload-len 256 --dma-len 1024" ;;
	esac
	eval "info=\$${t}_INFO"
	# shellcheck disable=SC2086 # $base is a list of arguments
	out=$(ip netns exec snaa-a "$RAWPKT" --dev veth0 --dmac "$MAC1" \
		--saddr 198.18.0.1 --daddr 198.18.0.2 \
		--qpn "$(field qpn "$info")" --psn "$(field psn "$info")" \
		--rkey "$(field rkey "$info")" --va "$(field va "$info")" \
		$base --mutate "$FZ_MUTANTS" --mutate-max-len 4200 \
		--seed "$seed" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep '^mutants=')
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		ktap_fail "round $round (seed $seed): rawpkt --mutate" "$out"
		fz_fail=1
		break
	fi
	total=$((total + $(field mutants "$line")))
	icrc_ok=$((icrc_ok + $(field icrc_ok "$line")))
	icrc_bad=$((icrc_bad + $(field icrc_bad "$line")))
	round=$((round + 1))
done
[ "$fz_fail" = 0 ] &&
	ktap_ok "$FZ_ROUNDS rounds of $FZ_MUTANTS mutants (seeds $FZ_SEED..$((FZ_SEED + FZ_ROUNDS - 1))) sent: $icrc_ok with a valid ICRC, $icrc_bad with a bad one"

# Let the live traffic finish its current run, then stop it.
touch "$FZ_TMP/stop"
wait "$LIVE_PID"
LIVE_PID=
runs=$(wc -l <"$FZ_TMP/live.runs" 2>/dev/null || echo 0)
bad=$(grep -c failed "$FZ_TMP/live.runs" 2>/dev/null)
if [ "${runs:-0}" -ge 1 ] && [ "${bad:-0}" = 0 ]; then
	ktap_ok "live traffic snaa0 <-> snaa1 during the fuzzing: $runs uc_test runs, every byte and completion exact"
else
	ktap_fail "live traffic snaa0 <-> snaa1 during the fuzzing: $runs uc_test runs, ${bad:-?} failed" \
		"$(sed -n '/^not ok/p; /^#/p' "$FZ_TMP/live.failed" 2>/dev/null | head -n 40)"
fi

# ---- counters ----------------------------------------------------------------------

sleep 1	# the hw_counters cache
cnt_snap snaa0 "$FZ_TMP/a.after"
cnt_snap snaa1 "$FZ_TMP/b.after"
live=$(cnt_delta "$FZ_TMP/a.before" "$FZ_TMP/a.after" tx_packets)
rx=$(cnt_delta "$FZ_TMP/b.before" "$FZ_TMP/b.after" rx_packets)
check_eq "snaa1 rx_packets grew by the mutants with a valid ICRC + snaa0's tx_packets ($icrc_ok + $live)" \
	"$rx" "$((icrc_ok + live))"
check_eq "snaa1 drop_bad_icrc grew by the mutants with a bad ICRC" \
	"$(cnt_delta "$FZ_TMP/b.before" "$FZ_TMP/b.after" drop_bad_icrc)" \
	"$icrc_bad"
drops=$(awk 'NR == FNR { b[$1] = $2; next }
	$1 ~ /^drop_/ { s += $2 - b[$1] } END { print s + 0 }' \
	"$FZ_TMP/b.before" "$FZ_TMP/b.after")
if [ "$drops" -le "$total" ] && [ "$drops" -gt 0 ]; then
	ktap_ok "snaa1 drop_* counters together +$drops, at most one per mutant ($total)"
else
	ktap_fail "snaa1 drop_* counters together +$drops, at most one per mutant ($total)" \
		"$(awk 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { print $1, $2 - b[$1] }' \
			"$FZ_TMP/b.before" "$FZ_TMP/b.after")"
fi
awk 'NR == FNR { b[$1] = $2; next } $1 ~ /^drop_/ && $2 != b[$1] {
	printf "# %s +%d\n", $1, $2 - b[$1] }' "$FZ_TMP/b.before" "$FZ_TMP/b.after"

# ---- the victims still work ---------------------------------------------------------

for t in T1 T2; do
	st=$(tgt_cmd "$t" state)
	check_match "$t answers after the fuzzing (state RTR, or ERR after a length error)" \
		"$st" '^state=(RTR|ERR)$'
	check_eq "$t: reset to RTR expecting PSN 0x500" \
		"$(tgt_cmd "$t" 'reset 0x500')" "state=RTR"
	n0=$(tgt_cmd "$t" poll | sed -n 's/^cqes=//p')
	check_eq "$t: one receive WR posted" "$(tgt_cmd "$t" 'post 1')" "posted=1"
	eval "info=\$${t}_INFO"
	if out=$(ip netns exec snaa-a "$RAWPKT" --dev veth0 --dmac "$MAC1" \
		--saddr 198.18.0.1 --daddr 198.18.0.2 \
		--qpn "$(field qpn "$info")" --psn 0x500 \
		--opcode UC_SEND_ONLY_WITH_IMMEDIATE --imm 0xf0f0 \
		--payload-len 32 2>&1); then
		tries=50
		while :; do
			p=$(tgt_cmd "$t" poll)
			[ "$(printf '%s\n' "$p" | sed -n 's/^cqes=//p')" -gt "$n0" ] && break
			tries=$((tries - 1))
			[ "$tries" -gt 0 ] || break
			sleep 0.1
		done
		check_match "$t: a valid SEND_ONLY_WITH_IMMEDIATE completes its new receive WR" \
			"$(printf '%s\n' "$p" | tail -n 1)" \
			'status=0\(success\) opcode=128\(recv\) byte_len=32 imm=0x0000f0f0 '
	else
		ktap_fail "$t: a valid SEND_ONLY_WITH_IMMEDIATE completes its new receive WR" "$out"
	fi
done

warn=$(dmesg | tail -n +"$((DMESG_LINES + 1))" |
	grep -E 'WARNING:|BUG:|Oops|Call Trace|UBSAN|KASAN|general protection')
check_eq "no kernel warning" "$warn" ""
ktap_finish
