#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# snaa device life cycle: module load/unload, rdma link add/delete,
# duplicates and bad arguments, port state from carrier, GIDs, MTU,
# netdev removal, network namespaces, renames, provider binding.
#
#   init namespace                              namespace snaa-ns
#  +-------------------------------------+     +-----------------------+
#  | snaa0 / snaa_t                      |     |                       |
#  |   veth0 198.18.0.1/24 2001:2::1/64 =|=====|  (later)              |
#  |   veth1 198.18.0.2/24  (peer)       |     |                       |
#  |                                     |     | snaa_ns               |
#  |   vethm0 (peer) ====================|=====|= vethm1 198.18.1.2/24 |
#  +-------------------------------------+     +-----------------------+
#
# Runs as root inside the test VM: selftests/vm/run sh selftests/snaa/device.sh
#
# Features: device
set -u
. "$(dirname "$0")/lib.sh"

# devinfo_field DEV FIELD: value of "FIELD:" in ibv_devinfo -v output.
devinfo_field() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n 1
}

port_attr() {
	cat "/sys/class/infiniband/$1/ports/1/$2"
}

ktap_header snaa-device
snaa_install_module
snaa_use_build_provider

# --- module --------------------------------------------------------------
check "modprobe snaa" modprobe snaa
check "module is live" test "$(cat /sys/module/snaa/initstate)" = live
check "rdma link type snaa is offered" sh -c 'rdma link add 2>&1; true'

ip link add veth0 type veth peer name veth1
ip addr add 198.18.0.1/24 dev veth0
ip addr add 2001:2::1/64 dev veth0 nodad
ip addr add 198.18.0.2/24 dev veth1
ip link set veth0 up
ip link set veth1 up
mac=$(cat /sys/class/net/veth0/address)

# --- link add --------------------------------------------------------------
check "rdma link add snaa0 type snaa netdev veth0" \
	rdma link add snaa0 type snaa netdev veth0
check "snaa0 in sysfs" snaa_device_exists snaa0
out=$(rdma link show snaa0/1 2>&1)
check_match "rdma link: state ACTIVE, netdev veth0" "$out" \
	'^link snaa0/1 state ACTIVE physical_state LINK_UP netdev veth0 *$'
check_eq "node type CA" "$(cat /sys/class/infiniband/snaa0/node_type)" \
	"1: CA"
check_eq "link layer Ethernet" "$(port_attr snaa0 link_layer)" Ethernet
check_eq "sysfs port state ACTIVE" "$(port_attr snaa0 state)" "4: ACTIVE"
check_eq "parent modalias" \
	"$(cat /sys/class/infiniband/snaa0/device/modalias)" "platform:snaa"

# node GUID is the EUI-64 of the MAC (ff:fe inserted, U/L bit flipped)
guid=$(printf '%s' "$mac" | {
	IFS=: read -r a b c d e f
	printf '%02x%s:%sff:fe%s:%s%s' $((0x$a ^ 2)) "$b" "$c" "$d" "$e" "$f"
})
check_eq "node_guid from MAC" \
	"$(cat /sys/class/infiniband/snaa0/node_guid)" "$guid"

# --- provider binding and ibv_devinfo ------------------------------------
out=$(ibv_devices 2>&1)
check_match "ibv_devices lists snaa0" "$out" \
	"^[[:space:]]+snaa0[[:space:]]+$(echo "$guid" | tr -d :)\$"
out=$(env -u RDMAV_DRIVERS ibv_devices 2>&1)
check_nomatch "without the snaa provider snaa0 is not bound" "$out" snaa0
err=$(ibv_devinfo -v -d snaa0 2>&1 >/dev/null)
check_eq "ibv_devinfo prints no warning" "$err" ""
check_eq "transport" "$(devinfo_field snaa0 transport)" "InfiniBand (0)"
check_eq "vendor_id" "$(devinfo_field snaa0 vendor_id)" "0xffffff"
check_eq "phys_port_cnt" "$(devinfo_field snaa0 phys_port_cnt)" "1"
check_eq "port state" "$(devinfo_field snaa0 state)" "PORT_ACTIVE (4)"
check_eq "phys_state" "$(devinfo_field snaa0 phys_state)" "LINK_UP (5)"
check_eq "link_layer" "$(devinfo_field snaa0 link_layer)" "Ethernet"
check_eq "max_mtu" "$(devinfo_field snaa0 max_mtu)" "4096 (5)"
check_eq "active_mtu at netdev MTU 1500" \
	"$(devinfo_field snaa0 active_mtu)" "1024 (3)"
