#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make demo", inside the test VM: create an snaa device on a veth pair
# and show what rdma and ibv_devinfo report.
set -eu
. "$(dirname "$0")/../selftests/snaa/lib.sh"
snaa_install_module
snaa_use_build_provider
set -x
modprobe snaa
ip link add veth0 type veth peer name veth1
ip addr add 198.18.0.1/24 dev veth0
ip addr add 198.18.0.2/24 dev veth1
ip link set veth0 up
ip link set veth1 up
rdma link add snaa0 type snaa netdev veth0
rdma link show
ibv_devices
ibv_devinfo -v -d snaa0
