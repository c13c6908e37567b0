#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "make bench-wcubuf", inside the test VM: what the WCU.BUF protocol costs.
# In one boot, on the same path (ns snaa-a: snaa0 198.18.0.1 <=> ns
# snaa-b: snaa1 198.18.0.2, veth, MTU 9000, path MTU 4096):
#
#   UC WRITE   ib_write_bw -c UC, messages of one frame (F bytes)
#   WCU.BUF    wcubuf-send --static-images -> wcubuf-emu, frames of F
#              bytes, every frame ACKed by the kernel and read by the
#              emulator (without --verify: the reader hands frames back);
#              the images are synthesized once, so this is the protocol
#              alone: one ACK per frame, the worker's window, the reader
#   + images   the same with a new image synthesized for every frame (the
#              worker's CPU time for that, not the protocol's)
#
# and the protocol's cost against plain UC WRITE.  WCUBUF_BENCH_FRAMES (default 4000) frames of
# WCUBUF_BENCH_F (65600, one 6-bit image) bytes, inflight 32, a ring of
# 64 frames; WCUBUF_BENCH_REPS runs of each (median).
set -u
here=$(cd "$(dirname "$0")/../selftests/snaa" && pwd)
wcu=$(cd "$here/../../userspace/libwcubuf" && pwd)
SNAA_TOP=${SNAA_TOP:-$(cd "$here/../.." && pwd)}
# shellcheck source=../selftests/snaa/lib.sh
. "$here/lib.sh"
uc_backlog
n=${WCUBUF_BENCH_FRAMES:-4000}
f=${WCUBUF_BENCH_F:-65600}
reps=${WCUBUF_BENCH_REPS:-3}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "" }'
}

# ib_write_bw -c UC: the average MB/s of one run
uc_write_bw() {
	ip netns exec snaa-b timeout 120 ib_write_bw -d snaa1 -x "$gid_b" \
		-c UC -s "$f" -n "$n" -F >/dev/null 2>&1 &
	srv=$!
	sleep 2
	ip netns exec snaa-a timeout 120 ib_write_bw -d snaa0 -x "$gid_a" \
		-c UC -s "$f" -n "$n" -F 198.18.0.2 2>/dev/null |
		awk -v f="$f" '$1 == f && NF >= 5 { print $4 }'
	wait "$srv"
}

# wcubuf_bw [SEND-OPTIONS]: wcubuf-send -> wcubuf-emu, the worker's MB/s
wcubuf_bw() {
	ip netns exec snaa-b "$wcu/wcubuf-emu" --dev snaa1 \
		--ring-size $((64 * f)) --frame-size "$f" >/dev/null 2>&1 &
	emu=$!
	sleep 2
	ip netns exec snaa-a timeout 300 "$wcu/wcubuf-send" --dev snaa0 \
		--to 198.18.0.2 --frames "$n" --frame-size "$f" --image 6bit \
		--inflight 32 --timeout-ms 5000 "$@" 2>/dev/null |
		sed -n 's/^wcubuf-send: .* \([0-9.]*\) MB\/s$/\1/p'
	kill -TERM "$emu"
	wait "$emu"
}

setup_snaa
gid_a=$(snaa_gid_index snaa0 198.18.0.1)
gid_b=$(snaa_gid_index snaa1 198.18.0.2)
uc=$(for i in $(seq "$reps"); do uc_write_bw; done | median)
wb=$(for i in $(seq "$reps"); do wcubuf_bw --static-images; done | median)
wi=$(for i in $(seq "$reps"); do wcubuf_bw; done | median)
cleanup_snaa

echo "WCU.BUF streaming vs plain UC WRITE, snaa0 -> snaa1, $n frames of $f bytes, median of $reps"
printf '%-34s %12s\n' "ib_write_bw -c UC (MB/s)" "${uc:-FAILED}"
printf '%-34s %12s\n' "WCU.BUF protocol (MB/s)" "${wb:-FAILED}"
printf '%-34s %12s\n' "WCU.BUF + image synthesis (MB/s)" "${wi:-FAILED}"
if [ -n "$uc" ] && [ -n "$wb" ]; then
	awk -v u="$uc" -v w="$wb" -v f="$f" 'BEGIN {
		printf "%-34s %12.0f\n", "WCU.BUF protocol frames/s", w * 1e6 / f
		printf "%-34s %11.1f%%\n", "protocol cost (1 - WCU.BUF / UC)", (1 - w / u) * 100
	}'
else
	exit 1
fi
