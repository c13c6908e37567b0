# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The test topologies (sourced through lib.sh): two RDMA devices on a veth
# pair, in one of three setups, each a setup_MODE / cleanup_MODE pair.
#
#   snaa     two snaa devices in two network namespaces over a veth pair
#   interop  rdma_rxe (initial namespace) <-> snaa (namespace snaa-b)
#   rxe      the in-kernel soft-RoCE, rdma_rxe, on both ends: the
#            reference for snaa
#
#   mode snaa                              mode interop
#  +- ns snaa-a ---------------+          +- init ns ----------------+
#  | snaa0 - veth0 198.18.0.1  |          | rxe0 - veth0 198.18.0.1  |
#  +-----------||--------------+          +-----------||-------------+
#  +- ns snaa-b ---------------+          +- ns snaa-b --------------+
#  | snaa1 - veth1 198.18.0.2  |          | snaa1 - veth1 198.18.0.2 |
#  +---------------------------+          +--------------------------+
#  (IPv6: 2001:2::1 and 2001:2::2 on the same links)
#
# Mode rxe:
#
#   init namespace (rdma_rxe in 6.1 only works in the initial namespace)
#  +--------------------------------------------------------------+
#  |  rxe0 - veth0 198.18.0.1/24 2001:2::1/64 ==+                   |
#  |                                             | veth pair         |
#  |  rxe1 - veth1 198.18.0.2/24 2001:2::2/64 ==+                   |
#  +--------------------------------------------------------------+
#
# Both addresses are local, so without help the kernel would deliver
# rxe0 -> 198.18.0.2 through lo, where rdma_rxe (which only accepts
# packets from netdevs that carry an rxe device) drops them.  IPv4 output
# routes honour the oif that rdma_rxe passes (its netdev), so IPv4 goes
# over the veth pair anyway; the receiver then sees a local source
# address, which accept_local=1 lets through.  For IPv6 the local table
# wins over the oif, so policy rules "to <peer> oif <own veth>" are put
# before it.  Neighbour entries are static so that nothing depends on
# ARP/ND between two local addresses.  Loopback (rxe0 <-> rxe0) resolves
# to rxe0's own MAC and stays inside rdma_rxe.
#
# setup_MODE creates the devices and sets
#   DEV_A, DEV_B     the RDMA devices to connect (A is also used alone for
#                    a loopback run)
#   ADDR_A, ADDR_B   their IPv4 addresses
#   NS_A, NS_B       the namespaces of snaa devices (NS_B only in interop)
#   UC_ARGS          extra uc_test arguments for this mode
# or calls snaa_skip; cleanup_MODE removes everything setup_MODE made.
#
# A process costs 50 ms in the test VM and 300 ms on the debug kernel, and
# the tests set these topologies up hundreds of times: each setup is a few
# "ip -batch" runs, and the GIDs are read from sysfs with the shell's own
# read.

# UC has no retransmission, and on a veth pair nothing slows a sender down:
# receive processing runs as softirq work that, on a busy (TCG) CPU, is
# deferred to ksoftirqd while the sender keeps queueing into the
# per-CPU backlog (net.core.netdev_max_backlog, 1000 packets), which then
# drops.  Those losses are the test bed's, not the data path's: make the
# backlog deep enough for the largest message (8 MiB at MTU 256 is 32768
# packets).  Loss on purpose is tested with netem, not here.
uc_backlog() {
	sysctl -qw net.core.netdev_max_backlog=65536 ||
		snaa_skip "cannot set net.core.netdev_max_backlog"
}

# uc_vm_only: refuse to load modules and add devices outside the test VM
# (selftests/vm/run sets SNAA_VM=1; UC_ALLOW_HOST=1 overrides).
uc_vm_only() {
	if [ "${SNAA_VM:-}" != 1 ] && [ "${UC_ALLOW_HOST:-}" != 1 ]; then
		echo "$0: not in the test VM (SNAA_VM is not 1); run it as" \
			"selftests/vm/run -- sh $0 ..." >&2
		snaa_skip "not in the test VM"
	fi
	[ "$(id -u)" = 0 ] || { echo "$0: must run as root" >&2; exit 2; }
}

