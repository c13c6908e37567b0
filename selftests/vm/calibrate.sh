#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# How fast is this test VM today?  Runs a fixed mix of the work the VM
# tests do (shell arithmetic, fork and exec, netlink, a network namespace
# and veth pair, pipes and a checksum) and prints the wall time it took:
#
#     calibrate: MILLISECONDS
#
# scripts/check.sh boots it once per run and scales every test timeout
# by MILLISECONDS / its reference (Documentation/testing.rst, "Time
# limits on a slow machine").
# Runs as root inside the test VM (selftests/vm/run), never on the host.
set -eu

[ "${SNAA_VM:-}" = 1 ] || { echo "$0: run it inside selftests/vm/run" >&2; exit 2; }

ms() {
	echo $(($(date +%s%N) / 1000000))
}

t0=$(ms)
i=0
while [ "$i" -lt 20000 ]; do
	i=$((i + 1))
done
for i in 1 2 3 4 5; do
	ip link add cal0 type veth peer name cal1
	ip link del cal0
done
ip netns add snaa-cal
ip netns del snaa-cal
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	/bin/true
done
dd if=/dev/zero bs=64k count=500 2>/dev/null | cksum >/dev/null
echo "calibrate: $(($(ms) - t0))"
