#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# perftest smoke test between the two devices that lib/topology.sh's
# setup_MODE creates (server on DEV_B, client on DEV_A, connection data
# exchanged over TCP to ADDR_B, RoCE v2 GID of the IPv4 address):
#
#   uc  ib_write_bw, ib_write_lat, ib_send_bw and ib_send_lat, -c UC
#   rc  ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw (fetch & add,
#       compare & swap), ib_read_lat, ib_send_lat and ib_write_lat, RC;
#       ib_send_bw -c UD; ib_write_bw and ib_send_lat -R (rdma_cm
#       connects the QPs: address and route resolution, CM MADs over QP1)
#
# Each run must exit 0 on both sides and report a non-zero bandwidth,
# message rate (atomics: 8 bytes each, whose MB/sec reads 0.00 on the
# debug kernel) or latency; one KTAP line per run carries the figure.
# Runs as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/perf/perftest.sh rxe rc
#
# The tests are links to this file, which take the devices and the set
# from their names: perf/uc.sh and perf/rc.sh between two snaa devices,
# perf/uc_interop.sh and perf/rc_interop.sh between rdma_rxe and snaa,
# each side the client once.
#
# Features (uc.sh): perf, uc
# Features (rc.sh): perf, rc, ud, atomics, rdma_cm
# Features (uc_interop.sh): perf, uc, interop
# Features (rc_interop.sh): perf, rc, ud, atomics, rdma_cm, interop
#
# Iteration counts are small so that each run takes seconds under TCG;
# for the UC and UD _bw tests they do not exceed the receive queue depth,
# so that SENDs without RNR retry never find the receive queue empty.
set -u

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

PERF_TIMEOUT=${PERF_TIMEOUT:-60}	# seconds per perftest process
PERF_ITERS=${PERF_ITERS:-100}
PERF_BW_SIZE=65536
PERF_LAT_SIZE=64
perf_port=18515

perf_usage() {
	echo "usage: $0 rxe|snaa|interop [uc|rc]" >&2
	echo "  rxe      rdma_rxe on a veth pair (reference run)" >&2
	echo "  snaa     snaa <-> snaa in two namespaces" >&2
	echo "  interop  rdma_rxe <-> snaa, both directions" >&2
	echo "  uc       UC write/send (default); rc: RC, UD and rdma_cm" >&2
}

# perf_listening PORT: a TCP socket listens on PORT.
# shellcheck disable=SC2317 # called through wait_for
perf_listening() {
	snaa_in "${NS_B:-}" ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# perf_result FILE COLUMN: COLUMN of the first numeric row after the
# "#bytes" header of perftest's result table.
perf_result() {
	awk -v col="$2" '
		/^ *#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ { print $col; exit }' "$1"
}

# perf_cm_listening PORT: an rdma_cm ID listens on PORT.
# shellcheck disable=SC2317 # called through wait_for
perf_cm_listening() {
	snaa_in "${NS_B:-}" rdma resource show cm_id 2>/dev/null |
		grep "LISTEN" | grep -qE ":$1( |$)"
}

# perf_args CONN SIZE: perftest's options for transport CONN (UC, RC, UD,
# or CM: RC connected by rdma_cm) and message size SIZE ("-": perftest's
# default, e.g. 8 bytes for atomics), in perf_a.
perf_args() {
	case $1 in
	CM) perf_a="-R" ;;
	*) perf_a="-c $1" ;;
	esac
	[ "$2" = - ] || perf_a="$perf_a -s $2"
	# SNAA_RC_QUICK=1 (the debug kernel, see rc.sh): a 1 s local ACK
	# timeout instead of perftest's 67 ms, which KASAN's slowness
	# exceeds; on a slow machine a longer one (snaa_ack_timeout)
	case $1 in
	RC|CM)
		if [ "${SNAA_RC_QUICK:-0}" = 1 ]; then
			perf_a="$perf_a -u 18"
		elif [ "$(snaa_ack_timeout 14)" != 14 ]; then
			perf_a="$perf_a -u $(snaa_ack_timeout 14)"
		fi
		;;
	esac
	return 0
}

