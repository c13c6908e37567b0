#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# bench/run.sh - snaa benchmark, the in-VM half: runs as root inside the
# test VM (selftests/vm/run), never on the host.  bench/bench.sh boots the
# VM, runs this once and stores its output in bench/results/.  By hand:
#
#     selftests/vm/run --timeout 900 -- sh bench/run.sh
#
# Measures, each on snaa loopback and on rdma_rxe loopback (perftest
# client and server on the same device, over its RoCE v2 IPv4 GID):
#   UC WRITE bandwidth, 64 KiB messages   ib_write_bw  -c UC -s 65536
#   UC WRITE latency, 64 B (median)       ib_write_lat -c UC -s 64
#   UC SEND message rate, 64 B            ib_send_bw   -c UC -s 64
#   RC WRITE bandwidth, 64 KiB messages   ib_write_bw  -c RC -s 65536
#   RC READ bandwidth, 64 KiB messages    ib_read_bw   -c RC -s 65536
#   RC SEND latency, 64 B                 ib_send_lat  -c RC -s 64
#   RC fetch & add rate                   ib_atomic_bw -c RC -A FETCH_AND_ADD
#   UD SEND message rate, 64 B            ib_send_bw   -c UD -s 64
# and the UDP path limit over a veth pair between two namespaces
# (bench/udpblast.c, MTU-sized and 64 B datagrams): the ceiling for any
# soft-RoCE in this VM.
#
#   init namespace                 ns bench-rxp
#  +-----------------------------+ +--------------------------+
#  | rxe0 - br-rxe 198.18.0.1/24 |=| br-rxp 198.18.0.2 (peer) |
#  +-----------------------------+ +--------------------------+
#   ns snaa-bench                  ns bench-snp
#  +-----------------------------+ +--------------------------+
#  | snaa0 - bs-snaa 198.18.1.1  |=| bs-snp 198.18.1.2 (peer) |
#  +-----------------------------+ +--------------------------+
#   ns bench-ua                    ns bench-ub
#  +-----------------------------+ +--------------------------+
#  | udpblast send - bu-a        |=| bu-b 198.18.2.2 recv     |
#  |                 198.18.2.1  | |                          |
#  +-----------------------------+ +--------------------------+
#
# rdma_rxe (6.1: initial namespace only) and snaa both bind UDP 4791, hence
# snaa in its own namespace.  The peers only give the veths carrier; the
# loopback traffic never reaches the veths: rdma_rxe and snaa both hand
# packets for their own GID straight to their receive path (snaa counts
# them as loopback_packets; the counters are in the raw output).
#
# Output: progress lines starting with "# ", raw tool output between
# "#### BEGIN <title>" and "#### END" lines, and at the end the result
# table.  A run that fails or times out is FAILED in the table; the script
# goes on and exits 1 at the end (0 if everything produced a figure).
# The table shows the targets beside the ratios; nothing fails on them:
# this is measurement only.
#
# Settings (environment; selftests/vm/run passes SNAA_* into the VM):
#   SNAA_BENCH_DEVS         devices to measure (default "rxe snaa")
#   SNAA_BENCH_TESTS        perftest benchmarks: wbw (UC WRITE bw), wlat
#                           (UC WRITE latency), srate (UC SEND rate), rwbw
#                           (RC WRITE bw), rrbw (RC READ bw), rslat (RC
#                           SEND latency), atomic (RC fetch & add rate),
#                           udrate (UD SEND rate); default all
#   SNAA_BENCH_REPS         perftest runs per figure, the median is
#                           reported (3; the host may be shared)
#   SNAA_BENCH_TIMEOUT      seconds per perftest process (60)
#   SNAA_BENCH_BW_ITERS     ib_write_bw iterations (2000)
#   SNAA_BENCH_LAT_ITERS    ib_write_lat iterations (10000)
#   SNAA_BENCH_ATOMIC_ITERS ib_atomic_bw iterations (100000: a few
#                           seconds, so that start-up and the first
#                           translation of the code paths under TCG do
#                           not weigh on the figure)
#   SNAA_BENCH_RATE_ITERS   ib_send_bw iterations (16000, at most 16000:
#                           the receive queue holds them all, UC has no RNR)
#   SNAA_BENCH_UDP_COUNT    datagrams per udpblast run (200000)
#   SNAA_BENCH_UDP_SIZES    udpblast payload sizes ("1472 64"; empty: no
#                           UDP runs)
#   SNAA_BENCH_MTU          MTU of all the veths (default: veth's 1500,
#                           i.e. RoCE path MTU 1024; 9000 gives 4096)
#   SNAA_BENCH_PROFILE=1    perf record -a around each perftest client and
#                           udpblast sender; perf report goes to the raw
#                           output.  Slower, and the figures of such a run
#                           are perturbed (latency most): use it to see
#                           where the time goes, not for the numbers.
#                           The profile covers the whole client process,
#                           start-up included (perftest calibrates its
#                           clock with gettimeofday loops: read_hpet)
#   SNAA_BENCH_PROFILE_ARGS extra perf record arguments, e.g. "-g" for
#                           call graphs, "-D 1500" to skip the first 1.5 s
#   SNAA_BENCH_PERFTEST_ARGS  extra arguments for every perftest process,
#                           e.g. --disable_pcie_relaxed (no
#                           IBV_ACCESS_RELAXED_ORDERING in ibv_reg_mr)
#   SNAA_BENCH_SNAA_BROKEN  if set, snaa is not tried and its cells are
#                           FAILED with this reason (bench.sh: build failed)
#   SNAA_BENCH_UDPBLAST     prebuilt udpblast (else bench/udpblast if newer
#                           than udpblast.c, else built here)
# shellcheck disable=SC2317 # functions called through "setup_$dev" etc.
set -u

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BENCH_TOP=$(cd "$BENCH_DIR/.." && pwd)

