#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# UC data path test: sets up two RDMA devices and runs uc_test (uc_test.c)
# between them over IPv4 and IPv6 RoCE v2 GIDs, and on one device in
# loopback.  Runs as root inside the test VM, never on the host:
#
#     selftests/vm/run --timeout 900 -- sh selftests/snaa/uc_test.sh rxe
#
# Modes (one setup_MODE / cleanup_MODE function pair each):
#   rxe      the in-kernel soft-RoCE, rdma_rxe: the reference for snaa
#   snaa     two snaa devices in two network namespaces over a veth pair
#   interop  rdma_rxe (initial namespace) <-> snaa (namespace snaa-b)
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
# Output: each uc_test run is one KTAP document (results at line start),
# preceded by a "# ==== ..." line.  Exit status: 0 iff every run passed,
# 1 otherwise, 2 usage error, 4 (skip) if the setup is impossible here.
#
# Environment: UC_TEST=/path/to/uc_test to use a prebuilt binary; else
# selftests/snaa/uc_test if it is up to date (make -C selftests/snaa),
# else it is built into a temporary directory (the VM's /tmp): lib.sh's
# snaa_build.
set -u

# uc_perftest.sh, verbs.sh and selftests/demo/*.sh set UC_HERE before sourcing
# this file (lib.sh would find the tree from their $0)
UC_HERE=${UC_HERE:-$(cd "$(dirname "$0")" && pwd)}
SNAA_TOP=${SNAA_TOP:-$(cd "$UC_HERE/../.." && pwd)}
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

uc_usage() {
	echo "usage: $0 rxe|snaa|interop" >&2
	echo "  rxe      rdma_rxe on a veth pair (reference run)" >&2
	echo "  snaa     snaa <-> snaa in two namespaces, and snaa loopback" >&2
	echo "  interop  rdma_rxe <-> snaa, both directions" >&2
}

uc_log() {
	echo "# $*"
}

# ---- common setup --------------------------------------------------------

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

# uc_has_gid DEV TEXT: DEV lists GID TEXT (as ibv_devinfo prints it).
uc_has_gid() {
	ibv_devinfo -v -d "$1" 2>/dev/null | grep -q "[[:space:]]$2, RoCE v2\$"
}

# uc_wait_gids CLEANUP DEV_A DEV_B: wait until DEV_A has the GIDs of
# 198.18.0.1 and 2001:2::1 and DEV_B those of 198.18.0.2 and 2001:2::2;
# if one does not appear, run CLEANUP and skip.
uc_wait_gids() {
	for g in "$2 ::ffff:198.18.0.1" "$3 ::ffff:198.18.0.2" \
		 "$2 2001:2::1" "$3 2001:2::2"; do
		# shellcheck disable=SC2086 # split "DEV GID"
		wait_for 10 uc_has_gid $g ||
			{ "$1"; snaa_skip "no GID ${g#* } on ${g%% *}"; }
	done
}

# uc_veth_pair: veth0/veth1 in the init namespace, both addresses local
# (see the top of this file for the routing tricks).
uc_veth_pair() {
	ip link add veth0 type veth peer name veth1 || return 1
	ip addr add 198.18.0.1/24 dev veth0 &&
	ip addr add 198.18.0.2/24 dev veth1 &&
	ip addr add 2001:2::1/64 dev veth0 nodad &&
	ip addr add 2001:2::2/64 dev veth1 nodad &&
	ip link set veth0 up &&
	ip link set veth1 up || return 1
	mac0=$(cat /sys/class/net/veth0/address)
	mac1=$(cat /sys/class/net/veth1/address)
	for c in all veth0 veth1; do
		sysctl -qw "net.ipv4.conf.$c.accept_local=1" \
			"net.ipv4.conf.$c.rp_filter=0" || return 1
	done
	ip neigh replace 198.18.0.2 lladdr "$mac1" dev veth0 nud permanent &&
	ip neigh replace 198.18.0.1 lladdr "$mac0" dev veth1 nud permanent &&
	ip -6 neigh replace 2001:2::2 lladdr "$mac1" dev veth0 nud permanent &&
	ip -6 neigh replace 2001:2::1 lladdr "$mac0" dev veth1 nud permanent ||
		return 1
	ip -6 route add 2001:2::2 dev veth0 table 100 &&
	ip -6 route add 2001:2::1 dev veth1 table 101 &&
	ip -6 rule add pref 100 to 2001:2::2 oif veth0 lookup 100 &&
	ip -6 rule add pref 101 to 2001:2::1 oif veth1 lookup 101 &&
	ip -6 rule add pref 1000 lookup local &&
	ip -6 rule del pref 0 lookup local || return 1
}

uc_veth_pair_del() {
	ip -6 rule add pref 0 lookup local 2>/dev/null
	ip -6 rule del pref 1000 lookup local 2>/dev/null
	ip -6 rule del pref 100 2>/dev/null
	ip -6 rule del pref 101 2>/dev/null
	ip -6 route flush table 100 2>/dev/null
	ip -6 route flush table 101 2>/dev/null
	ip link del veth0 2>/dev/null
}

# ---- modes ---------------------------------------------------------------
# setup_MODE creates the devices and sets
#   DEV_A, DEV_B     the RDMA devices to connect (A is also used alone for
#                    the loopback run)
#   ADDR_A, ADDR_B   their IPv4 addresses (uc_perftest.sh: GIDs, TCP)
#   UC_ARGS          extra uc_test arguments for this mode
# or calls snaa_skip; cleanup_MODE removes everything setup_MODE made.

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
	DEV_A=rxe0
	DEV_B=rxe1
	# shellcheck disable=SC2034 # used by uc_perftest.sh
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# rdma_rxe reports src_qp 0 in UC receive completions (uc_test.c)
	UC_ARGS=--rxe-src-qp-quirk
}

