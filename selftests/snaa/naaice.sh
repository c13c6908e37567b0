#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# NAAICE RPCs end to end: naa-server (the software NAA) and naa-client
# (userspace/libnaaice) over RC + rdma_cm, on rdma_rxe and on snaa, both
# wire generations, every function, 1 B .. 512 MiB (snaa; 64 MiB on
# rdma_rxe), 1 .. 32 regions,
# concurrent clients and every error path (MRSP errors, unknown function,
# a server killed in the middle of RPCs, no server at all).  Runs as root
# inside the test VM:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/naaice.sh
#
#  rdma_rxe (init namespace, lib/topology.sh's setup_rxe)
#  +--------------------------------------------------------------+
#  |  rxe0 - veth0 198.18.0.1 ==+   naa-client --to 198.18.0.2      |
#  |                            | veth pair                         |
#  |  rxe1 - veth1 198.18.0.2 ==+   naa-server (all addresses)      |
#  +--------------------------------------------------------------+
#  snaa (lib/topology.sh's setup_snaa)
#  +- ns snaa-a ---------------+      +- ns snaa-b ---------------+
#  | snaa0 - veth0 198.18.0.1  |======| snaa1 - veth1 198.18.0.2  |
#  | naa-client                |      | naa-server                |
#  +---------------------------+      +---------------------------+
#
# snaa runs only if a probe RPC succeeds on it (RC and rdma_cm support);
# otherwise they are reported as skipped, with the probe's output.
# NAAICE_VALGRIND=0 leaves out the valgrind runs on rdma_rxe.
# SNAA_NAAICE_QUICK=1 (scripts/matrix.sh, on other distributions): on
# each device every function on both wires, the error replies, IPv6 and
# a refused connection; not the large RPCs, the application poll loops,
# the one-client NAA, concurrent clients, killed or frozen peers, nor
# valgrind.
#
# Features: naaice, rc, rdma_cm, interop
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$UC_HERE/../.." && pwd)}
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

NAA_DIR=$SNAA_TOP/userspace/libnaaice
NAA_SERVER=${NAA_SERVER:-$NAA_DIR/naa-server}
NAA_CLIENT=${NAA_CLIENT:-$NAA_DIR/naa-client}
if ! [ -x "$NAA_SERVER" ] || ! [ -x "$NAA_CLIENT" ]; then
	snaa_skip "no naa-server/naa-client (make -C userspace/libnaaice)"
fi
uc_vm_only
modprobe rdma_ucm 2>/dev/null

ktap_header naaice
NS_CLI=
NS_SRV=
TO=198.18.0.2
LOG=$(mktemp -d)
SERVERS=

# spawn NS OUT CMD...: CMD in the background in namespace NS (empty: this
# one), output to OUT; SPAWNED is its pid (CMD's own: a kill reaches it)
spawn() {
	ns=$1
	o=$2
	shift 2
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@" >"$o" 2>&1 &
	else
		"$@" >"$o" 2>&1 &
	fi
	SPAWNED=$!
}

# server NAME ARGS...: start naa-server in the background
server() {
	name=$1
	shift
	spawn "$NS_SRV" "$LOG/srv-$name" "$NAA_SERVER" "$@"
	eval "SRV_$name=\$SPAWNED"
	SERVERS="$SERVERS $SPAWNED"
	# listening once it says so (TCG can be slow to get there)
	wait_for 20 grep -q "listening on port" "$LOG/srv-$name" ||
		echo "# naa-server $name did not start: $(cat "$LOG/srv-$name")"
}

# gone PID: the process has exited
# shellcheck disable=SC2317 # called through wait_for
gone() {
	! kill -0 "$1" 2>/dev/null
}

stop_servers() {
	for p in $SERVERS; do
		kill "$p" 2>/dev/null
	done
	for p in $SERVERS; do
		wait "$p" 2>/dev/null
	done
	SERVERS=
}