# snaa_install_module, snaa_use_build_provider, snaa_gid_index, wait_for;
# sourced first so that the definitions below win should lib.sh ever use
# the same names.  lib.sh derives the tree from $0 (selftests/snaa/X.sh):
# set it here.
SNAA_TOP=$BENCH_TOP
# shellcheck source=../selftests/snaa/lib.sh
. "$BENCH_TOP/selftests/snaa/lib.sh"

DEVS=${SNAA_BENCH_DEVS:-rxe snaa}
TESTS=${SNAA_BENCH_TESTS:-wbw wlat srate rwbw rrbw rslat atomic udrate}
REPS=${SNAA_BENCH_REPS:-3}
PERF_TIMEOUT=${SNAA_BENCH_TIMEOUT:-60}
BW_ITERS=${SNAA_BENCH_BW_ITERS:-2000}
LAT_ITERS=${SNAA_BENCH_LAT_ITERS:-10000}
RATE_ITERS=${SNAA_BENCH_RATE_ITERS:-16000}
ATOMIC_ITERS=${SNAA_BENCH_ATOMIC_ITERS:-100000}
UDP_COUNT=${SNAA_BENCH_UDP_COUNT:-200000}
UDP_SIZES=${SNAA_BENCH_UDP_SIZES-1472 64}
PROFILE=${SNAA_BENCH_PROFILE:-0}
MTU=${SNAA_BENCH_MTU:-}
PROFILE_ARGS=${SNAA_BENCH_PROFILE_ARGS:-}
PERFTEST_ARGS=${SNAA_BENCH_PERFTEST_ARGS:-}

BW_SIZE=65536
LAT_SIZE=64
RATE_SIZE=64
UDP_PORT=18800

failures=0
port=18600
NS=
TMP=

log() {
	echo "# $*"
}

now() {
	date +%s.%N
}

# secs_since START: elapsed seconds, one decimal.
secs_since() {
	awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'
}

# raw TITLE FILE: FILE's content as one raw block.
raw() {
	echo "#### BEGIN $1"
	cat "$2"
	echo "#### END"
}

# ns_exec CMD...: run CMD in namespace $NS (if set).
ns_exec() {
	if [ -n "$NS" ]; then
		ip netns exec "$NS" "$@"
	else
		"$@"
	fi
}

is_num() {
	awk -v v="${1:-x}" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]+)?$/ && v + 0 > 0) }'
}

# median V...: median of the arguments (all numeric).
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2];
		      else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Cells are stored in variables cell_<dev>_<key>.
set_cell() {
	eval "cell_$1_$2=\$3"
}

