#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Malformed-packet test of the snaa receive path.  rawpkt (rawpkt.c) sends
# hand-made RoCEv2 frames from a netdev with no RDMA device to a UC QP of
# uc_target (uc_target.c) on an snaa device; every case reads the
# device's counters before and after and asserts the exact change: the
# expected drop counter +1, every other drop counter unchanged, rx_packets
# (packets with a good ICRC, Documentation/counters.rst) +1 or +0.  At the
# end the targets' memory must be untouched except where the valid
# control packets wrote (checked byte for byte), and no completion may
# exist except the documented local length error and its flush.  Runs as
# root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 600 -- sh selftests/snaa/hostile/malformed.sh
#
#  +- init namespace: no RDMA device ---+
#  | rawpkt -> veth0 198.18.0.1/24      |
#  +------------||----------------------+
#               || veth pair
#  +------------||- ns snaa-m -----------------------------------+
#  | snaa1 - veth1 198.18.0.2/24                                 |
#  |   T1 uc_target: UC QP, MR 64 KiB, 4 receive WRs, MTU 256    |
#  |   T2 uc_target: UC QP, MR 64 KiB, no receive WR (later 2)   |
#  |   T3 uc_target: UC QP without REMOTE_WRITE access           |
#  |   T4 uc_target: UC QP, MTU 256, one 512-byte receive WR     |
#  |   veth1 also has 198.18.0.3, which is no QP's address        |
#  +-------------------------------------------------------------+
#
# T1 MR layout: malformed writes aim at offsets below 0x8000 (must stay
# untouched); 0x8000..0x80ff is written by the valid WRITE_FIRST of the
# sequence cases (0x8100..0x81ff, its LAST, must not be); 0xf000..0xf03f
# by the final valid WRITE_ONLY (the control case).  Payload bytes are
# >= 0x80 and the fill pattern < 0x80, so uc_target's "changed" count is
# exact.
#
# Output: KTAP.  Exit status: 0 iff every check passed, 1 otherwise,
# 2 usage error, 4 (skip) if the setup is impossible here.
#
# Environment: RAWPKT=/path/to/rawpkt, UC_TARGET=/path/to/uc_target to use
# prebuilt binaries; else selftests/snaa/rawpkt (uc_target) if up to date
# (make -C selftests/snaa), else built into a temporary directory: lib.sh's
# snaa_build.
#
# Features: hostile, wire
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

NS=snaa-m
DEV=snaa1
ADDR0=198.18.0.1
ADDR1=198.18.0.2
ADDR_OTHER=198.18.0.3	# on veth1 too, but in no QP's path
ADDR_SPOOF=198.18.0.9	# on no interface: a forged source
CNT_DIR=/sys/class/infiniband/$DEV/ports/1/hw_counters

snaa_no_args "$@"

if [ "${SNAA_VM:-}" != 1 ] && [ "${MF_ALLOW_HOST:-}" != 1 ]; then
	echo "$0: not in the test VM (SNAA_VM is not 1); run it as" \
		"selftests/vm/run -- sh $0" >&2
	snaa_skip "not in the test VM"
fi
[ "$(id -u)" = 0 ] || { echo "$0: must run as root" >&2; exit 2; }

MF_TMP=$(mktemp -d) || snaa_skip "mktemp failed"

# ---- build ---------------------------------------------------------------

snaa_build RAWPKT rawpkt
snaa_build UC_TARGET uc_target

# ---- setup and cleanup -----------------------------------------------------

TGT_NS=$NS
TGT_DEV=$DEV
TGT_DGID=$ADDR0
TGT_TMP=$MF_TMP

mf_cleanup() {
	trap - EXIT INT TERM
	tgt_stop_all
	ip netns exec "$NS" rdma link delete "$DEV" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip link del veth0 2>/dev/null
	rm -rf "$MF_TMP"
}

trap 'mf_cleanup; exit 130' INT TERM
trap 'mf_cleanup' EXIT
# A uc_target that died must not kill us through SIGPIPE.
trap '' PIPE

mf_has_gid() {
	ibv_devinfo -v -d "$DEV" 2>/dev/null |
		grep -q "[[:space:]]::ffff:$ADDR1, RoCE v2\$"
}