cleanup_rxe() {
	rdma link delete rxe1 2>/dev/null
	rdma link delete rxe0 2>/dev/null
	uc_veth_pair_del
}

# uc_ns_end NS DEV ADDR4 ADDR6: put DEV (a veth end) into namespace NS
# with the addresses and bring it up.
uc_ns_end() {
	ip link set "$2" netns "$1" &&
	ip -n "$1" addr add "$3/24" dev "$2" &&
	ip -n "$1" addr add "$4/64" dev "$2" nodad &&
	ip -n "$1" link set "$2" up &&
	ip -n "$1" link set lo up
}

uc_snaa_module() {
	snaa_install_module
	snaa_use_build_provider
	modprobe snaa || snaa_skip "modprobe snaa failed"
}

setup_snaa() {
	uc_snaa_module
	# Jumbo frames: the default path MTU is the largest, 4096.
	ip netns add snaa-a && ip netns add snaa-b &&
	ip link add veth0 mtu 9000 type veth peer name veth1 mtu 9000 &&
	uc_ns_end snaa-a veth0 198.18.0.1 2001:2::1 &&
	uc_ns_end snaa-b veth1 198.18.0.2 2001:2::2 &&
	ip netns exec snaa-a rdma link add snaa0 type snaa netdev veth0 &&
	ip netns exec snaa-b rdma link add snaa1 type snaa netdev veth1 ||
		{ cleanup_snaa; snaa_skip "snaa setup failed"; }
	uc_wait_gids cleanup_snaa snaa0 snaa1
	DEV_A=snaa0
	DEV_B=snaa1
	# shellcheck disable=SC2034 # used by uc_perftest.sh
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# shellcheck disable=SC2034
	NS_A=snaa-a
	# shellcheck disable=SC2034
	NS_B=snaa-b
	UC_ARGS=
}

# The namespaces go away in the background (cleanup_net), and with them
# snaa0 and snaa1: wait for that, so that a setup right after this one
# can add devices of the same names.
cleanup_snaa() {
	ip netns del snaa-a 2>/dev/null
	ip netns del snaa-b 2>/dev/null
	wait_for 60 snaa_device_gone snaa0
	wait_for 60 snaa_device_gone snaa1
}

setup_interop() {
	uc_snaa_module
	modprobe rdma_rxe || snaa_skip "modprobe rdma_rxe failed"
	ip netns add snaa-b &&
	ip link add veth0 type veth peer name veth1 &&
	ip addr add 198.18.0.1/24 dev veth0 &&
	ip addr add 2001:2::1/64 dev veth0 nodad &&
	ip link set veth0 up &&
	uc_ns_end snaa-b veth1 198.18.0.2 2001:2::2 &&
	rdma link add rxe0 type rxe netdev veth0 &&
	ip netns exec snaa-b rdma link add snaa1 type snaa netdev veth1 ||
		{ cleanup_interop; snaa_skip "interop setup failed"; }
	uc_wait_gids cleanup_interop rxe0 snaa1
	DEV_A=rxe0
	DEV_B=snaa1
	# shellcheck disable=SC2034 # used by uc_perftest.sh
	ADDR_A=198.18.0.1
	# shellcheck disable=SC2034
	ADDR_B=198.18.0.2
	# shellcheck disable=SC2034
	NS_B=snaa-b
	UC_ARGS=--rxe-src-qp-quirk
}

cleanup_interop() {
	rdma link delete rxe0 2>/dev/null
	ip link del veth0 2>/dev/null
	ip netns del snaa-b 2>/dev/null
}

# ---- runs ----------------------------------------------------------------

uc_main() {
	[ $# = 1 ] || { uc_usage; exit 2; }
	mode=$1
	case $mode in
	rxe|snaa|interop) ;;
	-h|--help) uc_usage; exit 0 ;;
	*) uc_usage; exit 2 ;;
	esac
	uc_vm_only
	snaa_build UC_TEST uc_test
	uc_backlog
	"setup_$mode"
	trap '"cleanup_$mode"; exit 130' INT TERM

	# Each run takes ~10 s on rdma_rxe under TCG; the limits only keep a
	# data path that loses every message (20 s per case) inside the VM's
	# --timeout 900.
	# shellcheck disable=SC2086 # UC_ARGS is a list
	snaa_run 270 "$DEV_A<->$DEV_B IPv4" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" $UC_ARGS
	# shellcheck disable=SC2086
	snaa_run 270 "$DEV_A<->$DEV_B IPv6" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" --ipv6 $UC_ARGS
	# shellcheck disable=SC2086
	snaa_run 270 "$DEV_A loopback IPv4" "$UC_TEST" --dev-a "$DEV_A" \
		--dev-b "$DEV_A" $UC_ARGS
	if [ "$mode" = interop ]; then
		# shellcheck disable=SC2086
		snaa_run 270 "$DEV_B loopback IPv4" "$UC_TEST" \
			--dev-a "$DEV_B" --dev-b "$DEV_B" $UC_ARGS
	fi
	if [ "$mode" = snaa ]; then
		# The smallest path MTU (the runs above use 4096).
		# shellcheck disable=SC2086
		snaa_run 270 "$DEV_A<->$DEV_B IPv4 MTU 256" "$UC_TEST" \
			--dev-a "$DEV_A" --dev-b "$DEV_B" --mtu 256 \
			--sizes 0,1,63,64,mtu-1,mtu,mtu+1,64K,1M $UC_ARGS
	fi

	echo "# ==== uc_test.sh $mode summary:$snaa_run_summary"
	"cleanup_$mode"
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

# uc_perftest.sh sources this file for the setup functions only.
[ -n "${UC_TEST_SOURCED:-}" ] || uc_main "$@"