get_cell() {
	eval "printf '%s' \"\${cell_$1_$2:-FAILED}\""
}

# ---- setup ---------------------------------------------------------------

# wait_gid DEV IPV4: set GID to DEV's RoCE v2 index of IPV4 (10 s max).
wait_gid() {
	wait_for 10 snaa_gid_index "$1" "$2" &&
		GID=$(snaa_gid_index "$1" "$2")
}

# veth_ns NAME NS ADDR: put veth end NAME into NS (unless NS is "-") with
# ADDR/24 and bring it (and NS's lo) up.
veth_ns() {
	if [ -n "$MTU" ]; then
		ip link set "$1" mtu "$MTU" || return 1
	fi
	if [ "$2" = - ]; then
		ip addr add "$3/24" dev "$1" && ip link set "$1" up
	else
		ip link set "$1" netns "$2" &&
		ip -n "$2" addr add "$3/24" dev "$1" &&
		ip -n "$2" link set "$1" up &&
		ip -n "$2" link set lo up
	fi
}

# setup_DEV: create the device and set DEV_NAME, NS, ADDR, GID; on failure
# print why and return 1.
setup_rxe() {
	modprobe veth || return 1
	modprobe rdma_rxe || return 1
	ip netns add bench-rxp &&
	ip link add br-rxe type veth peer name br-rxp &&
	veth_ns br-rxp bench-rxp 198.18.0.2 &&
	veth_ns br-rxe - 198.18.0.1 &&
	rdma link add rxe0 type rxe netdev br-rxe || return 1
	DEV_NAME=rxe0
	NS=
	ADDR=198.18.0.1
	wait_gid rxe0 "$ADDR" || { log "rxe0 has no RoCE v2 GID for $ADDR"; return 1; }
}

cleanup_rxe() {
	rdma link delete rxe0 2>/dev/null
	ip link del br-rxe 2>/dev/null
	ip netns del bench-rxp 2>/dev/null
}

setup_snaa() {
	if [ -n "${SNAA_BENCH_SNAA_BROKEN:-}" ]; then
		log "snaa not tried: $SNAA_BENCH_SNAA_BROKEN"
		return 1
	fi
	command -v snaa_install_module >/dev/null 2>&1 ||
		{ log "no selftests/snaa/lib.sh"; return 1; }
	# lib.sh derives the tree from $0 (selftests/snaa/X.sh): set it here.
	SNAA_TOP=$BENCH_TOP
	ko=$SNAA_TOP/$(sh "$SNAA_TOP/scripts/modbuild.sh" "$(uname -r)")/snaa.ko
	# (scripts/provider-build.sh: one libsnaa-rdmavNN.so, a link)
	prov=$(echo "$SNAA_TOP"/build/provider/libsnaa-rdmav*.so)
	# The VM sees the host tree live and other builds may replace these
	# files during the run: use private copies, taken now.
	snap=$TMP/snaa
	mkdir -p "$snap"
	if ! cp "$ko" "$snap/snaa.ko" || ! cp -L "$prov" "$snap/"; then
		log "no $ko or $prov (make modules provider)"
		return 1
	fi
	(cd "$snap" && md5sum snaa.ko "${prov##*/}")
	SNAA_KO=$snap/snaa.ko
	# shellcheck disable=SC2034 # used by snaa_use_build_provider
	SNAA_PROVIDER=$snap/libsnaa
	staged=$SNAA_TOP/build/modroot/lib/modules/$(uname -r)
	modprobe veth || return 1
	if [ -f "$staged/modules.dep" ] &&
	   cmp -s "$staged/updates/snaa.ko" "$SNAA_KO"; then
		snaa_install_module
		modprobe snaa || { log "modprobe snaa failed"; return 1; }
	else
		# lib.sh would run depmod (a minute and more under TCG)
		log "build/modroot is not for this snaa.ko: insmod instead"
		# shellcheck disable=SC2046 # a list of module names
		if ! modprobe -a $(modinfo -F depends "$SNAA_KO" | tr ',' ' ') ||
		   ! insmod "$SNAA_KO"; then
			log "insmod snaa.ko failed"
			return 1
		fi
	fi
	snaa_use_build_provider
	ip netns add snaa-bench && ip netns add bench-snp &&
	ip link add bs-snaa type veth peer name bs-snp &&
	veth_ns bs-snp bench-snp 198.18.1.2 &&
	veth_ns bs-snaa snaa-bench 198.18.1.1 &&
	ip netns exec snaa-bench rdma link add snaa0 type snaa netdev bs-snaa ||
		return 1
	DEV_NAME=snaa0
	NS=snaa-bench
	ADDR=198.18.1.1
	wait_gid snaa0 "$ADDR" || { log "snaa0 has no RoCE v2 GID for $ADDR"; return 1; }
}

