#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make demo-wcubuf", inside the test VM: snaa emulating the WCU.BUF
# board.  wcubuf-emu (the board) on snaa1 in namespace snaa-b checks
# every image it receives; wcubuf-send (a Rasterizer worker) on snaa0 in
# snaa-a streams 6-bit images, first on a clean link, then with 2 % of
# the packets lost both ways (tc netem): lost frames are NACKed or time
# out and are sent again.  Both summaries are printed after each stream.
#
#   ns snaa-a: snaa0 - veth0 198.18.0.1  <==>  ns snaa-b: snaa1 - veth1 198.18.0.2
set -u
here=$(cd "$(dirname "$0")/../snaa" && pwd)
wcu=$(cd "$here/../../userspace/libwcubuf" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$here/../.." && pwd)}
# shellcheck source=SCRIPTDIR/../snaa/lib.sh
. "$here/lib.sh"
F=65600		# one 6-bit image per frame

# stream TITLE FRAMES: one emulator, one worker, both summaries
stream() {
	echo "== $1"
	echo "   wcubuf-emu --dev snaa1 --ring-size $((32 * F)) --frame-size $F --verify"
	echo "   wcubuf-send --dev snaa0 --to 198.18.0.2 --frames $2 --frame-size $F --image 6bit --timeout-ms 1000"
	ip netns exec snaa-b "$wcu/wcubuf-emu" --dev snaa1 \
		--ring-size $((32 * F)) --frame-size $F --verify \
		>"$tmp/emu" 2>&1 &
	emu=$!
	sleep 2
	ip netns exec snaa-a "$wcu/wcubuf-send" --dev snaa0 --to 198.18.0.2 \
		--frames "$2" --frame-size $F --image 6bit --timeout-ms 1000 \
		>"$tmp/send" 2>&1 || rc=1
	kill -TERM "$emu"
	wait "$emu" || rc=1
	echo "   worker:   $(grep '^wcubuf-send: [0-9]* frames' "$tmp/send" || tail -n 3 "$tmp/send")"
	echo "   emulator: $(grep '^wcubuf-emu: [0-9]* frames' "$tmp/emu" || tail -n 3 "$tmp/emu")"
}

rc=0
tmp=$(mktemp -d)
setup_snaa
stream "a clean link: 1000 frames" 1000
ip netns exec snaa-a tc qdisc add dev veth0 root netem loss 2% &&
ip netns exec snaa-b tc qdisc add dev veth1 root netem loss 2% || rc=1
stream "2 % of the packets lost each way: 300 frames" 300
echo "== the kernel's counters on the board side (rdma statistic show link snaa1/1)"
ip netns exec snaa-b rdma statistic show link snaa1/1 | tr ' ' '\n' |
	paste - - | awk '$1 ~ /^wcubuf_/ && $2 != 0 { printf "   %-28s %s\n", $1, $2 }'
cleanup_snaa
rm -rf "$tmp"
exit $rc