check_eq "port_lid" "$(devinfo_field snaa0 port_lid)" "0"
check_eq "max_msg_sz" "$(devinfo_field snaa0 max_msg_sz)" "0x40000000"
check_eq "pkey table length" "$(devinfo_field snaa0 max_pkeys)" "1"
check_eq "atomic_cap" "$(devinfo_field snaa0 atomic_cap)" "ATOMIC_HCA (1)"
check_eq "max_qp_rd_atom" "$(devinfo_field snaa0 max_qp_rd_atom)" "128"
check_eq "max_qp_init_rd_atom" "$(devinfo_field snaa0 max_qp_init_rd_atom)" "128"
check_eq "max_res_rd_atom" "$(devinfo_field snaa0 max_res_rd_atom)" "2097152"
check_eq "max_qp" "$(devinfo_field snaa0 max_qp)" "16384"
check_eq "max_qp_wr" "$(devinfo_field snaa0 max_qp_wr)" "16384"
check_eq "max_sge" "$(devinfo_field snaa0 max_sge)" "32"
check_eq "max_cq" "$(devinfo_field snaa0 max_cq)" "16384"
check_eq "max_cqe" "$(devinfo_field snaa0 max_cqe)" "65536"
check_eq "max_mr" "$(devinfo_field snaa0 max_mr)" "65536"
check_eq "max_mr_size" "$(devinfo_field snaa0 max_mr_size)" "0x10000000000"
check_eq "max_pd" "$(devinfo_field snaa0 max_pd)" "65536"
check_eq "max_srq" "$(devinfo_field snaa0 max_srq)" "16384"
check_eq "max_srq_wr" "$(devinfo_field snaa0 max_srq_wr)" "16384"
check_eq "max_srq_sge" "$(devinfo_field snaa0 max_srq_sge)" "32"
check_eq "max_ah" "$(devinfo_field snaa0 max_ah)" "65536"

# --- GIDs ------------------------------------------------------------------
gids=$(ibv_devinfo -v -d snaa0 2>&1 | grep 'GID\[')
ll=$(printf '%s' "$mac" | {
	IFS=: read -r a b c d e f
	printf 'fe80::%x:%x:%x:%x' $(((0x$a ^ 2) << 8 | 0x$b)) \
		$((0x$c << 8 | 0xff)) $((0xfe00 | 0x$d)) $((0x$e << 8 | 0x$f))
})
check_match "GID: link-local from MAC, RoCE v2" "$gids" \
	"GID\[ *[0-9]+\]:[[:space:]]+$ll, RoCE v2"
check_match "GID: IPv4 198.18.0.1, RoCE v2" "$gids" \
	'GID\[ *[0-9]+\]:[[:space:]]+::ffff:198.18.0.1, RoCE v2$'
check_match "GID: IPv6 2001:2::1, RoCE v2" "$gids" \
	'GID\[ *[0-9]+\]:[[:space:]]+2001:2::1, RoCE v2$'
check_nomatch "no RoCE v1 GIDs" "$gids" 'RoCE v1'
ip addr add 198.18.0.3/24 dev veth0
wait_for 5 sh -c "ibv_devinfo -v -d snaa0 | grep -q '::ffff:198.18.0.3'"
check_match "GID follows a new address" \
	"$(ibv_devinfo -v -d snaa0 2>&1 | grep 'GID\[')" '::ffff:198.18.0.3, RoCE v2$'
ip addr del 198.18.0.3/24 dev veth0
wait_for 5 sh -c "! ibv_devinfo -v -d snaa0 | grep -q '::ffff:198.18.0.3'"
check_nomatch "GID goes with the address" \
	"$(ibv_devinfo -v -d snaa0 2>&1 | grep 'GID\[')" '198.18.0.3'

# --- MTU -------------------------------------------------------------------
for m in "9000 4096 (5)" "4180 4096 (5)" "4179 2048 (4)" "2132 2048 (4)" \
	 "1108 1024 (3)" "596 512 (2)" "340 256 (1)" "1500 1024 (3)"; do
	set -- $m
	ip link set veth0 mtu "$1"
	check_eq "active_mtu at netdev MTU $1" \
		"$(devinfo_field snaa0 active_mtu)" "$2 $3"
done

# --- carrier -> port state, with async events ------------------------------
ev=$(mktemp)
ibv_asyncwatch -d snaa0 > "$ev" 2>&1 &
watch=$!
# Events before the watcher has its context are not its: wait for the
# context's async event file (the core's "[infinibandevent]") to exist.
wait_for 60 sh -c "ls -l /proc/$watch/fd 2>/dev/null | grep -q infinibandevent"
ip link set veth1 down		# veth0 loses carrier
check_eq "carrier off: port DOWN" "$(devinfo_field snaa0 state)" "PORT_DOWN (1)"
check_eq "carrier off: phys_state DISABLED" \
	"$(devinfo_field snaa0 phys_state)" "DISABLED (3)"
check_match "carrier off: rdma link DOWN" "$(rdma link show snaa0/1)" \
	'state DOWN physical_state DISABLED'
