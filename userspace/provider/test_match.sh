#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# test_match.sh /abs/path/libsnaa  -- KTAP
#
# Device matching through the real, installed libibverbs (IBV_DEVICES=
# names another ibv_devices, e.g. that of the rdma-core tree the provider
# was built in): a fake sysfs tree (SYSFS_PATH) describes one uverbs
# device, the build-tree provider is loaded with RDMAV_DRIVERS and
# ibv_devices shows whether it claimed the device.  libibverbs also stat()s /dev/infiniband/uverbsN, so each
# run happens in a private mount namespace with a tmpfs over /dev; the
# host's /dev is untouched.  Needs root (unshare -m) and a host without
# the RDMA core loaded (otherwise libibverbs enumerates devices over
# netlink and ignores the fake tree); skips otherwise.

set -u
prefix=${1:?usage: $0 /abs/path/libsnaa}

skip() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	exit 0
}

ibv_devices=${IBV_DEVICES:-ibv_devices}
command -v "$ibv_devices" >/dev/null 2>&1 || skip "no $ibv_devices"
[ -e /sys/class/infiniband_verbs ] &&
	skip "RDMA core is loaded: libibverbs would use netlink, not the fake sysfs"
unshare -m sh -c 'mount -t tmpfs none /dev' 2>/dev/null ||
	skip "cannot mount in a private mount namespace (needs root)"

hdr=$(dirname "$0")/../../include/uapi/rdma/snaa-abi.h
abi=$(sed -n 's/^#define[[:space:]]*SNAA_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$hdr")
[ -n "$abi" ] || { echo "cannot read SNAA_ABI_VERSION from $hdr" >&2; exit 1; }
bad_abi=$((abi + 1))

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# mk_sysfs IBDEV MODALIAS ABI
mk_sysfs() {
	rm -rf "$tmp/sys"
	mkdir -p "$tmp/sys/class/infiniband_verbs/uverbs0" \
		 "$tmp/sys/class/infiniband/$1/device"
	echo 6 > "$tmp/sys/class/infiniband_verbs/abi_version"
	echo "$1" > "$tmp/sys/class/infiniband_verbs/uverbs0/ibdev"
	echo 231:192 > "$tmp/sys/class/infiniband_verbs/uverbs0/dev"
	echo "$3" > "$tmp/sys/class/infiniband_verbs/uverbs0/abi_version"
	echo "1: CA" > "$tmp/sys/class/infiniband/$1/node_type"
	echo "$2" > "$tmp/sys/class/infiniband/$1/device/modalias"
}

# run_devices [ENV=VAL...]: ibv_devices output (stdout+stderr) in $tmp/out
run_devices() {
	# shellcheck disable=SC2016 # $0: the inner shell's, $ibv_devices
	env SYSFS_PATH="$tmp/sys" RDMAV_DRIVERS="$prefix" \
		IBV_SHOW_WARNINGS=1 "$@" \
		unshare -m sh -c 'mount -t tmpfs none /dev &&
			mkdir /dev/infiniband &&
			: > /dev/infiniband/uverbs0 &&
			exec "$0"' "$ibv_devices" > "$tmp/out" 2>&1
}

listed() {
	grep -Eq "^[[:space:]]+$1[[:space:]]" "$tmp/out"
}

n=0
failed=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		sed 's/^/# /' "$tmp/out"
	fi
}

echo "KTAP version 1"
echo "1..5"

mk_sysfs snaa0 platform:snaa "$abi"
run_devices LD_DEBUG=files
rc=1
listed snaa0 && grep -q "calling init: $prefix-rdmav[0-9]*\.so" "$tmp/out" &&
	! grep -q "couldn't load driver" "$tmp/out" && rc=0
result $rc "build-tree provider loads (no load warning) and claims snaa0 by modalias"

mk_sysfs foo7 platform:snaa "$abi"
run_devices
rc=1; listed foo7 && rc=0
result $rc "match does not depend on the device name (foo7 claimed)"

mk_sysfs snaa0 platform:snaax "$abi"
run_devices
rc=1
! listed snaa0 && grep -q "no userspace device-specific driver found for snaa0" "$tmp/out" && rc=0
result $rc "name alone does not match (snaa0 with modalias platform:snaax not claimed)"

mk_sysfs snaa0 platform:snaa "$bad_abi"
run_devices
rc=1
! listed snaa0 &&
	grep -q "Driver snaa does not support the kernel ABI of $bad_abi" "$tmp/out" && rc=0
result $rc "kernel uverbs ABI $bad_abi is refused (provider accepts $abi..$abi)"

if [ -e /etc/libibverbs.d/snaa.driver ]; then
	n=$((n + 1))
	echo "ok $n - control: without the provider snaa0 is not claimed # SKIP snaa provider installed"
else
	mk_sysfs snaa0 platform:snaa "$abi"
	run_devices RDMAV_DRIVERS=/nonexistent/libsnaa
	rc=1; ! listed snaa0 && rc=0
	result $rc "control: without the provider snaa0 is not claimed"
fi

echo "# test_match: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