mf_setup() {
	snaa_install_module
	snaa_use_build_provider
	modprobe snaa || return 1
	modprobe veth || return 1
	ip netns add "$NS" &&
	ip link add veth0 type veth peer name veth1 &&
	ip link set veth1 netns "$NS" &&
	ip addr add "$ADDR0/24" dev veth0 &&
	ip link set veth0 up &&
	ip -n "$NS" addr add "$ADDR1/24" dev veth1 &&
	ip -n "$NS" addr add "$ADDR_OTHER/24" dev veth1 &&
	ip -n "$NS" link set veth1 up &&
	ip -n "$NS" link set lo up || return 1
	MAC0=$(cat /sys/class/net/veth0/address) &&
	MAC1=$(ip netns exec "$NS" cat /sys/class/net/veth1/address) || return 1
	ip neigh replace "$ADDR1" lladdr "$MAC1" dev veth0 nud permanent &&
	ip neigh replace "$ADDR_OTHER" lladdr "$MAC1" dev veth0 \
		nud permanent &&
	ip -n "$NS" neigh replace "$ADDR0" lladdr "$MAC0" dev veth1 \
		nud permanent || return 1
	ip netns exec "$NS" rdma link add "$DEV" type snaa netdev veth1 ||
		return 1
	wait_for 10 mf_has_gid || return 1
	[ -d "$CNT_DIR" ] || return 1
}

ktap_header "snaa malformed packets"
mf_setup || snaa_skip "setup failed (snaa module, veth, namespace $NS, or no" \
	"GID ::ffff:$ADDR1 on $DEV)"
DMESG_LINES=$(dmesg | wc -l)

# ---- counters ----------------------------------------------------------------

# snap FILE: "name value" for every counter of $DEV.
snap() {
	cnt_snap "$DEV" "$1"
}

# deltas: "name delta" per counter, from $MF_TMP/before and $MF_TMP/after.
deltas() {
	awk 'NR == FNR { b[$1] = $2; next } { print $1, $2 - b[$1] }' \
		"$MF_TMP/before" "$MF_TMP/after"
}

# want_of NAME EXPECT: the expected delta of counter NAME (0 if unnamed).
# EXPECT: "name=N ..."; the pseudo counter drop_sum=N is the sum of all
# drop_* counters (their individual values are then not checked).
# reached EXPECT: true if all named deltas (and drop_sum) have been reached.
reached() {
	deltas | awk -v ex="$1" '
		BEGIN { n = split(ex, a, " ")
			for (i = 1; i <= n; i++) { split(a[i], kv, "="); w[kv[1]] = kv[2] } }
		{ d[$1] = $2; if ($1 ~ /^drop_/) sum += $2 }
		END { for (k in w) {
			v = (k == "drop_sum") ? sum : d[k]
			if (v < w[k]) exit 1 }
		      exit 0 }'
}

# check_deltas EXPECT: print mismatches (nothing if all as expected).
check_deltas() {
	deltas | awk -v ex="$1" '
		BEGIN { n = split(ex, a, " ")
			for (i = 1; i <= n; i++) { split(a[i], kv, "="); w[kv[1]] = kv[2] } }
		{ d[$1] = $2; if ($1 ~ /^drop_/) sum += $2 }
		END {
			for (k in d) {
				if (k !~ /^drop_/ && k != "rx_packets" && !(k in w))
					continue
				if (k ~ /^drop_/ && ("drop_sum" in w)) continue
				want = (k in w) ? w[k] : 0
				if (d[k] != want)
					printf "%s: delta %d, want %d\n", k, d[k], want
			}
			if (("drop_sum" in w) && sum != w["drop_sum"])
				printf "sum of drop_*: delta %d, want %d\n", sum, w["drop_sum"]
			for (k in w)
				if (k != "drop_sum" && !(k in d))
					printf "%s: no such counter\n", k
		}'
}

# nonzero_deltas: the counters that changed, for diagnostics.
nonzero_deltas() {
	cnt_changed "$MF_TMP/before" "$MF_TMP/after"
}

# settle EXPECT: wait until the expected counter changes happened (the
# veth delivers in softirq, after rawpkt returns), then a little longer
# for anything unexpected.
settle() {
	if [ -z "$1" ]; then
		sleep 1
	else
		tries=100
		while :; do
			snap "$MF_TMP/after"
			reached "$1" && break
			tries=$((tries - 1))
			[ "$tries" -gt 0 ] || break
			sleep 0.1
		done
		sleep 0.3
	fi
	snap "$MF_TMP/after"
}

# ---- cases ---------------------------------------------------------------------

