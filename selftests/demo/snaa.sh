#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make demo", inside the test VM: two snaa devices in two network
# namespaces over a veth pair; show what rdma and ibv_devinfo report,
# run perftest's ib_write_bw over RC between them, then rping (rdma_cm,
# RC SEND / READ / WRITE) with its ping data, then the counters.
#
#   ns snaa-a: snaa0 - veth0 198.18.0.1  <==>  ns snaa-b: snaa1 - veth1 198.18.0.2
#
# DEMO_VERBOSE=1 also shows the full tool output.
set -eu
here=$(cd "$(dirname "$0")/../snaa" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$here/../.." && pwd)}
# shellcheck source=SCRIPTDIR/../snaa/lib.sh
. "$here/lib.sh"

step() {
	echo
	echo "== $*"
}

# show CMD...: print what runs, then its output.
show() {
	echo "\$ $*"
	"$@"
}

setup_snaa
trap cleanup_snaa EXIT

step "Two snaa devices, one per network namespace, over a veth pair"
show rdma link show
echo "\$ ibv_devinfo -d snaa0   (some of its lines)"
ibv_devinfo -d snaa0 | grep -E 'hca_id|transport|state|active_mtu|link_layer'

step "RDMA WRITE bandwidth over RC, 64 KiB messages (perftest)"
gid_a=$(snaa_gid_index snaa0 198.18.0.1)
gid_b=$(snaa_gid_index snaa1 198.18.0.2)
ip netns exec snaa-b ib_write_bw -d snaa1 -x "$gid_b" -c RC -F -s 65536 \
	-n 2000 >/tmp/demo-server.txt 2>&1 &
sleep 2
echo "\$ ib_write_bw -d snaa0 -x $gid_a -c RC -s 65536 -n 2000 198.18.0.2   (in snaa-a; server in snaa-b)"
ip netns exec snaa-a ib_write_bw -d snaa0 -x "$gid_a" -c RC -F -s 65536 \
	-n 2000 198.18.0.2 >/tmp/demo-client.txt 2>&1
wait
if [ "${DEMO_VERBOSE:-0}" = 1 ]; then
	cat /tmp/demo-client.txt
else
	grep -E '^ *#bytes|^ *65536' /tmp/demo-client.txt
fi

step "rping: rdma_cm connects the QPs; 5 pings of 64 bytes, data shown"
ip netns exec snaa-b rping -s -a 198.18.0.2 -C 5 -S 64 >/dev/null 2>&1 &
sleep 2
echo "\$ rping -c -a 198.18.0.2 -C 5 -S 64 -v -V   (in snaa-a; rping -s in snaa-b)"
ip netns exec snaa-a rping -c -a 198.18.0.2 -C 5 -S 64 -v -V 2>&1 |
	grep 'ping data'
wait

step "Counters of snaa1 (rdma statistic), those that moved"
ip netns exec snaa-b rdma statistic show link snaa1/1 | tr ' ' '\n' |
	paste - - | awk 'NF == 2 && $2 != 0 && $1 !~ /^(link|snaa1)/ { printf "  %-24s %s\n", $1, $2 }'
