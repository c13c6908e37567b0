#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make demo-naaice", inside the test VM: snaa emulating a NAAICE
# accelerator.  naa-server (the software NAA) on snaa1 in namespace
# snaa-b, naa-client on snaa0 in snaa-a running RPCs of every function.
# If snaa cannot do RC + rdma_cm (yet), the same on rdma_rxe instead.
#
#   ns snaa-a: snaa0 - veth0 198.18.0.1  <==>  ns snaa-b: snaa1 - veth1 198.18.0.2
set -u
here=$(cd "$(dirname "$0")/../snaa" && pwd)
naa=$(cd "$here/../../userspace/libnaaice" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$here/../.." && pwd)}
# shellcheck source=SCRIPTDIR/../snaa/lib.sh
. "$here/lib.sh"
modprobe rdma_ucm

demo() {
	echo "== $1: naa-server in ${2:-this namespace}, naa-client in ${3:-this namespace}"
	${2:+ip netns exec "$2"} "$naa/naa-server" &
	srv=$!
	sleep 2
	for f in "add --size 1M --regions 4" "sum --size 4M --regions 2" \
		 "crc32c --size 64K --regions 30" \
		 "matmul --size 64K --regions 2"; do
		# shellcheck disable=SC2086 # f is a list of options
		${3:+ip netns exec "$3"} "$naa/naa-client" --to 198.18.0.2 \
			--count 10 -q --fn $f || rc=1
	done
	kill "$srv"
	wait "$srv"
}

rc=0
(
	# setup_snaa skips (exits 4) without snaa: rxe then
	setup_snaa
	ip netns exec snaa-b "$naa/naa-server" --once >/dev/null 2>&1 &
	probe=$!
	sleep 2
	if ! ip netns exec snaa-a "$naa/naa-client" --to 198.18.0.2 -q \
		--size 64 --regions 1 --timeout 10000 >/dev/null 2>&1; then
		kill "$probe"
		cleanup_snaa
		exit 4
	fi
	wait
	demo snaa snaa-b snaa-a
	cleanup_snaa
	exit $rc
)
case $? in
0) exit 0 ;;
4) echo "== snaa cannot do RC + rdma_cm here; the same on rdma_rxe" ;;
*) exit 1 ;;
esac
setup_rxe
demo rdma_rxe
cleanup_rxe
exit $rc