# send NAME EXPECT RAWPKT-ARGS...: one case.  EXPECT lists the counter
# deltas ("rx_packets=1 drop_bad_rkey=1"); every drop_* counter and
# rx_packets not named must stay unchanged.
send() {
	name=$1
	exp=$2
	shift 2
	snap "$MF_TMP/before"
	if ! out=$("$RAWPKT" --dev veth0 --dmac "$MAC1" --saddr "$ADDR0" \
			--daddr "$ADDR1" "$@" 2>&1); then
		ktap_fail "$name" "rawpkt $* failed:" "$out"
		return 1
	fi
	settle "$exp"
	bad=$(check_deltas "$exp")
	if [ -z "$bad" ]; then
		ktap_ok "$name"
	else
		ktap_fail "$name" "rawpkt $*" "expected: $exp" "$bad" \
			"changed: $(nonzero_deltas)"
		return 1
	fi
}

# Cases that reach the UC responder set its expected PSN to their PSN + 1
# (IBA 9.7.5.1.4); the script keeps T1's in P1 so that MIDDLE/LAST
# packets are judged on sequence, not on a gap.
RESPONDER_DROPS='drop_psn_gap|drop_bad_sequence|drop_bad_rkey|drop_access|drop_va_out_of_mr|drop_length|drop_no_recv_wqe'

# t1 NAME EXPECT ARGS...: a case against T1 (QPN and PSN filled in);
# EXPECT "accept" means rx_packets=1 and no drop.
t1() {
	name=$1
	exp=$2
	shift 2
	[ "$exp" = accept ] && exp="rx_packets=1"
	send "$name" "$exp" --qpn "$Q1" --psn "$P1" "$@"
	if [ "$exp" = "rx_packets=1" ] ||
	   printf '%s\n' "$exp" | grep -qE "$RESPONDER_DROPS"; then
		P1=$(((P1 + 1) & 0xffffff))
	fi
}

hex() {
	printf '0x%x' "$1"
}

# ---- targets -------------------------------------------------------------------

tgt_start T1 --mtu 256 --recv 4 --recv-len 64 --psn 0x100 ||
	{ ktap_fail "start uc_target T1"; ktap_finish; }
tgt_start T2 --mtu 1024 --recv 0 --recv-len 64 --psn 0 ||
	{ ktap_fail "start uc_target T2"; ktap_finish; }
tgt_start T3 --mtu 1024 --recv 0 --qp-no-remote-write ||
	{ ktap_fail "start uc_target T3"; ktap_finish; }
tgt_start T4 --mtu 256 --recv 1 --recv-len 512 --psn 0x300 ||
	{ ktap_fail "start uc_target T4"; ktap_finish; }
tgt_start T5 --rc --mtu 1024 --recv 0 --psn 0x500 ||
	{ ktap_fail "start uc_target T5 (RC)"; ktap_finish; }
ktap_ok "five uc_target QPs (four UC, one RC) in RTR on $DEV"
echo "# T1: $T1_INFO"
echo "# T2: $T2_INFO"
echo "# T3: $T3_INFO"
echo "# T4: $T4_INFO"
echo "# T5: $T5_INFO"

Q1=$(field qpn "$T1_INFO")
R1=$(field rkey "$T1_INFO")
V1=$(field va "$T1_INFO")
L1=$(field len "$T1_INFO")
P1=$(field psn "$T1_INFO")
RB1=$(field rbuf_key "$T1_INFO")
RBV1=$(field rbuf_va "$T1_INFO")
Q2=$(field qpn "$T2_INFO")
R2=$(field rkey "$T2_INFO")
V2=$(field va "$T2_INFO")
Q3=$(field qpn "$T3_INFO")
Q4=$(field qpn "$T4_INFO")
R3=$(field rkey "$T3_INFO")
Q5=$(field qpn "$T5_INFO")
R5=$(field rkey "$T5_INFO")
V5=$(field va "$T5_INFO")
P5=$(field psn "$T5_INFO")
V3=$(field va "$T3_INFO")