cleanup_snaa() {
	ip netns exec snaa-bench rdma link delete snaa0 2>/dev/null
	ip netns del snaa-bench 2>/dev/null
	ip netns del bench-snp 2>/dev/null
}

# ---- perftest ------------------------------------------------------------

# listening PORT: a TCP socket listens on PORT (in $NS).
listening() {
	ns_exec ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# profile_report TITLE FILE: perf report of FILE as a raw block.
profile_report() {
	[ -s "$2" ] || return 0
	# call graphs if recorded (-g in SNAA_BENCH_PROFILE_ARGS), else a
	# flat list of where the time went
	case " $PROFILE_ARGS " in
	*" -g "*) pr_graph="-g caller,0.5,callee,function,percent" ;;
	*) pr_graph="" ;;
	esac
	# shellcheck disable=SC2086 # pr_graph is a list
	perf report -i "$2" --stdio --no-children --sort comm,dso,sym \
		--percent-limit 0.3 $pr_graph >"$2.txt" 2>&1
	grep -v -e '^$' -e '^#$' -e 'Tip:' "$2.txt" | head -n 250 >"$2.top"
	raw "perf report: $1" "$2.top"
	rm -f "$2" "$2.txt" "$2.top"
}

# perftest_once TAG TEST SIZE ITERS SIDE COL [ARGS...]: one server/client
# run of TEST on $DEV_NAME; on success writes the figure (column COL of the
# first result row of SIDE's output, client or server) to $TMP/fig.
# Returns 0 on success, 2 if perftest could not calibrate its clock (a
# flake of a busy TCG host: worth a retry), 1 on other failures.
perftest_once() {
	tag=$1 test=$2 size=$3 iters=$4 side=$5 col=$6
	shift 6
	port=$((port + 1))
	srv=$TMP/srv.out
	cli=$TMP/cli.out
	: >"$srv"
	: >"$cli"
	rm -f "$TMP/fig"
	# shellcheck disable=SC2086 # PERFTEST_ARGS is a list
	set -- -d "$DEV_NAME" -x "$GID" -F -s "$size" -n "$iters" \
		-p "$port" "$@" $PERFTEST_ARGS
	start=$(now)

	ns_exec timeout -k 5 "$PERF_TIMEOUT" "$test" "$@" >"$srv" 2>&1 &
	spid=$!
	tries=200
	while ! listening "$port"; do
		tries=$((tries - 1))
		if [ $tries = 0 ] || ! kill -0 "$spid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	if [ $tries = 0 ] || ! kill -0 "$spid" 2>/dev/null; then
		echo "bench: server did not listen on port $port" >>"$cli"
		crc=listen
	elif [ "$PROFILE" = 1 ]; then
		# shellcheck disable=SC2086 # PROFILE_ARGS is a list
		ns_exec timeout -k 5 "$PERF_TIMEOUT" perf record -a -q \
			$PROFILE_ARGS -o "$TMP/perf.data" -- "$test" "$@" "$ADDR" >"$cli" 2>&1
		crc=$?
	else
		ns_exec timeout -k 5 "$PERF_TIMEOUT" "$test" "$@" "$ADDR" >"$cli" 2>&1
		crc=$?
	fi
	# A server whose client is gone would wait for its own timeout.
	[ "$crc" = 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	secs=$(secs_since "$start")

	if [ "$side" = server ]; then
		out=$srv
	else
		out=$cli
	fi
	fig=$(awk -v col="$col" '
		/^ *#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ { print $col; exit }' "$out")
	raw "$tag: client: $test $* $ADDR (exit $crc, ${secs}s)" "$cli"
	raw "$tag: server: $test $* (exit $src)" "$srv"
	[ "$PROFILE" = 1 ] && profile_report "$tag" "$TMP/perf.data"
	if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
		why="exit status client $crc, server $src"
		case " $crc $src " in
		*" 124 "*|*" 137 "*) why="$why (timed out after ${PERF_TIMEOUT}s)" ;;
		esac
		# the first line of error output says most
		err=$(grep -v -e '^ *$' -e '^[-* ]*$' -e 'Waiting for client' "$cli" |
			head -n 1)
		log "$tag: FAILED: $why, ${secs}s${err:+: $err}"
		return 1
	fi
	if ! is_num "$fig"; then
		# perftest times with rdtsc and derives the TSC rate from a
		# short gettimeofday regression; if that is noisy it reports
		# inf/0 and "Correlation coefficient r^2: ... < 0.9".
		if grep -q 'Correlation coefficient' "$srv" "$cli"; then
			log "$tag: no figure: perftest's clock calibration failed" \
				"(busy host), ${secs}s"
			return 2
		fi
		log "$tag: FAILED: no figure in column $col of the $side output"
		return 1
	fi
	log "$tag: $fig (${secs}s)"
	echo "$fig" >"$TMP/fig"
}

# Per device kind (rxe, snaa): dev_<kind>_{name,ns,addr,gid} once set up.
save_dev() {
	eval "dev_$1_name=\$DEV_NAME dev_$1_ns=\$NS dev_$1_addr=\$ADDR dev_$1_gid=\$GID"
}

select_dev() {
	eval "DEV_NAME=\$dev_$1_name NS=\$dev_$1_ns ADDR=\$dev_$1_addr GID=\$dev_$1_gid"
}

# bench_args KEY: set TITLE and ARGS (perftest_once's TEST SIZE ITERS SIDE
# COL [ARGS...]) for benchmark KEY.
# write_bw: client's BW average (Gb/s); write_lat: t_typical (usec);
# send_bw: the receiver's (server's) MsgRate (Mpps).
bench_args() {
	case $1 in
	wbw)	TITLE="UC WRITE bw ${BW_SIZE}B"
		ARGS="ib_write_bw $BW_SIZE $BW_ITERS client 4 -c UC --report_gbits" ;;
	wlat)	TITLE="UC WRITE lat ${LAT_SIZE}B"
		ARGS="ib_write_lat $LAT_SIZE $LAT_ITERS client 5 -c UC" ;;
	srate)	TITLE="UC SEND rate ${RATE_SIZE}B"
		ARGS="ib_send_bw $RATE_SIZE $RATE_ITERS server 5 -c UC" ;;
	rwbw)	TITLE="RC WRITE bw ${BW_SIZE}B"
		ARGS="ib_write_bw $BW_SIZE $BW_ITERS client 4 -c RC --report_gbits" ;;
	rrbw)	TITLE="RC READ bw ${BW_SIZE}B"
		ARGS="ib_read_bw $BW_SIZE $BW_ITERS client 4 -c RC --report_gbits" ;;
	rslat)	TITLE="RC SEND lat ${LAT_SIZE}B"
		ARGS="ib_send_lat $LAT_SIZE $LAT_ITERS client 5 -c RC" ;;
	atomic)	TITLE="RC fetch & add rate"
		ARGS="ib_atomic_bw 8 $ATOMIC_ITERS client 5 -c RC -A FETCH_AND_ADD" ;;
	udrate)	TITLE="UD SEND rate ${RATE_SIZE}B"
		ARGS="ib_send_bw $RATE_SIZE $RATE_ITERS server 5 -c UD" ;;
	esac
}