# perf_attempt TEST SIZE CONN [EXTRA...]: one server/client run; sets
# cli_rc, srv_rc and leaves the outputs in $cli_out and $srv_out.
perf_attempt() {
	pa_t=$1
	perf_args "$3" "$2"
	shift 3
	perf_port=$((perf_port + 1))
	# shellcheck disable=SC2086 # perf_a is a list
	snaa_in "${NS_B:-}" timeout -k 5 "$PERF_TIMEOUT" "$pa_t" -d "$DEV_B" \
		-x "$GID_B" $perf_a -F -n "$PERF_ITERS" -p "$perf_port" "$@" \
		>"$srv_out" 2>&1 &
	srv=$!
	pa_wait=perf_listening
	case $perf_a in -R*) pa_wait=perf_cm_listening ;; esac
	if ! wait_for 20 "$pa_wait" "$perf_port"; then
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		echo "server did not listen on port $perf_port" >>"$srv_out"
		cli_rc=none
		srv_rc=none
		return
	fi
	# shellcheck disable=SC2086
	snaa_in "${NS_A:-}" timeout -k 5 "$PERF_TIMEOUT" "$pa_t" -d "$DEV_A" \
		-x "$GID_A" $perf_a -F -n "$PERF_ITERS" -p "$perf_port" "$@" \
		"$ADDR_B" >"$cli_out" 2>&1
	cli_rc=$?
	wait "$srv"
	srv_rc=$?
}

# perf_clock_failed: perftest could not calibrate its cycle counter against
# gettimeofday() (a descheduled vCPU under TCG spoils the regression); it
# then reports every latency as "inf" and every bandwidth and rate as
# zero.  That is the test bed, not the datapath, so the run is repeated
# (at most twice); if every try failed so, the run passes on its exit
# statuses and says the figure is lost.
perf_clock_failed() {
	grep -qF 'Correlation coefficient r^2' "$cli_out" "$srv_out"
}

# perf_figure_lost FIG: FIG is what a failed calibration makes of a
# figure, "inf" or a zero.
perf_figure_lost() {
	awk -v v="$1" 'BEGIN { exit !(v == "inf" || (v ~ /^[0-9.]+$/ && v + 0 == 0)) }'
}

# perf_run TEST KIND SIZE CONN [EXTRA...]: one measured run; KIND is bw
# (judged on the average bandwidth), rate (on the message rate) or lat,
# SIZE and CONN as for perf_args, EXTRA more perftest options.
perf_run() {
	t=$1
	kind=$2
	size=$3
	conn=$4
	shift 4
	perf_args "$conn" "$size"
	desc="$t $perf_a${*:+ $*} $DEV_A->$DEV_B x$PERF_ITERS"
	srv_out=$(mktemp)
	cli_out=$(mktemp)
	start=$(date +%s)

	tries=1
	perf_attempt "$t" "$size" "$conn" "$@"
	while [ "$cli_rc" = 0 ] && [ "$srv_rc" = 0 ] && perf_clock_failed &&
	      [ "$tries" -lt 3 ]; do
		echo "# $desc: perftest's clock calibration failed; running it again"
		tries=$((tries + 1))
		: >"$cli_out"
		: >"$srv_out"
		perf_attempt "$t" "$size" "$conn" "$@"
	done
	secs=$(($(date +%s) - start))

	if [ "$kind" = bw ]; then
		# #bytes #iterations BW-peak BW-average MsgRate
		fig=$(perf_result "$cli_out" 4)
		what="BW average"
		unit="MB/sec"
	elif [ "$kind" = rate ]; then
		fig=$(perf_result "$cli_out" 5)
		what="MsgRate"
		unit="Mpps"
	else
		# #bytes #iterations t_min t_max t_typical t_avg ...
		fig=$(perf_result "$cli_out" 6)
		what="t_avg"
		unit="usec"
	fi
	if [ "$cli_rc" != 0 ] || [ "$srv_rc" != 0 ]; then
		ktap_fail "$desc" \
			"exit status client $cli_rc, server $srv_rc (124: timed out after ${PERF_TIMEOUT}s)" \
			"--- client:" "$(cat "$cli_out")" \
			"--- server:" "$(cat "$srv_out")"
	elif perf_clock_failed && perf_figure_lost "${fig:-x}"; then
		# Both sides ran every iteration and exited 0: the datapath
		# worked; only the figure is lost (a loaded host).
		ktap_ok "$desc: all $PERF_ITERS iterations done, $what not measurable: perftest's clock calibration failed $tries times (host load) (${secs}s)"
	elif ! awk -v v="${fig:-x}" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v + 0 > 0) }'; then
		ktap_fail "$desc" "no positive $what in the result table: '${fig:-}'" \
			"--- client:" "$(cat "$cli_out")"
	else
		ktap_ok "$desc: $what $fig $unit (${secs}s)"
	fi
	rm -f "$srv_out" "$cli_out"
}