# Packets leave with DF set: a path MTU veth1 (MTU 1500, so RoCE MTU
# 1024) cannot carry is refused at INIT->RTR, not accepted and lost later.
for m in 2048 4096; do
	out=$(ip netns exec "$NS" "$UC_TARGET" --dev "$DEV" --dgid "$ADDR0" \
		--mtu "$m" --recv 0 </dev/null 2>&1)
	rc=$?
	if [ "$rc" != 0 ] &&
	   printf '%s\n' "$out" | grep -q 'INIT->RTR: Invalid argument'; then
		ktap_ok "path MTU $m on a 1500-byte netdev: INIT->RTR fails with EINVAL"
	else
		ktap_fail "path MTU $m on a 1500-byte netdev: INIT->RTR fails with EINVAL" \
			"uc_target exit $rc:" "$out"
	fi
done

# The fill patterns are intact before anything is sent.
for t in T1 T2 T3 T4; do
	d=$(tgt_cmd "$t" digest)
	check_match "$t memory holds the fill pattern before the test" "$d" \
		'^mr len=[0-9]+ .* changed=0 '
done

# A well-formed WRITE_ONLY to T1 at offset 0 of the MR (below 0x8000,
# where nothing may land), 64 bytes: the cases mutate it.
W1="--opcode UC_RDMA_WRITE_ONLY --rkey $R1 --va $V1 --payload-len 64"

# ---- encapsulation, length, ICRC ------------------------------------------------
# A WRITE_ONLY of 64 bytes is BTH 12 + RETH 16 + 64 + ICRC 4 = 96 bytes.

# shellcheck disable=SC2086 # $W1 is a list of arguments
{
t1 "truncated: UDP payload 8 bytes, shorter than the BTH" \
	"drop_truncated=1" $W1 --truncate 88
t1 "truncated: BTH only, no ICRC (12 bytes)" \
	"drop_truncated=1" $W1 --truncate 84
t1 "truncated: BTH + valid ICRC, no RETH (16 bytes)" \
	"rx_packets=1 drop_truncated=1" $W1 --payload-len 0 --cut 16
t1 "truncated: half a RETH + valid ICRC (24 bytes)" \
	"rx_packets=1 drop_truncated=1" $W1 --payload-len 0 --cut 8
t1 "truncated: WRITE_ONLY_WITH_IMMEDIATE without ImmDt, valid ICRC" \
	"rx_packets=1 drop_truncated=1" $W1 --payload-len 0 \
	--opcode UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE --cut 4
t1 "missing ICRC: last 4 bytes cut" \
	"drop_bad_icrc=1" $W1 --truncate 4
t1 "bad ICRC" \
	"drop_bad_icrc=1" $W1 --bad-icrc
t1 "UDP length 4 bytes short (ICRC no longer at the end)" \
	"drop_bad_icrc=1" $W1 --udp-len-lie -4
t1 "IPv4 options (IHL 6)" \
	"drop_malformed=1" $W1 --ip-options 1
}

# UDP length beyond the datagram: the UDP layer drops it, snaa sees
# nothing; the namespace's Udp InErrors proves the frame arrived.
udp_inerrors() {
	# shellcheck disable=SC2016 # awk program
	ip netns exec "$NS" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++)
		if ($i == "InErrors") c = i; h = 1 } else print $c }' \
		/proc/net/snmp
}
e0=$(udp_inerrors)
# shellcheck disable=SC2086
t1 "UDP length 8 bytes beyond the datagram: not for snaa" "" $W1 \
	--udp-len-lie 8
check_eq "UDP length beyond the datagram: counted by UDP (InErrors +1)" \
	"$(($(udp_inerrors) - e0))" 1

# ---- addressing, P_Key ---------------------------------------------------------