# perftest DEV KEY REP: run REP of benchmark KEY on device kind DEV (up to
# 3 attempts if perftest's clock calibration fails); the figure is added
# to figs_DEV_KEY, a failure makes cell DEV/KEY FAILED.
perftest() {
	bench_args "$2"
	tag="$1 $TITLE"
	[ "$REPS" -gt 1 ] && tag="$tag [$3/$REPS]"
	select_dev "$1"
	attempt=1
	while :; do
		# shellcheck disable=SC2086 # ARGS is a list
		perftest_once "$tag" $ARGS
		rc=$?
		if [ "$rc" != 2 ] || [ "$attempt" -ge 3 ]; then
			break
		fi
		attempt=$((attempt + 1))
	done
	NS=
	if [ "$rc" != 0 ]; then
		failures=$((failures + 1))
		set_cell "$1" "$2" FAILED
		return 1
	fi
	eval "figs_$1_$2=\"\${figs_$1_$2:-} \$(cat \"\$TMP/fig\")\""
}

# stats DEV: the device's counters as a raw block.
stats() {
	select_dev "$1"
	ns_exec rdma statistic show link "$DEV_NAME/1" >"$TMP/stats" 2>&1
	raw "$1 counters: rdma statistic show link $DEV_NAME/1" "$TMP/stats"
	NS=
}