perf_all_uc() {
	perf_run ib_write_bw bw "$PERF_BW_SIZE" UC
	perf_run ib_write_lat lat "$PERF_LAT_SIZE" UC
	perf_run ib_send_bw bw "$PERF_BW_SIZE" UC
	perf_run ib_send_lat lat "$PERF_LAT_SIZE" UC
}

perf_all_rc() {
	perf_run ib_write_bw bw "$PERF_BW_SIZE" RC
	perf_run ib_read_bw bw "$PERF_BW_SIZE" RC
	perf_run ib_send_bw bw "$PERF_BW_SIZE" RC
	perf_run ib_atomic_bw rate - RC -A FETCH_AND_ADD
	perf_run ib_atomic_bw rate - RC -A CMP_AND_SWAP
	perf_run ib_read_lat lat "$PERF_LAT_SIZE" RC
	perf_run ib_send_lat lat "$PERF_LAT_SIZE" RC
	perf_run ib_write_lat lat "$PERF_LAT_SIZE" RC
	# UD: a message fits one packet of the path MTU (1024 with rdma_rxe)
	perf_run ib_send_bw bw 1024 UD
	perf_run ib_write_bw bw "$PERF_BW_SIZE" CM
	perf_run ib_send_lat lat "$PERF_LAT_SIZE" CM
}

perf_all() {
	"perf_all_$perf_set"
}

perf_main() {
	if [ $# = 0 ]; then
		# perf/{uc,rc}[_interop].sh, links to this file
		case ${0##*/} in
		uc.sh|rc.sh) set -- snaa "${0##*/}" ;;
		uc_interop.sh|rc_interop.sh) set -- interop "${0##*/}" ;;
		esac
		[ $# = 0 ] || set -- "$1" "${2%%[_.]*}"
	fi
	{ [ $# = 1 ] || [ $# = 2 ]; } || { perf_usage; exit 2; }
	mode=$1
	perf_set=${2:-uc}
	case $mode in
	rxe|snaa|interop) ;;
	-h|--help) perf_usage; exit 0 ;;
	*) perf_usage; exit 2 ;;
	esac
	case $perf_set in
	uc|rc) ;;
	*) perf_usage; exit 2 ;;
	esac
	uc_vm_only
	for t in ib_write_bw ib_write_lat ib_send_bw ib_send_lat ib_read_bw \
		 ib_read_lat ib_atomic_bw ss timeout rdma; do
		command -v "$t" >/dev/null 2>&1 || snaa_skip "$t not installed (perftest, iproute2)"
	done
	uc_backlog
	"setup_$mode"
	trap '"cleanup_$mode"; exit 130' INT TERM
	if ! GID_A=$(snaa_gid_index "$DEV_A" "$ADDR_A") ||
	   ! GID_B=$(snaa_gid_index "$DEV_B" "$ADDR_B"); then
		"cleanup_$mode"
		snaa_skip "no RoCE v2 GID for $ADDR_A/$ADDR_B"
	fi

	ktap_header "snaa-$perf_set-perftest ($mode)"
	echo "# client $DEV_A GID[$GID_A] $ADDR_A, server $DEV_B GID[$GID_B] $ADDR_B"
	perf_all
	if [ "$mode" = interop ]; then
		# The other direction: snaa is the client, rxe the server.
		t=$DEV_A; DEV_A=$DEV_B; DEV_B=$t
		t=$GID_A; GID_A=$GID_B; GID_B=$t
		t=$ADDR_A; ADDR_A=$ADDR_B; ADDR_B=$t
		NS_A=${NS_B:-}; NS_B=
		echo "# client $DEV_A GID[$GID_A] $ADDR_A, server $DEV_B GID[$GID_B] $ADDR_B"
		perf_all
	fi
	"cleanup_$mode"
	ktap_finish
}

perf_main "$@"
