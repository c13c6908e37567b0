#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The WCU.BUF emulation end to end: wcubuf-send (the worker, standard
# verbs) streams frames of synthetic images to wcubuf-emu (the board
# emulated on snaa: status channel in user space, ring receive with
# per-frame ACK/NACK in the kernel), userspace/libwcubuf.  Runs as root
# inside the test VM:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/wcubuf.sh
#
#  snaa <-> snaa (lib/topology.sh's setup_snaa)
#  +- ns snaa-a ---------------+      +- ns snaa-b ---------------+
#  | snaa0 - veth0 198.18.0.1  |======| snaa1 - veth1 198.18.0.2  |
#  | wcubuf-send               |      | wcubuf-emu                |
#  +---------------------------+      +---------------------------+
#  rdma_rxe worker <-> snaa emulator (lib/topology.sh's setup_interop)
#  +- init ns -----------------+      +- ns snaa-b ---------------+
#  | rxe0 - veth0 198.18.0.1   |======| snaa1 - veth1 198.18.0.2  |
#  | wcubuf-send               |      | wcubuf-emu                |
#  +---------------------------+      +---------------------------+
#
# Cases: clean streams (6-bit and 4-bit, one and several images per
# frame: exact frame and byte counts on both sides, every image verified,
# no NACK); tc netem loss / reordering / duplication / corruption on both
# link directions (every frame delivered exactly once and verified,
# retransmits counted); a small ring with a slow consumer (outside-window
# NACKs, as many window retransmits, the same NACK counts on both sides);
# four workers at once; a worker killed mid-stream (the emulator serves
# the next one); parity and ECC NACKs injected through debugfs (each
# retransmitted once); the emulator killed mid-stream (the worker gives up
# with exit 1 and says why); no emulator at all (exit 3); the worker on
# rdma_rxe; finally "rmmod snaa".
#
# Features: wcubuf, netem, interop
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$UC_HERE/../.." && pwd)}
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

WCU_DIR=$SNAA_TOP/userspace/libwcubuf
WCU_SEND=${WCU_SEND:-$WCU_DIR/wcubuf-send}
WCU_EMU=${WCU_EMU:-$WCU_DIR/wcubuf-emu}
if ! [ -x "$WCU_SEND" ] || ! [ -x "$WCU_EMU" ]; then
	snaa_skip "no wcubuf-send/wcubuf-emu (make -C userspace/libwcubuf)"
fi
uc_vm_only
uc_backlog
command -v tc >/dev/null 2>&1 || snaa_skip "tc not installed (iproute2)"

TO=198.18.0.2
LOG=$(mktemp -d)
NS_W=snaa-a	# the workers' namespace (empty: the initial one)
NS_E=snaa-b	# the emulator's
WDEV=snaa0
EDEV=snaa1
EMU_PID=
EMU_OUT=
# image sizes (seed section 4)
S6=65600
S4=32832

# gone PID: the process has exited
# shellcheck disable=SC2317 # called through wait_for
gone() {
	! kill -0 "$1" 2>/dev/null
}

# emu_start NAME ARGS...: wcubuf-emu on $EDEV in $NS_E, output in
# $LOG/emu-NAME; returns once it listens.
emu_start() {
	EMU_OUT=$LOG/emu-$1
	shift
	ip netns exec "$NS_E" "$WCU_EMU" --dev "$EDEV" "$@" >"$EMU_OUT" 2>&1 &
	EMU_PID=$!
	wait_for 30 grep -q "listening on" "$EMU_OUT" || {
		echo "# wcubuf-emu did not start:"
		sed 's/^/# /' "$EMU_OUT"
		kill -9 "$EMU_PID" 2>/dev/null
		wait "$EMU_PID" 2>/dev/null
		EMU_PID=
		return 1
	}
}

# emu_stop: SIGTERM, wait; EMU_RC its exit status, EMU_SUM its summary
emu_stop() {
	[ -n "$EMU_PID" ] || return 0
	kill -TERM "$EMU_PID" 2>/dev/null
	wait "$EMU_PID"
	EMU_RC=$?
	EMU_PID=
	EMU_SUM=$(grep '^wcubuf-emu: .* verified, ' "$EMU_OUT")
}

