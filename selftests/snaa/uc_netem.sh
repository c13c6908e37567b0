#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# UC under an impaired link: runs uc_netem (uc_netem.c) between snaa0 in
# namespace snaa-a and snaa1 in namespace snaa-b over a veth pair
# (lib/topology.sh's setup_snaa), once per impairment of the link snaa0 ->
# snaa1 (tc on veth0's egress, RoCEv2 packets only):
#
#   netem loss 10%                  messages lost, later ones intact
#   netem delay 10ms reorder 25%    packets out of order
#   netem duplicate 10%             packets twice
#   netem corrupt 5%                bit flips: dropped and counted
#   drop PSN & 0x1f in {1,10,19,24,30,31}
#                                   a fixed loss pattern: the outcome is
#                                   known exactly
#
# Each run sends 16 messages over the clean link, 200 over the impaired
# one, 16 over the clean one again, on the same QPs.  What is asserted
# (exactly where the outcome is determined, bounded where it is random:
# netem in Linux 6.1 cannot be seeded) is described at the top of
# uc_netem.c and in Documentation/testing.rst.  Runs as root inside the
# test VM, never on the host:
#
#     selftests/vm/run --timeout 600 -- sh selftests/snaa/uc_netem.sh
#
# Output: each uc_netem run is one KTAP document (results at line start),
# preceded by a "# ==== ..." line.  Exit status: 0 iff every run passed,
# 1 otherwise, 2 usage error, 4 (skip) if the setup is impossible here.
#
# Environment: UC_NETEM=/path/to/uc_netem to use a prebuilt binary; else
# selftests/snaa/uc_netem if it is up to date (make -C selftests/snaa),
# else it is built into a temporary directory (lib.sh's snaa_build).
#
# Features: uc, netem
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

un_usage() {
	echo "usage: $0 [--help]" >&2
	echo "  UC between snaa0 and snaa1 over a link impaired with tc" >&2
}

# un_run NAME ARGS...: one uc_netem run from snaa0 to snaa1.
un_run() {
	un_name=$1
	shift
	# The limit only keeps a hanging run inside the VM's --timeout.
	snaa_run 120 "$un_name" "$UC_NETEM" --dev-a "$DEV_A" \
		--dev-b "$DEV_B" --netns "$NS_A" --netdev veth0 \
		--peer-netns "$NS_B" --peer-netdev veth1 --name "$un_name" "$@"
	# a run that died must not leave its qdisc for the next one
	ip netns exec "$NS_A" tc qdisc del dev veth0 root 2>/dev/null
}

un_main() {
	case ${1:-} in
	"") ;;
	-h|--help) un_usage; exit 0 ;;
	*) un_usage; exit 2 ;;
	esac
	uc_vm_only
	command -v tc >/dev/null 2>&1 || snaa_skip "tc not installed (iproute2)"
	snaa_build UC_NETEM uc_netem
	uc_backlog
	setup_snaa
	trap 'cleanup_snaa; exit 130' INT TERM

	un_run "netem loss 10%" --netem "loss 10%"
	un_run "netem reorder" --netem "delay 10ms reorder 25% 50%"
	un_run "netem duplicate 10%" --netem "duplicate 10%"
	un_run "netem corrupt 5%" --netem "corrupt 5%"
	un_run "drop PSN mod 32 in 1,10,19,24,30,31" \
		--drop-psn 0x1f:1,10,19,24,30,31

	echo "# ==== uc_netem.sh summary:$snaa_run_summary"
	cleanup_snaa
	[ "$snaa_runs_failed" = 0 ] || exit 1
	exit 0
}

un_main "$@"
