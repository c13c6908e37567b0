#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# In-VM half of regen.sh: veth0 (rxe0, initial netns) <-> veth1 (netns
# snaapeer, no RDMA device); rxe_wire plays the remote side on veth1.
# Writes go to a tmpfs in the VM, so the vectors are printed between
# "=== BEGIN name" / "=== END name" lines for regen.sh to pick up.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)

ip link add veth0 type veth peer name veth1
ip netns add snaapeer
ip link set veth1 netns snaapeer
ip addr add 198.18.0.1/24 dev veth0
ip -6 addr add 2001:2::1/64 dev veth0 nodad
ip link set veth0 up
ip -n snaapeer link set lo up
ip -n snaapeer addr add 198.18.0.2/24 dev veth1
ip -n snaapeer -6 addr add 2001:2::2/64 dev veth1 nodad
ip -n snaapeer link set veth1 up
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth0
sleep 1

echo "# kernel $(uname -r)"
rc=0
"$here/rxe_wire" rxe0 snaapeer veth1 198.18.0.1 198.18.0.2 "$tmp/v4.hex" || rc=1
"$here/rxe_wire" rxe0 snaapeer veth1 2001:2::1 2001:2::2 "$tmp/v6.hex" || rc=1
echo "# rxe counters:"
for c in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
	echo "#   ${c##*/} $(cat "$c")"
done
for f in v4 v6; do
	echo "=== BEGIN $f"
	cat "$tmp/$f.hex"
	echo "=== END $f"
done
exit $rc