# shellcheck disable=SC2086
{
t1 "unknown destination QPN" \
	"rx_packets=1 drop_unknown_qpn=1" $W1 --qpn 0xabcdef
t1 "destination QPN 0" \
	"rx_packets=1 drop_bad_qpn=1" $W1 --qpn 0
t1 "multicast QPN on UC" \
	"rx_packets=1 drop_bad_qpn=1" $W1 --qpn 0xffffff
t1 "P_Key mismatch" \
	"rx_packets=1 drop_bad_pkey=1" $W1 --pkey 0x1234


# ---- IP addresses: a connected QP takes packets from its path only --------------
# T1's path is ADDR1 -> ADDR0.  A dropped packet must leave the PSN state
# alone: after a forged WRITE_FIRST, a WRITE_MIDDLE at the same PSN is a
# MIDDLE without FIRST (drop_bad_sequence), not one after a gap
# (drop_psn_gap, had the FIRST moved the expected PSN).
t1 "forged source address $ADDR_SPOOF" \
	"rx_packets=1 drop_bad_address=1" --opcode UC_RDMA_WRITE_FIRST \
	--rkey "$R1" --va "$V1" --dma-len 512 --payload-len 256 \
	--saddr "$ADDR_SPOOF"
t1 "after the forged WRITE_FIRST: WRITE_MIDDLE is out of sequence, not after a PSN gap" \
	"rx_packets=1 drop_bad_sequence=1" --opcode UC_RDMA_WRITE_MIDDLE \
	--payload-len 256
t1 "destination address $ADDR_OTHER: a local address, not the QP's" \
	"rx_packets=1 drop_bad_address=1" $W1 --daddr "$ADDR_OTHER"

# The same for an RC QP (T5, in RTR): a forged request never reaches the
# responder, so the genuine one at the same PSN is new, not a duplicate
# of it (rc_duplicate_requests stays), and is ACKed.
W5="--rkey $R5 --va $V5 --dma-len 64 --payload-len 64 --ackreq"
t5() {
	send "$1" "$2" --qpn "$Q5" --psn "$P5" --opcode RC_RDMA_WRITE_ONLY $W5 \
		"$3" "$4"
}
t5 "RC: forged source address $ADDR_SPOOF" \
	"rx_packets=1 drop_bad_address=1 rc_duplicate_requests=0" \
	--saddr "$ADDR_SPOOF"
t5 "RC: destination address $ADDR_OTHER" \
	"rx_packets=1 drop_bad_address=1 rc_duplicate_requests=0" \
	--daddr "$ADDR_OTHER"
t5 "RC: the genuine WRITE at that PSN is a new request, ACKed" \
	"rx_packets=1 rc_duplicate_requests=0 rc_acks_sent=1" --fill 0x5a

# ---- opcodes and BTH fields --------------------------------------------------------

t1 "RC opcode (RC_RDMA_WRITE_ONLY) to a UC QP" \
	"rx_packets=1 drop_opcode_for_qp_type=1" $W1 \
	--opcode RC_RDMA_WRITE_ONLY
t1 "RC opcode (RC_RDMA_READ_REQUEST) to a UC QP" \
	"rx_packets=1 drop_opcode_for_qp_type=1" $W1 --payload-len 0 \
	--dma-len 64 --opcode RC_RDMA_READ_REQUEST
t1 "UD opcode (UD_SEND_ONLY) to a UC QP" \
	"rx_packets=1 drop_opcode_for_qp_type=1" --opcode UD_SEND_ONLY \
	--payload-len 16
t1 "reserved UC opcode 0x2c" \
	"rx_packets=1 drop_bad_opcode=1" --opcode 0x2c
t1 "reserved RC opcode 0x18" \
	"rx_packets=1 drop_bad_opcode=1" --opcode 0x18
t1 "manufacturer-specific opcode 0xc0" \
	"rx_packets=1 drop_unsupported_opcode=1" --opcode 0xc0
t1 "CNP (0x81) to a QP" \
	"rx_packets=1 drop_unsupported_opcode=1" --opcode CNP
t1 "BTH TVer 1" \
	"rx_packets=1 drop_bad_tver=1" $W1 --tver 1
t1 "pad count on WRITE_FIRST (not the last packet)" \
	"rx_packets=1 drop_bad_pad=1" $W1 --opcode UC_RDMA_WRITE_FIRST \
	--payload-len 256 --dma-len 512 --pad 1
t1 "pad count on SEND_MIDDLE" \
	"rx_packets=1 drop_bad_pad=1" --opcode UC_SEND_MIDDLE \
	--payload-len 256 --pad 2
t1 "pad count 3 on an empty SEND_ONLY" \
	"rx_packets=1 drop_pad_exceeds_payload=1" --opcode UC_SEND_ONLY \
	--pad-count 3
t1 "payload + pad not a multiple of 4" \
	"rx_packets=1 drop_unaligned_length=1" $W1 --payload-len 63 --pad 0
t1 "WRITE_FIRST payload not an IB MTU (128 bytes)" \
	"rx_packets=1 drop_bad_length=1" $W1 --opcode UC_RDMA_WRITE_FIRST \
	--payload-len 128 --dma-len 512
t1 "empty WRITE_LAST" \
	"rx_packets=1 drop_bad_length=1" --opcode UC_RDMA_WRITE_LAST
t1 "payload on an RC ACK" \
	"rx_packets=1 drop_bad_length=1" --opcode RC_ACKNOWLEDGE \
	--payload-len 4
t1 "WRITE_ONLY of 512 bytes on a 256-byte path MTU" \
	"rx_packets=1 drop_mtu_exceeded=1" $W1 --payload-len 512
t1 "WRITE_FIRST of 512 bytes on a 256-byte path MTU" \
	"rx_packets=1 drop_mtu_exceeded=1" $W1 --opcode UC_RDMA_WRITE_FIRST \
	--payload-len 512 --dma-len 1024

# ---- R_Key, bounds, lengths ----------------------------------------------------------

t1 "R_Key with a wrong key byte" \
	"rx_packets=1 drop_bad_rkey=1" $W1 --rkey "$(hex $((R1 ^ 1)))"
t1 "R_Key of no MR" \
	"rx_packets=1 drop_bad_rkey=1" $W1 --rkey "$(hex $((R1 + 0x10000)))"
t1 "R_Key of an MR in another PD (T2's)" \
	"rx_packets=1 drop_bad_rkey=1" $W1 --rkey "$R2" --va "$V2"
t1 "R_Key of an MR without REMOTE_WRITE (T1's receive buffer)" \
	"rx_packets=1 drop_access=1" $W1 --rkey "$RB1" --va "$RBV1"
t1 "VA 64 bytes before the MR" \
	"rx_packets=1 drop_va_out_of_mr=1" $W1 --va "$(hex $((V1 - 64)))"
t1 "VA just after the MR" \
	"rx_packets=1 drop_va_out_of_mr=1" $W1 --va "$(hex $((V1 + L1)))"
t1 "VA straddling the end of the MR" \
	"rx_packets=1 drop_va_out_of_mr=1" $W1 --va "$(hex $((V1 + L1 - 32)))"
t1 "VA + length wrapping around 2^64" \
	"rx_packets=1 drop_va_out_of_mr=1" $W1 --va 0xffffffffffffffe0
t1 "RETH DMA length larger than the MR (WRITE_FIRST)" \
	"rx_packets=1 drop_va_out_of_mr=1" $W1 --opcode UC_RDMA_WRITE_FIRST \
	--payload-len 256 --dma-len "$((L1 + 256))"
t1 "WRITE_ONLY payload shorter than the RETH DMA length" \
	"rx_packets=1 drop_length=1" $W1 --dma-len 128
t1 "WRITE_ONLY payload longer than the RETH DMA length" \
	"rx_packets=1 drop_length=1" $W1 --dma-len 32
# IBA 9.4.4: no R_Key check for a 0-byte RDMA WRITE.
t1 "0-byte WRITE_ONLY with a bad R_Key is accepted" \
	accept $W1 --payload-len 0 --rkey 0
}
send "QP without REMOTE_WRITE access (T3)" \
	"rx_packets=1 drop_access=1" --qpn "$Q3" --opcode UC_RDMA_WRITE_ONLY \
	--rkey "$R3" --va "$V3" --payload-len 64