# ---- GIDs ------------------------------------------------------------------

# snaa_gid_form ADDR: set gid_form to ADDR (IPv4 a.b.c.d, IPv4-mapped
# ::ffff:a.b.c.d, or IPv6) as the kernel's GID files in sysfs print it:
# eight groups of four hex digits.
snaa_gid_form() {
	gf_addr=$1
	gf_ifs=$IFS
	case $gf_addr in
	*.*)
		IFS=.
		# shellcheck disable=SC2086 # split the dotted quad
		set -- ${gf_addr##*:}
		IFS=$gf_ifs
		gid_form=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
			"$1" "$2" "$3" "$4")
		return 0
		;;
	*::*)
		gf_head=${gf_addr%%::*}
		gf_tail=${gf_addr#*::}
		;;
	*)
		gf_head=$gf_addr
		gf_tail=
		;;
	esac
	IFS=:
	# shellcheck disable=SC2086 # split the groups
	set -- $gf_head
	gf_nhead=$#
	# shellcheck disable=SC2086
	set -- $gf_tail
	gf_zeros=$((8 - gf_nhead - $#))
	# the eight groups as printf's arguments: one subshell, not eight
	gf_args=
	# shellcheck disable=SC2086
	for gf_g in $gf_head; do
		gf_args="$gf_args 0x$gf_g"
	done
	while [ "$gf_zeros" -gt 0 ]; do
		gf_args="$gf_args 0"
		gf_zeros=$((gf_zeros - 1))
	done
	# shellcheck disable=SC2086
	for gf_g in $gf_tail; do
		gf_args="$gf_args 0x$gf_g"
	done
	IFS=$gf_ifs
	# shellcheck disable=SC2086 # the groups, split
	gid_form=$(printf '%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x' $gf_args)
}

# snaa_in NS CMD...: run CMD in network namespace NS, or here if NS is
# empty (the topologies' NS_A and NS_B: empty for the initial namespace).
snaa_in() {
	if [ -n "$1" ]; then
		snaa_in_ns=$1
		shift
		ip netns exec "$snaa_in_ns" "$@"
	else
		shift
		"$@"
	fi
}

# snaa_gid_index DEV ADDR: print the index of DEV's (port 1) RoCE v2 GID
# of ADDR (an IPv4 address stands for ::ffff:IPV4, what perftest's -x
# wants); fail if DEV has none.
snaa_gid_index() {
	snaa_gid_form "$2"
	for sg_f in "/sys/class/infiniband/$1/ports/1/gids/"*; do
		read -r sg_v 2>/dev/null <"$sg_f" || continue
		[ "$sg_v" = "$gid_form" ] || continue
		sg_i=${sg_f##*/}
		read -r sg_t 2>/dev/null \
			<"/sys/class/infiniband/$1/ports/1/gid_attrs/types/$sg_i" ||
			continue
		[ "$sg_t" = "RoCE v2" ] || continue
		echo "$sg_i"
		return 0
	done
	return 1
}

# uc_has_gid DEV ADDR: DEV has a RoCE v2 GID of ADDR (as snaa_gid_index).
uc_has_gid() {
	snaa_gid_index "$1" "$2" >/dev/null
}

# uc_has_gids DEV_A DEV_B: DEV_A has the GIDs of 198.18.0.1 and 2001:2::1,
# DEV_B those of 198.18.0.2 and 2001:2::2.
uc_has_gids() {
	uc_has_gid "$1" 198.18.0.1 && uc_has_gid "$1" 2001:2::1 &&
	uc_has_gid "$2" 198.18.0.2 && uc_has_gid "$2" 2001:2::2
}

# uc_wait_gids CLEANUP DEV_A DEV_B: wait until uc_has_gids DEV_A DEV_B;
# if a GID does not appear, run CLEANUP and skip, naming it.
uc_wait_gids() {
	wait_for 10 uc_has_gids "$2" "$3" && return 0
	for g in "$2 198.18.0.1" "$3 198.18.0.2" "$2 2001:2::1" "$3 2001:2::2"; do
		# shellcheck disable=SC2086 # split "DEV ADDR"
		uc_has_gid $g && continue
		"$1"
		snaa_skip "no GID ${g#* } on ${g%% *}"
	done
}

# ---- links -----------------------------------------------------------------

# uc_veth_pair: veth0/veth1 in the init namespace, both addresses local
# (see the top of this file for the routing tricks).
uc_veth_pair() {
	ip -batch - <<-EOF || return 1
		link add veth0 type veth peer name veth1
		addr add 198.18.0.1/24 dev veth0
		addr add 198.18.0.2/24 dev veth1
		addr add 2001:2::1/64 dev veth0 nodad
		addr add 2001:2::2/64 dev veth1 nodad
		link set veth0 up
		link set veth1 up
	EOF
	read -r mac0 </sys/class/net/veth0/address
	read -r mac1 </sys/class/net/veth1/address
	sysctl -qw net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.veth0.accept_local=1 \
		net.ipv4.conf.veth0.rp_filter=0 \
		net.ipv4.conf.veth1.accept_local=1 \
		net.ipv4.conf.veth1.rp_filter=0 || return 1
	ip -batch - <<-EOF || return 1
		neigh replace 198.18.0.2 lladdr $mac1 dev veth0 nud permanent
		neigh replace 198.18.0.1 lladdr $mac0 dev veth1 nud permanent
	EOF
	ip -6 -batch - <<-EOF
		neigh replace 2001:2::2 lladdr $mac1 dev veth0 nud permanent
		neigh replace 2001:2::1 lladdr $mac0 dev veth1 nud permanent
		route add 2001:2::2 dev veth0 table 100
		route add 2001:2::1 dev veth1 table 101
		rule add pref 100 to 2001:2::2 oif veth0 lookup 100
		rule add pref 101 to 2001:2::1 oif veth1 lookup 101
		rule add pref 1000 lookup local
		rule del pref 0 lookup local
	EOF
}

# uc_veth_pair_del: undo uc_veth_pair (what is there of it).
uc_veth_pair_del() {
	ip -6 -force -batch - 2>/dev/null <<-EOF
		rule add pref 0 lookup local
		rule del pref 1000 lookup local
		rule del pref 100
		rule del pref 101
		route flush table 100
		route flush table 101
		link del veth0
	EOF
}

# uc_ns_conf NS DEV ADDR4 ADDR6: in namespace NS, give DEV (a veth end)
# the addresses and bring it and lo up.
uc_ns_conf() {
	ip -n "$1" -batch - <<-EOF
		addr add $3/24 dev $2
		addr add $4/64 dev $2 nodad
		link set $2 up
		link set lo up
	EOF
}

# uc_ns_end NS DEV ADDR4 ADDR6: put DEV into namespace NS, then uc_ns_conf.
uc_ns_end() {
	ip link set "$2" netns "$1" && uc_ns_conf "$@"
}

# uc_snaa_module: load the build tree's snaa.ko; its provider for verbs.
uc_snaa_module() {
	snaa_install_module
	snaa_use_build_provider
	modprobe snaa || snaa_skip "modprobe snaa failed"
}

# ---- modes -----------------------------------------------------------------

setup_rxe() {
	modprobe rdma_rxe || snaa_skip "modprobe rdma_rxe failed"
	modprobe veth || snaa_skip "modprobe veth failed"
	uc_veth_pair || { uc_veth_pair_del; snaa_skip "veth setup failed"; }
	if ! rdma link add rxe0 type rxe netdev veth0 ||
	   ! rdma link add rxe1 type rxe netdev veth1; then
		cleanup_rxe
		snaa_skip "rdma link add ... type rxe failed"
	fi
	uc_wait_gids cleanup_rxe rxe0 rxe1
	# shellcheck disable=SC2034 # for the scripts that source this
	DEV_A=rxe0
	# shellcheck disable=SC2034
	DEV_B=rxe1
	# shellcheck disable=SC2034
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# rdma_rxe reports src_qp 0 in UC receive completions (uc_test.c)
	# shellcheck disable=SC2034
	UC_ARGS=--rxe-src-qp-quirk
}

cleanup_rxe() {
	rdma link delete rxe1 2>/dev/null
	rdma link delete rxe0 2>/dev/null
	uc_veth_pair_del
}

setup_snaa() {
	uc_snaa_module
	# Jumbo frames: the default path MTU is the largest, 4096.
	ip -batch - <<-EOF &&
		netns add snaa-a
		netns add snaa-b
		link add veth0 mtu 9000 type veth peer name veth1 mtu 9000
		link set veth0 netns snaa-a
		link set veth1 netns snaa-b
	EOF
	uc_ns_conf snaa-a veth0 198.18.0.1 2001:2::1 &&
	uc_ns_conf snaa-b veth1 198.18.0.2 2001:2::2 &&
	ip netns exec snaa-a rdma link add snaa0 type snaa netdev veth0 &&
	ip netns exec snaa-b rdma link add snaa1 type snaa netdev veth1 ||
		{ cleanup_snaa; snaa_skip "snaa setup failed"; }
	uc_wait_gids cleanup_snaa snaa0 snaa1
	# shellcheck disable=SC2034 # for the scripts that source this
	DEV_A=snaa0
	# shellcheck disable=SC2034
	DEV_B=snaa1
	# shellcheck disable=SC2034
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# shellcheck disable=SC2034
	NS_A=snaa-a
	# shellcheck disable=SC2034
	NS_B=snaa-b
	# shellcheck disable=SC2034
	UC_ARGS=
}

# uc_snaa_gone: snaa0 and snaa1 are both gone.
uc_snaa_gone() {
	snaa_device_gone snaa0 && snaa_device_gone snaa1
}

# The namespaces go away in the background (cleanup_net), and with them
# snaa0 and snaa1: wait for that, so that a setup right after this one
# can add devices of the same names.
cleanup_snaa() {
	ip -force -batch - 2>/dev/null <<-EOF
		netns del snaa-a
		netns del snaa-b
	EOF
	wait_for 60 uc_snaa_gone
}

setup_interop() {
	uc_snaa_module
	modprobe rdma_rxe || snaa_skip "modprobe rdma_rxe failed"
	ip -batch - <<-EOF &&
		netns add snaa-b
		link add veth0 type veth peer name veth1
		addr add 198.18.0.1/24 dev veth0
		addr add 2001:2::1/64 dev veth0 nodad
		link set veth0 up
		link set veth1 netns snaa-b
	EOF
	uc_ns_conf snaa-b veth1 198.18.0.2 2001:2::2 &&
	rdma link add rxe0 type rxe netdev veth0 &&
	ip netns exec snaa-b rdma link add snaa1 type snaa netdev veth1 ||
		{ cleanup_interop; snaa_skip "interop setup failed"; }
	uc_wait_gids cleanup_interop rxe0 snaa1
	# shellcheck disable=SC2034 # for the scripts that source this
	DEV_A=rxe0
	# shellcheck disable=SC2034
	DEV_B=snaa1
	# shellcheck disable=SC2034
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# shellcheck disable=SC2034
	NS_B=snaa-b
	# shellcheck disable=SC2034
	UC_ARGS=--rxe-src-qp-quirk
}

cleanup_interop() {
	rdma link delete rxe0 2>/dev/null
	ip -force -batch - 2>/dev/null <<-EOF
		link del veth0
		netns del snaa-b
	EOF
}
