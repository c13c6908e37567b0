#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck disable=SC2016,SC2317 # sk_loop evaluates the single-quoted
# command lines; sk_cleanup runs from a trap
#
# Soak: everything hostile at once, for a long time (make soak; not part
# of make check).  Meant for the debug kernel (KASAN, lockdep,
# kmemleak), with the soft lockup, RCU stall and hung task detectors
# armed tighter than by default.  Runs as root inside the test VM:
#
#     selftests/vm/run --kernel KVER --timeout 2700 -- sh selftests/snaa/soak.sh
#
#  snaa0 (ns snaa-a) <== veth, every packet 2 ms late (netem) ==> snaa1 (ns snaa-b)
#
# For $SNAA_SOAK_SECONDS (default 1800), side by side, each in a loop:
#   rc       rc_test's 16 MiB stream (SEND, WRITE with immediate, READ)
#            snaa0 -> snaa1, every byte and completion checked
#   uc       uc_test in loopback on snaa0 (UC SEND/WRITE), every byte
#            checked (UC loses a message whose packets a link reorders,
#            and a veth link behind netem does: packets dequeued on two
#            CPUs reach two backlogs)
#   ud       verbs_test pair.address_handles (UD SENDs through address
#            handles) and pair.mw (memory windows over RC)
#   fuzzer   rawpkt --mutate: rounds of 2000 mutants of a UC WRITE and a
#            UC SEND at a uc_target QP on snaa1 (fuzz.sh's packets)
#   abuser   the hostile process (abuser.c, uid 65534, new seed each
#            run, concurrency and memory window storms), 120 s a run
# Asserted at the end: every run of every loop passed (the abuser's exit
# 0 means its own checks passed), each loop ran at least once, the fuzz
# victim still takes a valid SEND, nothing in dmesg (lockups, stalls,
# hung tasks, KASAN, lockdep, leaks: the VM runner checks too), and
# "rmmod snaa" succeeds with everything stopped.
#
# SNAA_SOAK_LANES="ud rc" runs only those loops.  A failed run's record
# (the first three per loop) includes what both devices' counters moved
# during it.
#
# Output: KTAP, ending in "N passed, N failed"; the progress every five
# minutes on "#" lines.
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

SK_SECONDS=${SNAA_SOAK_SECONDS:-1800}
# SNAA_SOAK_LANES: the loops to run (default all five), to tell which
# of them a failure needs
SK_LANES=${SNAA_SOAK_LANES:-rc uc ud fuzzer abuser}
case $SK_SECONDS in
''|*[!0-9]*) echo "$0: SNAA_SOAK_SECONDS must be a number of seconds" >&2
	exit 2 ;;
esac

uc_vm_only
snaa_build UC_TEST uc_test
snaa_build UC_TARGET uc_target
snaa_build RAWPKT rawpkt
snaa_build RC_TEST rc_test
snaa_build VERBS_TEST verbs_test
snaa_build ABUSER abuser
uc_backlog
SK_TMP=$(mktemp -d) || snaa_skip "mktemp failed"
chmod 755 "$SK_TMP"
TGT_NS=snaa-b
TGT_DEV=snaa1
TGT_DGID=198.18.0.1
TGT_TMP=$SK_TMP
SK_PIDS=

sk_cleanup() {
	trap - EXIT INT TERM
	touch "$SK_TMP/stop"
	for p in $SK_PIDS; do
		wait "$p" 2>/dev/null
	done
	tgt_stop_all
	cleanup_snaa
	rm -rf "$SK_TMP"
}

ktap_header "snaa soak, ${SK_SECONDS}s"
setup_snaa
trap 'sk_cleanup; exit 130' INT TERM
trap sk_cleanup EXIT
trap '' PIPE
for d in /dev/infiniband/uverbs*; do
	chmod 0666 "$d"
done
SK_DMESG0=$(dmesg | wc -l)

# Tighter detectors: a soft lockup after 10 s (2 x watchdog_thresh), a
# hung task after 60 s.
sysctl -qw kernel.watchdog_thresh=5 2>/dev/null
sysctl -qw kernel.softlockup_all_cpu_backtrace=1 2>/dev/null
sysctl -qw kernel.hung_task_timeout_secs=60 2>/dev/null
echo "# detectors: watchdog_thresh $(sysctl -n kernel.watchdog_thresh 2>/dev/null)," \
	"hung_task_timeout_secs $(sysctl -n kernel.hung_task_timeout_secs 2>/dev/null)"