# rpc NAME WANT_EXIT [GREP] -- CLIENT_ARGS...: one naa-client run
rpc() {
	name=$1
	want=$2
	pat=
	shift 2
	if [ "$1" != -- ]; then
		pat=$1
		shift
	fi
	shift
	out=$(snaa_in "$NS_CLI" timeout -k 5 120 "$NAA_CLIENT" --to "$TO" -q \
		"$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		ktap_fail "$name" "naa-client $*" "exit $rc, want $want" "$out"
	elif [ -n "$pat" ] && ! printf '%s\n' "$out" | grep -q -- "$pat"; then
		ktap_fail "$name" "naa-client $*" "output lacks '$pat'" "$out"
	else
		ktap_ok "$name"
		printf '%s\n' "$out" | grep '^naa-client: ' | sed 's/^/# /'
	fi
}

# big DEV: the top of the range, one RPC with 512 MiB in one region to
# the spec server on port 12345 (its default --mem-limit of 1 GiB takes
# it).  CRC-32C: the NAA reads every byte, in order (a misplaced chunk
# changes it, a sum would not see a swap), and the result is 4 bytes, so
# each side holds 512 MiB, not the 1 GiB an "add" needs (selftests/vm/run's
# default 2 GiB VM has room for both at once).  The name says what ran and
# the wall time; the MemAvailable before it and naa-client's summary
# (round trip, MB/s) follow as diagnostics.
BIG=512M
BIG_NAME="512 MiB"
big() {
	bg_name="$1 spec crc32c $BIG_NAME, 1 region, 1 RPC"
	bg_avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' \
		/proc/meminfo)
	echo "# $1: MemAvailable ${bg_avail} MiB before the $BIG_NAME RPC"
	# 2 x 512 MiB + 256 MiB for the kernel's share and the rest
	if [ "$bg_avail" -lt 1280 ]; then
		ktap_fail "$bg_name" \
			"only ${bg_avail} MiB available, 1280 needed" \
			"(selftests/vm/run --mem)"
		return
	fi
	bg_t0=$(date +%s)
	bg_out=$(snaa_in "$NS_CLI" timeout -k 5 600 "$NAA_CLIENT" --to "$TO" -q \
		--port 12345 --wire spec --fn crc32c --size "$BIG" --regions 1 \
		--count 1 --timeout 300000 2>&1)
	bg_rc=$?
	bg_s=$(($(date +%s) - bg_t0))
	if [ "$bg_rc" = 0 ]; then
		ktap_ok "$bg_name: bit-exact in ${bg_s} s"
		printf '%s\n' "$bg_out" | grep '^naa-client: ' | sed 's/^/# /'
	else
		ktap_fail "$bg_name" "exit $bg_rc after ${bg_s} s, want 0" \
			"$bg_out" "server: $(tail -n 5 "$LOG/srv-spec")"
	fi
}

# suite DEV: every case on the current setup; DEV names the tests
suite() {
	dev=$1
	server spec --port 12345 --wire spec
	server up --port 12346 --wire upstream
	server small --port 12347 --mem-limit 1M
	for w in spec upstream; do
		p=12345
		[ $w = upstream ] && p=12346
		# 32 regions in all: inputs + result (+ metadata on spec)
		max=31
		[ $w = spec ] && max=30
		rpc "$dev $w add 1 B, 1 region" 0 -- --port $p --wire $w \
			--fn add --size 1 --regions 1
		rpc "$dev $w add 4 KiB x 2, 5 RPCs" 0 -- --port $p --wire $w \
			--fn add --size 4K --regions 2 --count 5
		rpc "$dev $w sum 1 MiB x 4" 0 -- --port $p --wire $w \
			--fn sum --size 1M --regions 4 --count 2
		rpc "$dev $w crc32c 3 MiB x 2" 0 -- --port $p --wire $w \
			--fn crc32c --size 3M --regions 2
		rpc "$dev $w crc32c 4097 B x $max (32 regions)" 0 -- --port $p \
			--wire $w --fn crc32c --size 4097 --regions $max
		rpc "$dev $w matmul 64x64" 0 -- --port $p --wire $w \
			--fn matmul --size 16K --regions 2 --count 3
		rpc "$dev $w unknown function -> error 0x10" 5 "error code 0x10" \
			-- --port $p --wire $w --fn 99 --size 64 --regions 1
		rpc "$dev $w too many regions -> MRSP error" 4 \
			"too many regions" -- --port $p --wire $w --size 64 \
			--regions 40
		rpc "$dev $w NAA address out of bounds -> MRSP error" 4 \
			"invalid address" -- --port $p --wire $w --size 64 \
			--regions 1 --internal 0x100000000000:4K
	done
	rpc "$dev spec add over IPv6" 0 -- --to 2001:2::2 --port 12345 \
		--size 4K --regions 2 --count 2
	rpc "$dev upstream crc32c over IPv6" 0 -- --to 2001:2::2 --port 12346 \
		--wire upstream --fn crc32c --size 4K --regions 2 --count 2
	rpc "$dev not enough NAA memory -> MRSP error" 4 "not enough memory" \
		-- --port 12347 --size 2M --regions 1
	rpc "$dev no NAA on the port -> connection error" 3 -- --port 12399 \
		--size 64 --regions 1 --timeout 5000
	if [ "${SNAA_NAAICE_QUICK:-0}" = 1 ]; then
		stop_servers
		return
	fi

	rpc "$dev spec add 64 MiB" 0 -- --port 12345 --fn add --size 64M \
		--regions 1 --timeout 120000
	# the 512 MiB RPC tests the library and the NAA at the top of the
	# range, the same on any device: on snaa only (on rdma_rxe it took
	# twice as long and added nothing)
	[ "$dev" = snaa ] && big "$dev"

	# An application's own event loop: naaice_poll_cq_(non)blocking.
	rpc "$dev spec crc32c, naaice_poll_cq_blocking loop" 0 -- \
		--port 12345 --fn crc32c --size 256K --regions 4 --count 3 \
		--poll blocking
	rpc "$dev upstream sum, naaice_poll_cq_nonblocking loop" 0 -- \
		--port 12346 --wire upstream --fn sum --size 256K --regions 4 \
		--count 3 --poll nonblocking

	# The specification's one-client software NAA flow (naa-server --once).
	server once --port 12349 --once
	rpc "$dev single-client NAA (spec flow): matmul 16x16, 2 RPCs" 0 -- \
		--port 12349 --fn matmul --size 1K --regions 2 --count 2
	# shellcheck disable=SC2154 # set by server() through eval
	op=$SRV_once
	if wait_for 30 gone "$op"; then
		wait "$op"
		check_eq "$dev single-client NAA exits 0 after the client's disconnect" \
			"$?" 0
	else
		kill "$op"
		ktap_fail "$dev single-client NAA exits after the client's disconnect" \
			"still running 30 s later" "$(cat "$LOG/srv-once")"
	fi

	# Several clients at once, both wires.
	pids=
	for i in 1 2 3 4; do
		for w in spec upstream; do
			p=12345
			[ $w = upstream ] && p=12346
			spawn "$NS_CLI" "$LOG/conc-$i-$w" timeout -k 5 300 \
				"$NAA_CLIENT" --to "$TO" -q --port $p --wire $w \
				--fn crc32c --size 64K --regions 3 --count 20
			pids="$pids $SPAWNED"
		done
	done
	bad=0
	for p in $pids; do
		wait "$p" || bad=$((bad + 1))
	done
	if [ "$bad" = 0 ]; then
		ktap_ok "$dev 8 concurrent clients x 20 RPCs"
	else
		ktap_fail "$dev 8 concurrent clients x 20 RPCs" \
			"$bad clients failed" "$(cat "$LOG"/conc-*)"
	fi

	# A client killed mid-RPC must not take the server down.
	spawn "$NS_CLI" /dev/null "$NAA_CLIENT" --to "$TO" -q --port 12345 \
		--size 1M --regions 2 --count 1000000
	cp=$SPAWNED
	sleep 3
	kill -9 "$cp" 2>/dev/null
	wait "$cp" 2>/dev/null
	rpc "$dev server still serves after a client was killed" 0 -- \
		--port 12345 --size 4K --regions 2 --count 3

	# The server killed mid-RPC: the client reports it and exits 6 well
	# within its timeout instead of hanging.
	server victim --port 12348
	spawn "$NS_CLI" "$LOG/victim" timeout -k 5 60 "$NAA_CLIENT" \
		--to "$TO" -q --port 12348 --size 1M --regions 2 \
		--count 1000000 --timeout 10000
	cp=$SPAWNED
	sleep 3
	eval "kill -9 \$SRV_victim"
	t0=$(date +%s)
	wait "$cp"
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ "$rc" = 6 ] && [ "$secs" -le 30 ]; then
		ktap_ok "$dev server killed mid-RPC -> client exit 6 in ${secs}s"
	else
		ktap_fail "$dev server killed mid-RPC -> client exit 6" \
			"exit $rc after ${secs}s" "$(cat "$LOG/victim")"
	fi
	# A frozen server (no disconnect, the kernel still acks the writes):
	# the client gives up after its --timeout of 3 s and exits 6.
	server frozen --port 12351
	spawn "$NS_CLI" "$LOG/frozen" timeout -k 5 60 "$NAA_CLIENT" \
		--to "$TO" -q --port 12351 --size 64K --regions 2 \
		--count 1000000 --timeout 3000
	cp=$SPAWNED
	sleep 3
	eval "kill -STOP \$SRV_frozen"
	t0=$(date +%s)
	wait "$cp"
	rc=$?
	secs=$(($(date +%s) - t0))
	eval "kill -CONT \$SRV_frozen"
	if [ "$rc" = 6 ] && [ "$secs" -le 20 ] &&
	   grep -q "no answer" "$LOG/frozen"; then
		ktap_ok "$dev server frozen mid-RPC -> client timeout, exit 6 in ${secs}s"
	else
		ktap_fail "$dev server frozen mid-RPC -> client timeout, exit 6" \
			"exit $rc after ${secs}s" "$(cat "$LOG/frozen")"
	fi
	stop_servers
	# The long-running servers must have logged each kind of end.
	check_match "$dev naa-server logged a client's disconnect" \
		"$(cat "$LOG/srv-spec")" "disconnected after [0-9]+ RPCs"
	check_match "$dev naa-server logged the refused regions" \
		"$(cat "$LOG/srv-spec")" "too many regions"
}

