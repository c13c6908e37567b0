#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make bench-naaice", inside the test VM: NAAICE RPC figures with
# naa-server and naa-client (userspace/libnaaice), on rdma_rxe and, if it
# can do RC + rdma_cm, on snaa, in the same boot: the round-trip time of
# small RPCs (1 B - 1 KiB, function sum, median of NAAICE_BENCH_RTT_N)
# and the throughput of large ones (4 MiB - 512 MiB, function sum, whose
# result is 8 bytes; MB/s = bytes written / round trip, the NAA's sum
# included).  NAAICE_BENCH_MAX caps the largest size (bytes).
#
#   rxe: rxe0 - veth0 198.18.0.1 <=> rxe1 - veth1 198.18.0.2 (init ns)
#   snaa: ns snaa-a: snaa0 198.18.0.1 <=> ns snaa-b: snaa1 198.18.0.2
set -u
here=$(cd "$(dirname "$0")/../selftests/snaa" && pwd)
naa=$(cd "$here/../../userspace/libnaaice" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$here/../.." && pwd)}
# shellcheck source=../selftests/snaa/lib.sh
. "$here/lib.sh"
modprobe rdma_ucm
uc_backlog
rtt_n=${NAAICE_BENCH_RTT_N:-200}
max=${NAAICE_BENCH_MAX:-536870912}

# figures DEV [NS_SRV NS_CLI]: one table block
figures() {
	dev=$1
	${2:+ip netns exec "$2"} "$naa/naa-server" -q &
	srv=$!
	sleep 2
	for s in 1 64 1024; do
		line=$(${3:+ip netns exec "$3"} "$naa/naa-client" --to 198.18.0.2 \
			-q --fn sum --regions 1 --size $s --count "$rtt_n" \
			--timeout 120000 2>&1 | grep '^naa-client: ')
		v=$(echo "$line" | sed -n 's/.*median \([0-9.]*\) ms.*/\1 ms median/p')
		printf '%-9s RPC round trip %10s B: %s\n' "$dev" "$s" "${v:-FAILED}"
	done
	for s in 4194304 16777216 67108864 268435456 536870912; do
		[ "$s" -le "$max" ] || continue
		line=$(${3:+ip netns exec "$3"} "$naa/naa-client" --to 198.18.0.2 \
			-q --fn sum --regions 1 --size $s --count 2 \
			--timeout 600000 2>&1 | grep '^naa-client: ')
		v=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) MB\/s$/\1 MB\/s/p')
		printf '%-9s RPC throughput %10s B: %s\n' "$dev" "$s" "${v:-FAILED}"
	done
	kill "$srv"
	wait "$srv"
}

setup_rxe
figures rdma_rxe
cleanup_rxe
(
	setup_snaa
	ip netns exec snaa-b "$naa/naa-server" --once >/dev/null 2>&1 &
	probe=$!
	sleep 2
	if ip netns exec snaa-a "$naa/naa-client" --to 198.18.0.2 -q \
		--size 64 --regions 1 --timeout 10000 >/dev/null 2>&1; then
		wait
		figures snaa snaa-b snaa-a
	else
		kill "$probe"
		echo "snaa      no RC + rdma_cm on snaa here: not measured"
	fi
	cleanup_snaa
)