ip netns exec snaa-a tc qdisc add dev veth0 root netem delay 2ms limit 100000 &&
ip netns exec snaa-b tc qdisc add dev veth1 root netem delay 2ms limit 100000 ||
	snaa_skip "tc netem is not available"

MAC1=$(ip netns exec snaa-b cat /sys/class/net/veth1/address)
tgt_start T1 --mtu 1024 --recv 64 --recv-len 4096 --size 1048576 ||
	snaa_skip "the fuzz victim did not start"
ktap_ok "setup: snaa0 <-> snaa1 with netem delay 2ms, fuzz victim ($T1_INFO)"

# abuser as an unprivileged user, as abuse.sh runs it
SK_NOBODY=$SK_TMP/nobody
snaa_nobody_wrapper "$SK_NOBODY" 65536

SK_END=$(($(date +%s) + SK_SECONDS))

# sk_fuzz_base I: the packet the mutants of round I come from.
sk_fuzz_base() {
	if [ $(($1 % 2)) = 0 ]; then
		echo "--opcode UC_RDMA_WRITE_ONLY --payload-len 512"
	else
		echo "--opcode UC_SEND_ONLY --payload-len 200"
	fi
}

# sk_loop NAME CMD...: run CMD (a shell command line) again and again
# until the end, one line per run in $SK_TMP/NAME.runs ("ok" or
# "failed"), the output of failed runs (the first 3) kept.
sk_loop() {
	sl_name=$1
	shift
	case " $SK_LANES " in
	*" $sl_name "*) ;;
	*) return 0 ;;
	esac
	(
		sl_i=0
		sl_c=$SK_TMP/$sl_name.cnt
		while [ "$(date +%s)" -lt "$SK_END" ] && [ ! -e "$SK_TMP/stop" ]; do
			sl_i=$((sl_i + 1))
			cnt_snap snaa0 "$sl_c.a0"
			cnt_snap snaa1 "$sl_c.b0"
			if SK_I=$sl_i eval "$*" >"$SK_TMP/$sl_name.out" 2>&1; then
				echo ok >>"$SK_TMP/$sl_name.runs"
			else
				echo "failed $?" >>"$SK_TMP/$sl_name.runs"
				cnt_snap snaa0 "$sl_c.a1"
				cnt_snap snaa1 "$sl_c.b1"
				if [ "$(grep -c failed "$SK_TMP/$sl_name.runs")" -le 3 ]; then
					{
						echo "--- $sl_name run $sl_i:"
						grep -B 8 -E '^(# )?not ok|BAD:' \
							"$SK_TMP/$sl_name.out" | head -n 60
						tail -n 5 "$SK_TMP/$sl_name.out"
						# what both devices counted during the
						# run (every lane's packets, not only
						# this one's)
						for d in a b; do
							echo "counters of snaa$([ $d = a ] && echo 0 || echo 1) during the run:" \
								"$(cnt_changed "$sl_c.${d}0" "$sl_c.${d}1")"
						done
					} >>"$SK_TMP/$sl_name.failed"
				fi
			fi
		done
	) &
	SK_PIDS="$SK_PIDS $!"
}

sk_loop rc 'timeout -k 10 600 "$RC_TEST" --dev-a snaa0 --dev-b snaa1 \
	--tests rc.stream --stream 16777216 --ack-timeout 18 --netem-expect any'
sk_loop uc 'timeout -k 10 600 "$UC_TEST" --dev-a snaa0 --dev-b snaa0 \
	--timeout 120 --sizes 0,1,64,mtu-1,mtu,mtu+1,64K'
# SNAA_TIME_SCALE=16 gives verbs_test's RC QPs a local ACK timeout of 1 s,
# as rc_test's: behind the rc loop's stream the link's queue delays a
# packet by more than eight of the default 67 ms timeouts, and pair.mw's
# QPs then rightly ended in RETRY_EXC_ERR.
sk_loop ud 'SNAA_TIME_SCALE=16 timeout -k 10 600 "$VERBS_TEST" \
	--dev-a snaa0 --dev-b snaa1 --tests pair.address_handles,pair.mw'
sk_loop fuzzer 'ip netns exec snaa-a timeout -k 10 600 "$RAWPKT" \
	--dev veth0 --dmac "$MAC1" --saddr 198.18.0.1 --daddr 198.18.0.2 \
	--qpn "$(field qpn "$T1_INFO")" --psn "$(field psn "$T1_INFO")" \
	--rkey "$(field rkey "$T1_INFO")" --va "$(field va "$T1_INFO")" \
	$(sk_fuzz_base "$SK_I") --mutate 2000 --mutate-max-len 4200 \
	--seed "$SK_I"'