# send OUT TIMEOUT ARGS...: one wcubuf-send run in $NS_W to $TO; SEND_RC
# its exit status, SEND_SUM its summary line, SEND_SECS the time taken.
send() {
	o=$1
	t=$2
	shift 2
	s0=$(date +%s)
	snaa_in "$NS_W" timeout -k 5 "$t" "$WCU_SEND" --dev "$WDEV" --to "$TO" \
		"$@" >"$o" 2>&1
	SEND_RC=$?
	SEND_SECS=$(($(date +%s) - s0))
	SEND_SUM=$(grep '^wcubuf-send: [0-9]* frames, ' "$o")
}

# Fields of the summary lines.
frames_bytes() {	# LINE -> "FRAMES BYTES"
	printf '%s\n' "$1" | sed -n 's/^wcubuf-[a-z]*: \([0-9]*\) frames, \([0-9]*\) bytes.*/\1 \2/p'
}
nacks() {		# LINE -> total NACKs
	printf '%s\n' "$1" | sed -n 's/.*NACKs: \([0-9]*\) (.*/\1/p'
}
nack_bit() {		# LINE NAME -> NACKs with that event bit
	printf '%s\n' "$1" | sed -n "s/.*NACKs: [0-9]* ([^)]*\\b$2 \\([0-9]*\\).*/\\1/p"
}
retransmits() {		# LINE -> "TOTAL NACK WINDOW TIMEOUT"
	printf '%s\n' "$1" | sed -n 's/.*retransmits: \([0-9]*\) (nack \([0-9]*\), window \([0-9]*\), timeout \([0-9]*\)).*/\1 \2 \3 \4/p'
}
emu_field() {		# LINE NAME -> the number before NAME
	printf '%s\n' "$1" | sed -n "s/.* \\([0-9]*\\) $2,.*/\\1/p"
}

# stream NAME FRAMES FRAME_SIZE IMAGE EMU_ARGS -- SEND_ARGS: one worker
# against a fresh emulator with --verify.  Leaves SEND_* and EMU_* set;
# passes "NAME: worker exit 0" and "NAME: N frames, B bytes, all
# verified, delivered once" (both summaries).
stream() {
	name=$1
	n=$2
	fs=$3
	img=$4
	shift 4
	SEND_SUM= EMU_SUM= SEND_RC=- EMU_RC=- SEND_SECS=0
	ea=
	while [ "$1" != -- ]; do
		ea="$ea $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # a list of arguments
	if ! emu_start "$name" --frame-size "$fs" --verify $ea; then
		ktap_fail "$name: wcubuf-emu starts"
		return 1
	fi
	send "$LOG/send-$name" 600 --frames "$n" --frame-size "$fs" \
		--image "$img" "$@"
	emu_stop
	want="$n $((n * fs))"
	if [ "$SEND_RC" = 0 ]; then
		ktap_ok "$name: worker exit 0 in ${SEND_SECS}s"
	else
		ktap_fail "$name: worker exit 0" "exit $SEND_RC" \
			"$(cat "$LOG/send-$name")" "$(tail -n 20 "$EMU_OUT")"
	fi
	printf '%s\n' "$SEND_SUM" "$EMU_SUM" | sed 's/^/# /'
	got_s=$(frames_bytes "$SEND_SUM")
	got_e=$(frames_bytes "$EMU_SUM")
	if [ "$got_s" = "$want" ] && [ "$got_e" = "$want" ] &&
	   [ "$(emu_field "$EMU_SUM" verified)" = "$n" ] &&
	   [ "$(emu_field "$EMU_SUM" "CRC failures")" = 0 ] &&
	   [ "$(emu_field "$EMU_SUM" "image errors")" = 0 ] &&
	   [ "$EMU_RC" = 0 ]; then
		ktap_ok "$name: $n frames, $((n * fs)) bytes on both sides, all verified, delivered once"
	else
		ktap_fail "$name: $n frames, $((n * fs)) bytes on both sides, all verified, delivered once" \
			"worker: '$got_s', emulator: '$got_e' (exit $EMU_RC), want '$want'" \
			"$(tail -n 20 "$EMU_OUT")"
	fi
}

