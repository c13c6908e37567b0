#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make demo", inside the test VM: two snaa devices in two network
# namespaces over a veth pair; show what rdma and ibv_devinfo report,
# then run perftest's ib_write_bw over UC between them.
#
#   ns snaa-a: snaa0 - veth0 198.18.0.1  <==>  ns snaa-b: snaa1 - veth1 198.18.0.2
set -eu
here=$(cd "$(dirname "$0")/../selftests/snaa" && pwd)
UC_HERE=$here
UC_TEST_SOURCED=1
# shellcheck source=../selftests/snaa/uc_test.sh
. "$here/uc_test.sh"
setup_snaa
trap cleanup_snaa EXIT

set -x
rdma link show
ibv_devices
ibv_devinfo -v -d snaa0
ip netns exec snaa-b ib_write_bw -d snaa1 -x "$(snaa_gid_index snaa1 198.18.0.2)" -c UC -F \
	-s 65536 -n 2000 >/tmp/demo-server.txt 2>&1 &
sleep 2
ip netns exec snaa-a ib_write_bw -d snaa0 -x "$(snaa_gid_index snaa0 198.18.0.1)" -c UC -F \
	-s 65536 -n 2000 198.18.0.2
wait
rdma statistic show link snaa0/1