# valgrind_runs: naa-client and naa-server under valgrind, no errors,
# no leaks (rdma_rxe only: slow under TCG).
valgrind_runs() {
	command -v valgrind >/dev/null || {
		echo "ok $((ktap_n + 1)) - valgrind # SKIP no valgrind"
		ktap_n=$((ktap_n + 1))
		return
	}
	vg="valgrind -q --error-exitcode=99 --leak-check=full
		--errors-for-leak-kinds=definite,indirect"
	# shellcheck disable=SC2086
	$vg "$NAA_SERVER" --port 12350 >"$LOG/vg-srv" 2>&1 &
	vp=$!
	wait_for 60 grep -q "listening on port" "$LOG/vg-srv"
	# shellcheck disable=SC2086
	out=$($vg "$NAA_CLIENT" --to "$TO" -q --port 12350 --fn crc32c \
		--size 64K --regions 3 --count 3 2>&1)
	rc=$?
	check_eq "rxe naa-client under valgrind: exit 0, no errors" "$rc" 0
	[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
	kill "$vp"
	wait "$vp"
	rc=$?
	check_eq "rxe naa-server under valgrind: exit 0, no errors" "$rc" 0
	[ "$rc" = 0 ] || sed 's/^/# /' "$LOG/vg-srv"
}

uc_backlog
# ---- rdma_rxe ----
setup_rxe
trap 'stop_servers; cleanup_rxe; exit 130' INT TERM
suite rxe
[ "${NAAICE_VALGRIND:-1}" = 0 ] || [ "${SNAA_NAAICE_QUICK:-0}" = 1 ] ||
	valgrind_runs
cleanup_rxe

# ---- snaa ----
# In a subshell: setup_snaa skips (exits) when snaa is not there, which
# must not end the rdma_rxe results; the counts come back in a file.
snaa_part() {
	setup_snaa
	NS_CLI=snaa-a
	NS_SRV=snaa-b
	trap 'stop_servers; cleanup_snaa; exit 130' INT TERM
	server probe --port 12360
	probe=$(snaa_in "$NS_CLI" timeout -k 5 60 "$NAA_CLIENT" --to "$TO" -q \
		--port 12360 --size 64 --regions 1 --timeout 20000 2>&1)
	prc=$?
	stop_servers
	if [ "$prc" = 0 ]; then
		suite snaa
		echo "$ktap_n $ktap_failed" >"$LOG/counts"
	else
		printf '%s\n' "$probe" | sed 's/^/# probe: /'
		echo "$ktap_n $ktap_failed FAIL probe RPC on snaa failed (exit $prc): snaa's RC or rdma_cm is broken" \
			>"$LOG/counts"
	fi
	cleanup_snaa
}
(
	# shellcheck disable=SC2317 # called by setup_snaa
	snaa_skip() {
		echo "$ktap_n $ktap_failed snaa setup: $*" >"$LOG/counts"
		exit 0
	}
	snaa_part
)
if read -r n f why <"$LOG/counts"; then
	ktap_n=$n
	ktap_failed=$f
	case $why in
	"") ;;
	FAIL\ *) ktap_fail "snaa NAAICE RPCs" "${why#FAIL }" ;;
	*)
		ktap_n=$((ktap_n + 1))
		echo "ok $ktap_n - snaa NAAICE RPCs # SKIP $why"
		;;
	esac
else
	ktap_fail "snaa part ended without a result"
fi
rm -rf "$LOG"
ktap_finish
