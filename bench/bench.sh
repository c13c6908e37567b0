#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# bench/bench.sh - snaa benchmark, the host half: builds what the VM needs
# (module, provider, module indexes, bench/udpblast), boots the test VM
# once (selftests/vm/run) to run bench/run.sh, and stores the whole
# output, raw perftest/udpblast output included, in
# bench/results/<timestamp>.txt.  The terminal shows the progress lines and
# the result table.  See bench/run.sh for what is measured and the
# SNAA_BENCH_* settings; here also:
#
#   SNAA_BENCH_NOBUILD=1   do not run make / scripts/modroot.sh
#   SNAA_BENCH_VERBOSE=1   show the raw output on the terminal too
#   SNAA_BENCH_VM_TIMEOUT  hard VM timeout in seconds (default: computed
#                          from the per-run timeouts and SNAA_BENCH_REPS)
#
# A snaa build failure does not stop the benchmark: rxe and UDP are still
# measured and the snaa cells read FAILED.
#
# Exit status: 0 if every figure was measured, 1 if some run failed, else
# selftests/vm/run's status (124 VM timeout, 125 VM failure, 126 kernel
# log has warnings/oopses: see its --help).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

results=bench/results
mkdir -p "$results"
stamp=$(date +%Y%m%d-%H%M%S)
out=$results/$stamp.txt

# Other VMs (other test runs) share the host CPUs and skew the figures.
qemus() {
	n=$(pgrep -c -x qemu-system-x86 2>/dev/null)
	echo "${n:-0}"
}

say() {
	echo "bench: $*" >&2
}

export SNAA_KVER=${SNAA_KVER:-$(sh scripts/kver.sh)}

if [[ ${SNAA_BENCH_NOBUILD:-0} != 1 ]]; then
	say "building module and provider (make -s modules provider KVER=$SNAA_KVER)"
	if ! make -s modules provider KVER="$SNAA_KVER" >"$results/.build.log" 2>&1 ||
	   ! sh scripts/modroot.sh >>"$results/.build.log" 2>&1; then
		tail -n 20 "$results/.build.log" >&2
		say "snaa build failed: measuring rxe and UDP only (snaa cells FAILED)"
		export SNAA_BENCH_SNAA_BROKEN="snaa build failed on the host (make modules provider / scripts/modroot.sh)"
	fi
fi

# udpblast is built on the host (a compile under TCG takes seconds).
if [[ ! -x bench/udpblast || bench/udpblast.c -nt bench/udpblast ||
      userspace/common/snaa_opt.c -nt bench/udpblast ]]; then
	cc -O2 -std=c11 -Wall -Wextra -Werror -Iuserspace/common \
		-o bench/udpblast bench/udpblast.c userspace/common/snaa_opt.c ||
		{ say "cannot build bench/udpblast"; exit 1; }
fi

reps=${SNAA_BENCH_REPS:-3}
ptimeout=${SNAA_BENCH_TIMEOUT:-60}
# boot, setup and UDP runs, then 3 perftests x 2 devices x reps, each up
# to 20 s for the server to listen + the client's timeout and kill grace
vm_timeout=${SNAA_BENCH_VM_TIMEOUT:-$((400 + 6 * reps * (ptimeout + 25)))}

{
	echo "# snaa benchmark $stamp"
	echo "# commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty tree)')"
	echo "# host $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
	echo "# $(qemu-system-x86_64 --version 2>/dev/null | head -n 1), TCG, kernel $SNAA_KVER, VM timeout ${vm_timeout}s"
	echo "# host load before: $(cut -d' ' -f1-3 /proc/loadavg), other qemu processes: $(qemus)"
	env | grep '^SNAA_BENCH_' | sed 's/^/# /'
} >"$out"
cat "$out"

say "booting the VM (timeout ${vm_timeout}s); full output: $out"
start=$SECONDS
if [[ ${SNAA_BENCH_VERBOSE:-0} = 1 ]]; then
	filter=(cat)
else
	filter=(awk '/^#### BEGIN /{ raw = 1; next } /^#### END$/ { raw = 0; next } !raw { print; fflush() }')
fi
selftests/vm/run --timeout "$vm_timeout" -- sh bench/run.sh 2>&1 |
	tee -a "$out" | "${filter[@]}"
rc=${PIPESTATUS[0]}
{
	echo "# host load after: $(cut -d' ' -f1-3 /proc/loadavg), other qemu processes: $(qemus)"
	echo "# bench/run.sh exit status $rc, $((SECONDS - start))s in the VM"
} | tee -a "$out"
say "results in $out"
exit "$rc"