# setup_dev DEV: set up device kind DEV; prints whether it worked.
setup_dev() {
	dev=$1
	start=$(now)
	NS=
	"setup_$dev" >"$TMP/setup" 2>&1
	rc=$?
	raw "$dev setup (exit $rc, $(secs_since "$start")s)" "$TMP/setup"
	if [ $rc != 0 ]; then
		grep '^# ' "$TMP/setup"
		log "$dev: setup failed, its cells are FAILED"
		failures=$((failures + 1))
		"cleanup_$dev" >/dev/null 2>&1
		NS=
		return 1
	fi
	ns_exec ibv_devinfo -v -d "$DEV_NAME" >"$TMP/devinfo" 2>&1
	raw "$dev setup: ibv_devinfo -v -d $DEV_NAME (GID index $GID = $ADDR, ns ${NS:-init})" \
		"$TMP/devinfo"
	log "$dev: $DEV_NAME GID[$GID] $ADDR, namespace ${NS:-init}, setup $(secs_since "$start")s"
	save_dev "$dev"
	NS=
}

# bench_rdma: set up the devices, then run every benchmark REPS times,
# alternating between the devices (rep 1 on rxe, rep 1 on snaa, rep 2 on
# rxe, ...) so that a busy host skews both alike.
bench_rdma() {
	ready=
	for d in $DEVS; do
		case $d in
		rxe|snaa) ;;
		*) log "unknown device kind '$d' (rxe, snaa)"
		   failures=$((failures + 1))
		   continue ;;
		esac
		log "==== $d loopback: setup"
		setup_dev "$d" && ready="$ready $d"
	done
	for key in $TESTS; do
		case $key in
		wbw|wlat|srate|rwbw|rrbw|rslat|atomic|udrate) ;;
		*) log "unknown benchmark '$key' (wbw, wlat, srate, rwbw, rrbw, rslat, atomic, udrate)"
		   failures=$((failures + 1))
		   continue ;;
		esac
		bench_args "$key"
		log "==== $TITLE"
		r=1
		while [ $r -le "$REPS" ]; do
			for d in $ready; do
				# after a failure the cell stays FAILED: skip
				[ -n "$(eval "echo \${cell_${d}_$key:-}")" ] ||
					perftest "$d" "$key" "$r"
			done
			r=$((r + 1))
		done
		for d in $ready; do
			figs=$(eval "echo \${figs_${d}_$key:-}")
			if [ -n "$figs" ] && [ -z "$(eval "echo \${cell_${d}_$key:-}")" ]; then
				# shellcheck disable=SC2086 # a list of numbers
				set_cell "$d" "$key" "$(median $figs)"
			fi
		done
	done
	for d in $ready; do
		stats "$d"
	done
	for d in $ready; do
		"cleanup_$d" >/dev/null 2>&1
	done
}

# ---- UDP over veth -------------------------------------------------------

# udpblast_bin: set UDPBLAST to a usable binary.
udpblast_bin() {
	UDPBLAST=${SNAA_BENCH_UDPBLAST:-$BENCH_DIR/udpblast}
	if [ -x "$UDPBLAST" ] &&
	   { [ -n "${SNAA_BENCH_UDPBLAST:-}" ] ||
	     [ -z "$(find "$BENCH_DIR/udpblast.c" \
			"$BENCH_TOP/userspace/common/snaa_opt.c" \
			-newer "$UDPBLAST")" ]; }; then
		return 0
	fi
	UDPBLAST=$TMP/udpblast
	log "building $UDPBLAST"
	cc -O2 -std=c11 -Wall -Wextra -Werror \
		-I"$BENCH_TOP/userspace/common" -o "$UDPBLAST" \
		"$BENCH_DIR/udpblast.c" "$BENCH_TOP/userspace/common/snaa_opt.c"
}

