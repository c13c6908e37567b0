#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Regenerate ../rxe-ipv4.hex and ../rxe-ipv6.hex from the rdma_rxe of the
# test VM's kernel (see ../README).  Run from anywhere on the host:
#   sh tests/unit/vectors/gen/regen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

make -C "$here" >/dev/null
"$top/selftests/vm/run" -- sh "$here/capture.sh" | tee "$log" |
	grep -v '^=== \|^v[46]\.' || true
grep -q '^# v6: 0 failure' "$log" && grep -q '^# v4: 0 failure' "$log" ||
	{ echo "regen.sh: capture failed, vectors not updated" >&2; exit 1; }

kver=$(sed -n 's/^# kernel //p' "$log" | tr -d '\r')
for f in v4 v6; do
	dst="$here/../rxe-ip${f}.hex"
	{
		echo "# RoCEv2 frames sent by rdma_rxe (Linux $kver), captured on"
		echo "# the peer's veth by tests/unit/vectors/gen/rxe_wire.c in the"
		echo "# test VM.  One frame per line: LABEL HEX (Ethernet header"
		echo "# onwards, ICRC last).  LABEL is family.OPCODE_NAME[.notes]."
		echo "# Regenerate: sh tests/unit/vectors/gen/regen.sh"
		sed -n "/^=== BEGIN $f/,/^=== END $f/p" "$log" | tr -d '\r' |
			grep -v '^=== '
	} >"$dst"
	echo "wrote $dst ($(grep -vc '^#' "$dst") frames)"
done