# ---- message sequence, PSN ------------------------------------------------------------

# shellcheck disable=SC2086
{
t1 "WRITE_MIDDLE without FIRST" \
	"rx_packets=1 drop_bad_sequence=1" --opcode UC_RDMA_WRITE_MIDDLE \
	--payload-len 256
t1 "WRITE_LAST without FIRST" \
	"rx_packets=1 drop_bad_sequence=1" --opcode UC_RDMA_WRITE_LAST \
	--payload-len 64
t1 "WRITE_LAST_WITH_IMMEDIATE without FIRST" \
	"rx_packets=1 drop_bad_sequence=1" \
	--opcode UC_RDMA_WRITE_LAST_WITH_IMMEDIATE --payload-len 64 --imm 7
t1 "SEND_LAST without FIRST" \
	"rx_packets=1 drop_bad_sequence=1" --opcode UC_SEND_LAST \
	--payload-len 16

SEQ_FIRST="--opcode UC_RDMA_WRITE_FIRST --rkey $R1 --va $(hex $((V1 + 0x8000))) --dma-len 512 --payload-len 256"
t1 "sequence: WRITE_FIRST at MR offset 0x8000 (valid)" accept $SEQ_FIRST
t1 "sequence: SEND_MIDDLE inside a WRITE" \
	"rx_packets=1 drop_bad_sequence=1" --opcode UC_SEND_MIDDLE \
	--payload-len 256
t1 "sequence: WRITE_FIRST at MR offset 0x8000 again (valid)" accept \
	$SEQ_FIRST
P1=$(((P1 + 1) & 0xffffff))	# skip a PSN: the next packet follows a gap
t1 "PSN gap: WRITE_LAST after a lost packet" \
	"rx_packets=1 drop_psn_gap=1" --opcode UC_RDMA_WRITE_LAST \
	--payload-len 256
}