setup_udp() {
	modprobe veth &&
	ip netns add bench-ua && ip netns add bench-ub &&
	ip link add bu-a type veth peer name bu-b &&
	veth_ns bu-a bench-ua 198.18.2.1 &&
	veth_ns bu-b bench-ub 198.18.2.2 || return 1
	# static neighbours: no ARP in the measurement
	ip -n bench-ua neigh replace 198.18.2.2 nud permanent \
		lladdr "$(ip netns exec bench-ub cat /sys/class/net/bu-b/address)" dev bu-a
}

cleanup_udp() {
	ip netns del bench-ua 2>/dev/null
	ip netns del bench-ub 2>/dev/null
}

# kv LINE KEY: value of KEY=value in LINE.
kv() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

udp_once() {
	size=$1
	tag="UDP veth ${size}B x$UDP_COUNT"
	out=$TMP/udp.recv
	start=$(now)
	ip netns exec bench-ub timeout -k 5 60 "$UDPBLAST" recv -p "$UDP_PORT" \
		-n "$UDP_COUNT" -i 1000 -w 30 >"$out" 2>&1 &
	rpid=$!
	tries=100
	until grep -q listening "$out" 2>/dev/null || [ $tries = 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	if [ "$PROFILE" = 1 ]; then
		# shellcheck disable=SC2086 # PROFILE_ARGS is a list
		ip netns exec bench-ua timeout -k 5 60 perf record -a -q \
			$PROFILE_ARGS -o "$TMP/perf.data" -- "$UDPBLAST" send -n "$UDP_COUNT" \
			-s "$size" -p "$UDP_PORT" 198.18.2.2 >"$TMP/udp.send" 2>&1
	else
		ip netns exec bench-ua timeout -k 5 60 "$UDPBLAST" send \
			-n "$UDP_COUNT" -s "$size" -p "$UDP_PORT" 198.18.2.2 \
			>"$TMP/udp.send" 2>&1
	fi
	crc=$?
	wait "$rpid"
	rrc=$?
	cat "$TMP/udp.send" >>"$out"
	raw "$tag (exit send $crc, recv $rrc, $(secs_since "$start")s)" "$out"
	[ "$PROFILE" = 1 ] && profile_report "$tag" "$TMP/perf.data"
	line=$(grep '^recv: count=' "$out")
	gbits=$(kv "$line" gbits)
	pps=$(kv "$line" pps)
	if [ "$crc" != 0 ] || [ "$rrc" != 0 ] || ! is_num "$gbits" ||
	   ! is_num "$pps"; then
		log "$tag: FAILED (exit send $crc, recv $rrc)"
		failures=$((failures + 1))
		set_cell udp "s$size" FAILED
		return
	fi
	sline=$(grep '^send: count=' "$out")
	log "$tag: received $(kv "$line" count), $gbits Gbit/s, $pps pps" \
		"(sender: $(kv "$sline" gbits) Gbit/s, $(kv "$sline" pps) pps)"
	set_cell udp "s$size" "$gbits $pps"
}

bench_udp() {
	[ -n "$UDP_SIZES" ] || return 0
	log "==== UDP over veth (bench-ua -> bench-ub)"
	if ! udpblast_bin || ! setup_udp; then
		log "UDP: setup failed"
		for s in $UDP_SIZES; do
			set_cell udp "s$s" FAILED
		done
		failures=$((failures + 1))
		cleanup_udp
		return
	fi
	for s in $UDP_SIZES; do
		udp_once "$s"
	done
	cleanup_udp
}

# ---- table ---------------------------------------------------------------

fmt() {
	if is_num "$1"; then
		awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }'
	else
		printf '%s' "$1"
	fi
}

# ratio A B: A / B to two places
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

# line TITLE SNAA RXE RATIO TARGET: one row of the table
line() {
	printf '%-30s %-12s %-12s %-10s %s\n' "$@"
}