ip link set veth1 up
wait_for 5 sh -c "rdma link show snaa0/1 | grep -q 'state ACTIVE'"
check_eq "carrier on: port ACTIVE" "$(devinfo_field snaa0 state)" \
	"PORT_ACTIVE (4)"
ip link set veth0 down
check_eq "admin down: port DOWN" "$(devinfo_field snaa0 state)" "PORT_DOWN (1)"
ip link set veth0 up
wait_for 5 sh -c "rdma link show snaa0/1 | grep -q 'state ACTIVE'"
check_eq "admin up: port ACTIVE" "$(devinfo_field snaa0 state)" \
	"PORT_ACTIVE (4)"
sleep 0.5
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null
events=$(grep -oE 'IBV_EVENT_PORT_(ERR|ACTIVE)' "$ev" | tr '\n' ' ')
check_eq "async events in order" "$events" \
	"IBV_EVENT_PORT_ERR IBV_EVENT_PORT_ACTIVE IBV_EVENT_PORT_ERR IBV_EVENT_PORT_ACTIVE "
rm -f "$ev"

# --- duplicates and bad arguments ------------------------------------------
out=$(rdma link add snaa1 type snaa netdev veth0 2>&1)
rc=$?
check_eq "second link on veth0 fails" "$rc" 1
check_match "second link on veth0: File exists" "$out" 'File exists'
check "second link left no device" snaa_device_gone snaa1
check_fails "link add on a missing netdev fails" \
	rdma link add snaa2 type snaa netdev nosuchdev0
check "missing netdev left no device" snaa_device_gone snaa2
check_fails "link add on loopback (not Ethernet) fails" \
	rdma link add snaa3 type snaa netdev lo
check "loopback left no device" snaa_device_gone snaa3
check_fails "duplicate device name fails" \
	rdma link add snaa0 type snaa netdev veth1
check "snaa0 still bound to veth0" \
	sh -c "rdma link show snaa0/1 | grep -q 'netdev veth0'"

# --- rename: the provider still binds --------------------------------------
check "rename snaa0 -> snaa_t" rdma dev set snaa0 name snaa_t
check "renamed device in sysfs" snaa_device_exists snaa_t
check_eq "renamed device still bound to the provider" \
	"$(devinfo_field snaa_t state)" "PORT_ACTIVE (4)"
check "any name binds (foo7 on veth1)" \
	rdma link add foo7 type snaa netdev veth1
check_eq "foo7 bound to the provider" "$(devinfo_field foo7 link_layer)" \
	Ethernet

# --- delete ------------------------------------------------------------------
check "rdma link delete foo7" rdma link delete foo7
check "foo7 gone" snaa_device_gone foo7
check_fails "deleting it again fails" rdma link delete foo7

# --- netdev removal ----------------------------------------------------------
# A leaked netdev reference would block "ip link del" forever.
check "ip link del veth0 completes" timeout 30 ip link del veth0
check "netdev removal removes the device" wait_for 10 snaa_device_gone snaa_t
check_nomatch "rdma link no longer lists it" "$(rdma link show 2>&1)" snaa_t

# --- network namespace -------------------------------------------------------
ip netns add snaa-ns
ip link add vethm0 type veth peer name vethm1 netns snaa-ns
ip link set vethm0 up
ip -n snaa-ns addr add 198.18.1.2/24 dev vethm1
ip -n snaa-ns link set vethm1 up
check "link add inside a namespace" \
	ip netns exec snaa-ns rdma link add snaa_ns type snaa netdev vethm1
check_match "namespace device ACTIVE" \
	"$(ip netns exec snaa-ns rdma link show snaa_ns/1 2>&1)" \
	'state ACTIVE physical_state LINK_UP netdev vethm1'
wait_for 5 sh -c "ibv_devinfo -v -d snaa_ns | grep -q '::ffff:198.18.1.2'"
check_match "namespace address is a GID" \
	"$(ibv_devinfo -v -d snaa_ns 2>&1 | grep 'GID\[')" \
	'::ffff:198.18.1.2, RoCE v2$'
ip netns del snaa-ns
check "namespace deletion removes the device" \
	wait_for 10 snaa_device_gone snaa_ns

# --- rmmod with devices present, autoload ------------------------------------
ip link add veth2 type veth peer name veth3
ip link set veth2 up
ip link set veth3 up
rdma link add snaa4 type snaa netdev veth2
rdma link add snaa5 type snaa netdev veth3
check "rmmod with two devices" rmmod snaa
check "devices gone after rmmod" \
	sh -c '! ls /sys/class/infiniband | grep -q snaa'
check "module gone" test ! -e /sys/module/snaa
check "rdma link add autoloads the module" \
	rdma link add snaa6 type snaa netdev veth2
check "autoloaded module is live" test -e /sys/module/snaa
check "cleanup: rmmod" rmmod snaa
ip link del veth2

ktap_finish