# ---- receive WQEs (T2: none posted) -------------------------------------------------------

W2="--qpn $Q2 --rkey $R2 --va $V2 --payload-len 64"
# shellcheck disable=SC2086
{
send "WRITE_ONLY_WITH_IMMEDIATE without a receive WR" \
	"rx_packets=1 drop_no_recv_wqe=1" $W2 --imm 0x12345678 \
	--opcode UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE
send "SEND_ONLY without a receive WR" \
	"rx_packets=1 drop_no_recv_wqe=1" $W2 --opcode UC_SEND_ONLY
send "SEND_ONLY_WITH_IMMEDIATE without a receive WR" \
	"rx_packets=1 drop_no_recv_wqe=1" $W2 --imm 1 \
	--opcode UC_SEND_ONLY_WITH_IMMEDIATE
}

# ---- garbage ------------------------------------------------------------------------------

GARBAGE_N=200
send "$GARBAGE_N random UDP payloads (0..256 bytes, seed 1): all dropped" \
	"drop_sum=$GARBAGE_N" --garbage "$GARBAGE_N" --seed 1 \
	--garbage-max-len 256
FUZZ_N=300
send "$FUZZ_N random packets with a valid ICRC to T2 (seed 2): all dropped" \
	"rx_packets=$FUZZ_N drop_sum=$FUZZ_N" --garbage "$FUZZ_N" --seed 2 \
	--garbage-max-len 300 --garbage-icrc --qpn "$Q2"
check_eq "T2 still in RTR after the fuzzing" "$(tgt_cmd T2 state)" "state=RTR"

# ---- SEND longer than the receive WR (T2) ------------------------------------------------
# Documentation/verbs.rst: the WQE completes with IBV_WC_LOC_LEN_ERR and
# the QP goes to the error state, which flushes the other receive WR.

check_eq "T2: post 2 receive WRs of 64 bytes" "$(tgt_cmd T2 'post 2')" \
	"posted=2"
# shellcheck disable=SC2086
send "SEND_ONLY of 128 bytes into a 64-byte receive WR" \
	"rx_packets=1 drop_length=1" $W2 --payload-len 128 \
	--opcode UC_SEND_ONLY
# The flush may come a little after the error completion.
tries=50
while :; do
	T2_POLL=$(tgt_cmd T2 poll)
	c=$(printf '%s\n' "$T2_POLL" | sed -n 's/^cqes=//p')
	[ "${c:-0}" -ge 2 ] && break
	tries=$((tries - 1))
	[ "$tries" -gt 0 ] || break
	sleep 0.1
done
printf '%s\n' "$T2_POLL" | sed 's/^/# T2 /'
check_match "length error: first receive WR completes with LOC_LEN_ERR" \
	"$T2_POLL" '^cqe wr_id=0 status=1\('
check_match "length error: the other receive WR is flushed" \
	"$T2_POLL" '^cqe wr_id=1 status=5\('
check_match "length error: exactly these two completions" "$T2_POLL" \
	'^cqes=2$'
check_eq "length error: T2 in the error state" "$(tgt_cmd T2 state)" \
	"state=ERR"
check_match "length error: nothing written into the receive buffer" \
	"$(tgt_cmd T2 digest)" '^rbuf .* changed=0 '
# shellcheck disable=SC2086
send "WRITE_ONLY to a QP in the error state" \
	"rx_packets=1 drop_qp_state=1" $W2 --opcode UC_RDMA_WRITE_ONLY

# ---- a receive WR held across ERR and RESET (T4) ---------------------------------------
# A SEND_FIRST takes T4's only receive WR (wr_id 0) and leaves it held by
# the responder; ERR flushes it.  After RESET -> RTR and one new receive
# WR (wr_id 1), a SEND_ONLY must complete that one: the flushed WR is
# gone for good.

send "T4: SEND_FIRST of 256 bytes takes receive WR 0" "rx_packets=1" \
	--qpn "$Q4" --psn 0x300 --opcode UC_SEND_FIRST --payload-len 256