sk_loop abuser 'timeout -k 10 400 "$SK_NOBODY" "$ABUSER" --dev snaa0 \
	--dev2 snaa1 --seed "$((1000 + SK_I))" --seconds 120 \
	--iterations 100000000'

# progress every five minutes
sk_t0=$(date +%s)
sk_next=$((sk_t0 + 300))
while [ "$(date +%s)" -lt "$SK_END" ]; do
	sleep 10
	sk_now=$(date +%s)
	if [ "$sk_now" -ge "$sk_next" ]; then
		sk_next=$((sk_next + 300))
		sk_line=
		for l in $SK_LANES; do
			sk_ok=$(grep -c '^ok' "$SK_TMP/$l.runs" 2>/dev/null)
			sk_bad=$(grep -c '^failed' "$SK_TMP/$l.runs" 2>/dev/null)
			sk_line="$sk_line $l ${sk_ok:-0}/${sk_bad:-0}"
		done
		echo "# $(((sk_now - sk_t0) / 60)) min: runs passed/failed:$sk_line"
	fi
done
# the runs in progress end on their own (each has its time limit)
touch "$SK_TMP/stop"
for p in $SK_PIDS; do
	wait "$p"
done
SK_PIDS=

for l in $SK_LANES; do
	sk_ok=$(grep -c '^ok' "$SK_TMP/$l.runs" 2>/dev/null)
	sk_bad=$(grep -c '^failed' "$SK_TMP/$l.runs" 2>/dev/null)
	if [ "${sk_ok:-0}" -gt 0 ] && [ "${sk_bad:-0}" = 0 ]; then
		ktap_ok "$l: $sk_ok runs, every one passed"
	else
		ktap_fail "$l: every run passed (at least one)" \
			"$sk_ok passed, $sk_bad failed" \
			"$(cat "$SK_TMP/$l.failed" 2>/dev/null)"
	fi
done

# the fuzz victim still answers: reset, one receive WR, a valid SEND
sk_st=$(tgt_cmd T1 state)
sk_reset=$(tgt_cmd T1 'reset 0x500')
sk_before=$(tgt_cmd T1 poll | sed -n 's/^cqes=//p')
sk_post=$(tgt_cmd T1 'post 1')
ip netns exec snaa-a "$RAWPKT" --dev veth0 --dmac "$MAC1" \
	--saddr 198.18.0.1 --daddr 198.18.0.2 --qpn "$(field qpn "$T1_INFO")" \
	--psn 0x500 --opcode UC_SEND_ONLY_WITH_IMMEDIATE --imm 0xf0f0 \
	--payload-len 32 >/dev/null 2>&1
sk_p=
for _ in $(seq 50); do
	sk_p=$(tgt_cmd T1 poll)
	[ "$(printf '%s\n' "$sk_p" | sed -n 's/^cqes=//p')" -gt "${sk_before:-0}" ] &&
		break
	sleep 0.2
done
if printf '%s\n' "$sk_st" | grep -qE '^state=(RTR|ERR)$' &&
   [ "$sk_reset" = "state=RTR" ] && [ "$sk_post" = "posted=1" ] &&
   printf '%s\n' "$sk_p" | tail -n 1 |
	grep -q 'status=0(success) opcode=128(recv) byte_len=32 imm=0x0000f0f0 '; then
	ktap_ok "the fuzz victim answers, and after a reset a valid SEND completes its new receive WR"
else
	ktap_fail "the fuzz victim answers, and after a reset a valid SEND completes its new receive WR" \
		"$sk_st / $sk_reset / $sk_post" "$sk_p"
fi

sk_dmesg=$(dmesg | tail -n "+$((SK_DMESG0 + 1))" | grep -E "$SNAA_DMESG_BAD")
if [ -z "$sk_dmesg" ]; then
	ktap_ok "dmesg: no lockup, stall, hung task or kernel report"
else
	ktap_fail "dmesg: no lockup, stall, hung task or kernel report" \
		"$(printf '%s\n' "$sk_dmesg" | head -n 40)"
fi

tgt_stop_all
cleanup_snaa
if rmmod snaa 2>"$SK_TMP/rmmod.err"; then
	ktap_ok "rmmod snaa after the soak"
else
	ktap_fail "rmmod snaa after the soak" "$(cat "$SK_TMP/rmmod.err")"
fi
rm -rf "$SK_TMP"
trap - EXIT INT TERM
ktap_finish