# row TITLE KEY FORMAT TARGET
row() {
	s=$(get_cell snaa "$2")
	x=$(get_cell rxe "$2")
	r=
	if is_num "$s" && is_num "$x"; then
		r=$(ratio "$s" "$x")
	fi
	case " $DEVS " in *" snaa "*) ;; *) s="not run" ;; esac
	case " $DEVS " in *" rxe "*) ;; *) x="not run" ;; esac
	case " $TESTS " in *" $2 "*) ;; *) s="not run" x="not run" ;; esac
	line "$1" "$(fmt "$s" "$3")" "$(fmt "$x" "$3")" "$r" "$4"
}

table() {
	line benchmark snaa rxe snaa/rxe target
	row "UC WRITE bw 64KiB (Gbit/s)" wbw "%.2f" ">= 3"
	row "UC WRITE lat 64B (usec)" wlat "%.2f" "<= 0.5"
	row "UC SEND rate 64B (Mpps)" srate "%.3f" ">= 3"
	row "RC WRITE bw 64KiB (Gbit/s)" rwbw "%.2f" ">= 3"
	row "RC READ bw 64KiB (Gbit/s)" rrbw "%.2f" ">= 3"
	row "RC SEND lat 64B (usec)" rslat "%.2f" "<= 0.5"
	row "RC fetch & add (Mpps)" atomic "%.3f" ">= 3"
	row "UD SEND rate 64B (Mpps)" udrate "%.3f" ">= 3"
	# RC pays for its ACKs; the target is to lose at most 10 % to them
	u=$(get_cell snaa wbw)
	r=$(get_cell snaa rwbw)
	if is_num "$u" && is_num "$r"; then
		line "snaa RC WRITE / UC WRITE" "$(ratio "$r" "$u")" "" "" \
			">= 0.9"
	fi
	for s in $UDP_SIZES; do
		c=$(get_cell udp "s$s")
		if [ "$c" = FAILED ]; then
			v=FAILED
		else
			# shellcheck disable=SC2086 # "GBITS PPS"
			v=$(printf '%s %s' $c | awk '{ printf "%.2f Gbit/s, %.0f pps (%.3f Mpps)", $1, $2, $2 / 1e6 }')
		fi
		printf '%-30s %s\n' "UDP veth limit ${s}B" "$v"
	done
}

# ---- main ----------------------------------------------------------------

main() {
	if [ "${SNAA_VM:-}" != 1 ] && [ "${BENCH_ALLOW_HOST:-}" != 1 ]; then
		echo "$0: not in the test VM; run bench/bench.sh, or" \
			"selftests/vm/run --timeout 900 -- sh $0" >&2
		exit 2
	fi
	[ "$(id -u)" = 0 ] || { echo "$0: must run as root" >&2; exit 2; }
	for t in ib_write_bw ib_write_lat ib_send_bw ib_send_lat ib_read_bw ib_atomic_bw ibv_devinfo rdma ip ss timeout awk; do
		command -v "$t" >/dev/null 2>&1 || { echo "$0: $t not installed" >&2; exit 2; }
	done
	case $REPS in ''|*[!0-9]*|0) echo "$0: bad SNAA_BENCH_REPS" >&2; exit 2 ;; esac
	TMP=$(mktemp -d)
	trap 'cleanup_udp; cleanup_rxe; cleanup_snaa; rm -rf "$TMP"; exit 130' INT TERM

	t0=$(now)
	{
		uname -a
		echo "nproc $(nproc)"
		grep -m1 'model name' /proc/cpuinfo
		dpkg-query -W perftest 2>/dev/null
		echo "reps $REPS, timeout ${PERF_TIMEOUT}s, bw iters $BW_ITERS," \
			"lat iters $LAT_ITERS, rate iters $RATE_ITERS," \
			"atomic iters $ATOMIC_ITERS," \
			"udp count $UDP_COUNT sizes $UDP_SIZES, mtu ${MTU:-default}," \
			"profile $PROFILE '$PROFILE_ARGS'," \
			"perftest args '$PERFTEST_ARGS'"
	} >"$TMP/env" 2>&1
	raw "environment" "$TMP/env"

	bench_udp
	bench_rdma

	log "total $(secs_since "$t0")s, $failures failure(s)"
	echo
	table
	rm -rf "$TMP"
	[ "$failures" = 0 ] || exit 1
	exit 0
}

main "$@"