# nack_bits_le A B: every event bit's NACK count in summary line A is at
# most the count in B (the worker got no NACK that was not sent)
nack_bits_le() {
	for nb in sequence parity window rkey frame_len packet_len ebf ebp va \
		  no_sof ecc_corr ecc_uncorr; do
		nb_a=$(nack_bit "$1" $nb)
		nb_b=$(nack_bit "$2" $nb)
		[ -n "$nb_a" ] && [ -n "$nb_b" ] && [ "$nb_a" -le "$nb_b" ] ||
			return 1
	done
}

# nack_unexplained LINE: NACKs in LINE with a bit that reordering and
# the window do not explain (all but sequence, window and no_sof)
nack_unexplained() {
	printf '%s\n' "$1" | sed -n 's/.*NACKs: [0-9]* (\([^)]*\)).*/\1/p' |
		tr ',' '\n' | awk '$1 != "sequence" && $1 != "window" &&
				   $1 != "no_sof" { s += $2 } END { print s + 0 }'
}

# clean NAME ...: stream, then no NACK, no retransmit, no duplicate.
# rdma_rxe sends a QP's packets from whichever CPU its task runs on, and
# veth queues them on that CPU's backlog, so a clean link can reorder
# them: with an rxe worker (CLEAN_REORDER=1) how many NACKs there are is
# rdma_rxe's scheduling, not ours, and so is whether an answer comes
# after the worker's last ACK (when it no longer counts).  What is
# checked is that every NACK is explained: the emulator sent only NACKs
# that reordering causes (out of sequence, no SOF) or the window, the
# worker got none that was not sent, and each one cost it at most one
# retransmission of its kind: exactly one but where a timeout had the
# frame in flight twice, so that a NACK found it ACKed already.
clean() {
	name=$1
	stream "$@"
	if [ "${CLEAN_REORDER:-0}" = 0 ]; then
		# Outside-window NACKs are flow control (the reader had not
		# caught up yet), not errors: each costs one retransmission.
		win=$(nack_bit "$SEND_SUM" window)
		check_eq "$name: no NACK but outside window, one retransmit each, no duplicate" \
			"$(($(nacks "$SEND_SUM") - win)) $(retransmits "$SEND_SUM") $(nacks "$EMU_SUM") $(emu_field "$EMU_SUM" duplicates)" \
			"0 $win 0 $win 0 $win 0"
		return
	fi
	n=$(nacks "$SEND_SUM")
	nosof=$(nack_bit "$SEND_SUM" no_sof)
	win=$(nack_bit "$SEND_SUM" window)
	en=$(nacks "$EMU_SUM")
	eseq=$(nack_bit "$EMU_SUM" sequence)
	enosof=$(nack_bit "$EMU_SUM" no_sof)
	ewin=$(nack_bit "$EMU_SUM" window)
	# shellcheck disable=SC2046 # four numbers
	set -- $(retransmits "$SEND_SUM")
	if [ $# != 4 ] || [ -z "$n" ] || [ -z "$en" ]; then
		ktap_fail "$name: both summaries have NACK and retransmit counts" \
			"$SEND_SUM" "$EMU_SUM"
		return
	fi
	to=$4
	check_eq "$name: the emulator's NACKs are all explained (out of sequence, no SOF, outside the window; no SOF only out of sequence)" \
		"$(nack_unexplained "$EMU_SUM") $((eseq + ewin >= en)) $((enosof <= eseq))" \
		"0 1 1"
	if [ "$n" -le "$en" ] && nack_bits_le "$SEND_SUM" "$EMU_SUM"; then
		ktap_ok "$name: the worker got no NACK the emulator did not send ($n of $en, $nosof of $enosof no-SOF, $win of $ewin window)"
	else
		ktap_fail "$name: the worker got no NACK the emulator did not send" \
			"$SEND_SUM" "$EMU_SUM"
	fi
	# NACKs with a VA and no window bit: a retransmission each
	va=$((n - nosof - win))
	if [ "$2" -le "$va" ] && [ "$2" -ge $((va - to)) ] &&
	   [ "$3" -le "$win" ] && [ "$3" -ge $((win - to)) ]; then
		ktap_ok "$name: one retransmit per NACK with a VA ($2 of $va) and per window NACK ($3 of $win), $to timeouts"
	else
		ktap_fail "$name: one retransmit per NACK with a VA and per window NACK (fewer only by the timeouts)" \
			"$SEND_SUM" "$EMU_SUM"
	fi
	# A frame the worker sends again after its timeout may have arrived
	# meanwhile: a duplicate at the emulator; nothing else makes one.
	dups=$(emu_field "$EMU_SUM" duplicates)
	if [ "${dups:-x}" != x ] && [ "$dups" -le "$to" ]; then
		ktap_ok "$name: $dups duplicates, at most the $to timeout retransmits"
	else
		ktap_fail "$name: duplicates at most the timeout retransmits" \
			"$SEND_SUM" "$EMU_SUM"
	fi
}

# netem NAME SPEC: stream 300 frames with SPEC on both veth ends
netem() {
	name="netem $1"
	# shellcheck disable=SC2086 # netem arguments
	snaa_in "$NS_W" tc qdisc add dev veth0 root netem $2 &&
	snaa_in "$NS_E" tc qdisc add dev veth1 root netem $2 || {
		ktap_fail "$name: tc qdisc add ... netem $2"
		return
	}
	stream "$name" 300 $S6 6bit --ring-size $((64 * S6)) -- --inflight 8 \
		--timeout-ms 1000
	snaa_in "$NS_W" tc qdisc del dev veth0 root 2>/dev/null
	snaa_in "$NS_E" tc qdisc del dev veth1 root 2>/dev/null
	# shellcheck disable=SC2046 # four numbers
	set -- $(retransmits "$SEND_SUM") - - - -
	echo "# $name: $1 retransmits (nack $2, window $3, timeout $4)"
}

snaa_cases() {
	dev=$1
	# ---- clean streams ----
	clean "$dev clean 6bit, 1 image per frame" 2000 $S6 6bit \
		--ring-size $((64 * S6)) -- --inflight 16 --timeout-ms 5000
	clean "$dev clean 4bit, 3 images + 1536 zero bytes per frame" 1000 \
		$((3 * S4 + 1536)) 4bit --ring-size $((32 * (3 * S4 + 1536))) \
		-- --inflight 8 --timeout-ms 5000
	clean "$dev clean 6bit, 2 images per frame, inflight 1" 200 \
		$((2 * S6)) 6bit --ring-size $((4 * 2 * S6)) -- --inflight 1
	[ "$dev" = snaa ] || return 0

	# ---- an impaired link ----
	netem "loss 2%" "loss 2%"
	r=$(retransmits "$SEND_SUM")
	check_match "netem loss 2%: lost frames retransmitted (timeouts or NACKs)" \
		"${r%% *}" '^[1-9]'
	netem "reorder" "delay 5ms reorder 25% 50%"
	netem "duplicate 5%" "duplicate 5%"
	netem "corrupt 1%" "corrupt 1%"
	r=$(retransmits "$SEND_SUM")
	check_match "netem corrupt 1%: corrupted frames retransmitted" \
		"${r%% *}" '^[1-9]'

	# ---- parity and ECC errors (debugfs fault injection) ----
	dbg=/sys/kernel/debug/snaa/$EDEV
	[ -d /sys/kernel/debug/snaa ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -w "$dbg/wcubuf_fault_next" ]; then
		# the next 5 frames to end get parity + both ECC bits
		echo 0xc02 >"$dbg/wcubuf_fault_events"
		echo 5 >"$dbg/wcubuf_fault_next"
		stream "injected parity+ECC on 5 frames" 100 $S6 6bit \
			--ring-size $((64 * S6)) -- --inflight 8 \
			--timeout-ms 5000
		echo 0 >"$dbg/wcubuf_fault_events"
		# Outside-window NACKs are flow control (see clean()):
		# counted apart, one window retransmit each.
		win=$(nack_bit "$SEND_SUM" window)
		check_eq "injected parity+ECC: 5 NACKs with bits 1, 10, 11, 5 retransmits (nack), 5 NACKs sent, besides outside-window ones" \
			"$(($(nacks "$SEND_SUM") - win)) $(nack_bit "$SEND_SUM" parity) $(nack_bit "$SEND_SUM" ecc_corr) $(nack_bit "$SEND_SUM" ecc_uncorr) $(retransmits "$SEND_SUM") $(($(nacks "$EMU_SUM") - win))" \
			"5 5 5 5 $((5 + win)) 5 $win 0 5"
	else
		ktap_ok "injected parity+ECC # SKIP no $dbg/wcubuf_fault_next"
	fi

	# ---- a small ring, a slow consumer: outside-window NACKs ----
	stream "small ring, slow consumer" 150 $S6 6bit --ring-size $((4 * S6)) \
		--consume-delay-us 20000 -- --inflight 8 --timeout-ms 5000
	w=$(nack_bit "$SEND_SUM" window)
	# shellcheck disable=SC2046 # four numbers
	set -- $(retransmits "$SEND_SUM") - - - -
	check_match "small ring: outside-window NACKs seen by the worker" \
		"$w" '^[1-9]'
	check_eq "small ring: one window retransmit per window NACK, no other" \
		"$1 $2 $3 $4" "$w 0 $w 0"
	check_eq "small ring: NACKs sent = NACKs received (emulator/worker)" \
		"$(nacks "$EMU_SUM") $(nack_bit "$EMU_SUM" window)" \
		"$(nacks "$SEND_SUM") $w"

	# ---- four workers at once ----
	emu_start multi --frame-size $S4 --ring-size $((16 * S4)) --verify || {
		ktap_fail "4 workers: wcubuf-emu starts"
		return
	}
	pids=
	for i in 1 2 3 4; do
		snaa_in "$NS_W" timeout -k 5 600 "$WCU_SEND" --dev "$WDEV" \
			--to "$TO" --frames 250 --frame-size $S4 --image 4bit \
			--inflight 8 --timeout-ms 5000 >"$LOG/multi-$i" 2>&1 &
		pids="$pids $!"
	done
	bad=0
	for p in $pids; do
		wait "$p" || bad=$((bad + 1))
	done
	emu_stop
	printf '%s\n' "$EMU_SUM" | sed 's/^/# /'
	check_eq "4 workers at once: every worker exits 0" "$bad" 0
	[ "$bad" = 0 ] || cat "$LOG"/multi-* | sed 's/^/# /'
	check_eq "4 workers at once: 1000 frames, all verified, on 4 data channels" \
		"$(frames_bytes "$EMU_SUM") $(emu_field "$EMU_SUM" verified) $(emu_field "$EMU_SUM" "CRC failures") $(grep -c 'data channel down' "$EMU_OUT")" \
		"1000 $((1000 * S4)) 1000 0 4"

	# ---- a worker killed mid-stream: the emulator serves the next ----
	emu_start wkill --frame-size $S6 --ring-size $((16 * S6)) --verify || {
		ktap_fail "worker killed: wcubuf-emu starts"
		return
	}
	ip netns exec "$NS_W" "$WCU_SEND" --dev "$WDEV" --to "$TO" \
		--frames 1000000 --frame-size $S6 --image 6bit \
		>"$LOG/victim" 2>&1 &
	vp=$!
	wait_for 60 grep -q "data channel up" "$EMU_OUT"
	sleep 3
	kill -9 "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
	send "$LOG/after-kill" 300 --frames 100 --frame-size $S6 --image 6bit \
		--timeout-ms 5000
	alive=no
	kill -0 "$EMU_PID" 2>/dev/null && alive=yes
	emu_stop
	check_eq "worker killed mid-stream: the emulator serves a new worker" \
		"$SEND_RC $(frames_bytes "$SEND_SUM") $alive $EMU_RC" \
		"0 100 $((100 * S6)) yes 0"
	check_eq "worker killed mid-stream: the new worker's 100 frames read, no bad image" \
		"$(grep -c "data channel down: 100 frames, $((100 * S6)) bytes" "$EMU_OUT") $(emu_field "$EMU_SUM" "CRC failures") $(emu_field "$EMU_SUM" "image errors")" \
		"1 0 0"

	# ---- the emulator killed mid-stream: the worker gives up, exit 1 ----
	emu_start ekill --frame-size $S6 --ring-size $((16 * S6)) || {
		ktap_fail "emulator killed: wcubuf-emu starts"
		return
	}
	ip netns exec "$NS_W" "$WCU_SEND" --dev "$WDEV" --to "$TO" \
		--frames 1000000 --frame-size $S6 --image 6bit \
		--timeout-ms 1000 >"$LOG/orphan" 2>&1 &
	wp=$!
	wait_for 60 grep -q "data channel up" "$EMU_OUT"
	sleep 3
	kill -9 "$EMU_PID"
	wait "$EMU_PID" 2>/dev/null
	EMU_PID=
	t0=$(date +%s)
	if wait_for 60 gone "$wp"; then
		wait "$wp"
		rc=$?
	else
		kill -9 "$wp"
		rc=hang
	fi
	secs=$(($(date +%s) - t0))
	if [ "$rc" = 1 ] && grep -q "still running" "$LOG/orphan"; then
		ktap_ok "emulator killed mid-stream: worker exit 1 in ${secs}s, says why"
	else
		ktap_fail "emulator killed mid-stream: worker exit 1, says why" \
			"exit $rc after ${secs}s" "$(tail -n 5 "$LOG/orphan")"
	fi

	# ---- no emulator: no registration, exit 3 ----
	send "$LOG/noemu" 120 --frames 10 --frame-size $S6 --image 6bit
	if [ "$SEND_RC" = 3 ] && grep -q "is wcubuf-emu running" "$LOG/noemu"; then
		ktap_ok "no emulator: worker exit 3 in ${SEND_SECS}s, says why"
	else
		ktap_fail "no emulator: worker exit 3, says why" \
			"exit $SEND_RC" "$(cat "$LOG/noemu")"
	fi
}

uc_backlog
cleanup_all() {
	emu_stop 2>/dev/null
	cleanup_snaa
	cleanup_interop 2>/dev/null
	rm -rf "$LOG"
}

# ---- snaa <-> snaa ----
setup_snaa
trap 'cleanup_all; exit 130' INT TERM
ktap_header wcubuf
snaa_cases snaa
cleanup_snaa

# ---- rdma_rxe worker -> snaa emulator ----
# In a subshell: setup_interop skips (exits) if rdma_rxe is missing,
# which must not end the results so far; the counts come back in a file.
(
	# shellcheck disable=SC2317 # called by setup_interop
	snaa_skip() {
		echo "$ktap_n $ktap_failed $*" >"$LOG/counts"
		exit 0
	}
	setup_interop
	NS_W=
	WDEV=rxe0
	CLEAN_REORDER=1
	snaa_cases rxe
	echo "$ktap_n $ktap_failed" >"$LOG/counts"
	emu_stop
	cleanup_interop
)
if read -r n f why <"$LOG/counts"; then
	ktap_n=$n
	ktap_failed=$f
	if [ -n "$why" ]; then
		ktap_n=$((ktap_n + 1))
		echo "ok $ktap_n - rdma_rxe worker -> snaa emulator # SKIP $why"
	fi
else
	ktap_fail "rdma_rxe part ended without a result"
fi

# ---- the module goes away ----
sleep 1
if out=$(rmmod snaa 2>&1); then
	ktap_ok "rmmod snaa"
else
	ktap_fail "rmmod snaa" "$out" "$(lsmod | grep -E '^(snaa|ib_)')"
fi
rm -rf "$LOG"
ktap_finish