check_eq "T4: to ERR in the middle of the message" "$(tgt_cmd T4 error)" \
	"state=ERR"
T4_POLL=$(tgt_cmd T4 poll)
check_match "T4: the held receive WR 0 is flushed" "$T4_POLL" \
	'^cqe wr_id=0 status=5\('
check_match "T4: one completion so far" "$T4_POLL" '^cqes=1$'
check_eq "T4: RESET -> INIT -> RTR expecting PSN 0x400" \
	"$(tgt_cmd T4 'reset 0x400')" "state=RTR"
check_eq "T4: post receive WR 1" "$(tgt_cmd T4 'post 1')" "posted=1"
send "T4: SEND_ONLY of 64 bytes after the reset" "rx_packets=1" \
	--qpn "$Q4" --psn 0x400 --opcode UC_SEND_ONLY --payload-len 64
tries=50
while :; do
	T4_POLL=$(tgt_cmd T4 poll)
	printf '%s\n' "$T4_POLL" | grep -q '^cqes=2$' && break
	tries=$((tries - 1))
	[ "$tries" -gt 0 ] || break
	sleep 0.1
done
printf '%s\n' "$T4_POLL" | sed 's/^/# T4 /'
check_match "T4: the SEND completes receive WR 1, 64 bytes" "$T4_POLL" \
	'^cqe wr_id=1 status=0\(success\) opcode=128\(recv\) byte_len=64 '
check_match "T4: exactly two completions (no stale one for WR 0)" \
	"$T4_POLL" '^cqes=2$'
check_eq "T4: still in RTR" "$(tgt_cmd T4 state)" "state=RTR"

# ---- control: a valid WRITE_ONLY must land (last on T1) ------------------------------------

t1 "control: valid WRITE_ONLY of 64 bytes at MR offset 0xf000" accept \
	--opcode UC_RDMA_WRITE_ONLY --rkey "$R1" \
	--va "$(hex $((V1 + 0xf000)))" --payload-len 64

# ---- memory and completions ---------------------------------------------------------------

# ramp N: the default rawpkt payload of N bytes in hex.
ramp() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%02x", 128 + i % 128; print "" }'
}

check_eq "T1 MR: WRITE_FIRST bytes at 0x8000" \
	"$(tgt_cmd T1 'read 0x8000 256')" "data=$(ramp 256)"
check_eq "T1 MR: control bytes at 0xf000" \
	"$(tgt_cmd T1 'read 0xf000 64')" "data=$(ramp 64)"
T1_DUMP=$(tgt_cmd T1 dump)
echo "# T1 dump:"
printf '%s\n' "$T1_DUMP" | sed 's/^/#   /'
check_match "T1 MR: only the 256 + 64 bytes of the valid writes changed" \
	"$T1_DUMP" '^mr len=[0-9]+ .* changed=320 first=0x8000 last=0xf03f$'
check_match "T1 receive buffer untouched" "$T1_DUMP" '^rbuf .* changed=0 '
check_match "T1: no completion" "$T1_DUMP" '^cqes=0$'

T2_DUMP=$(tgt_cmd T2 dump)
echo "# T2 dump:"
printf '%s\n' "$T2_DUMP" | sed 's/^/#   /'
check_match "T2 MR untouched" "$T2_DUMP" '^mr len=[0-9]+ .* changed=0 '
check_match "T2: only the length error and its flush completed" "$T2_DUMP" \
	'^cqes=2$'

T3_DUMP=$(tgt_cmd T3 dump)
check_match "T3 MR untouched" "$T3_DUMP" '^mr len=[0-9]+ .* changed=0 '
check_match "T3: no completion" "$T3_DUMP" '^cqes=0$'

T4_DUMP=$(tgt_cmd T4 dump)
check_match "T4 receive buffer: 256 bytes in WR 0's slot, 64 in WR 1's" \
	"$T4_DUMP" '^rbuf .* changed=320 first=0x0 last=0x23f$'
check_match "T4 MR untouched" "$T4_DUMP" '^mr len=[0-9]+ .* changed=0 '

warn=$(dmesg | tail -n +"$((DMESG_LINES + 1))" |
	grep -E 'WARNING:|BUG:|Oops|Call Trace|UBSAN|KASAN|general protection')
check_eq "no kernel warning" "$warn" ""

ktap_finish
