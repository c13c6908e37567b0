#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One row of the support matrix: snaa built from scratch inside a cached
# Debian root (scripts/roots.sh) with that distribution's compiler,
# kernel headers and rdma-core, then tested in the VM booting that
# root's kernel and userland.  Run "scripts/matrix.sh --help".
set -eu
cd "$(dirname "$0")/.."
top=$PWD
prog=matrix

# What a row runs in the VM when no TEST is named: the device and its
# verbs, UC and RC against that kernel's rdma_rxe (rping and rdma_cm
# among them), perftest from that distribution, rdma-core's own pyverbs
# suite of that release, the WCU.BUF receive mode and the NAAICE RPCs.
default_tests="device.sh verbs.sh interop/uc.sh interop/rc.sh interop/pyverbs.sh"
default_tests="$default_tests perf/uc_interop.sh wcubuf_rx.sh naaice.sh"

usage() {
	cat <<EOF
Usage: scripts/matrix.sh [--build | --test] SUITE [TEST...]

Build snaa for the Debian root SUITE (trixie, sid; made once by
scripts/roots.sh) and run the VM tests TEST... (paths under
selftests/snaa; default: $default_tests) booting that root's
kernel with that root as the VM's userland.

  --build   only build: a fresh copy of this checkout's tracked files in
            build/roots/SUITE/tree, then inside the root (scripts/roots.sh
            --run): scripts/kbuild-check.sh for the root's kernel (W=1,
            no warning, sparse; KTAP), "make all" (module, provider in
            that rdma-core's source tree, libraries, tools, test
            programs, all -Werror) and the module tree for the VM
  --test    only the VM tests, of what --build left
  -h        this text

Prints KTAP (the build's checks, then run_tests.sh's).  Environment:
SNAA_TIME_SCALE (see selftests/vm/run), SNAA_CACHE (scripts/roots.sh).
Needs root, debootstrap and the archive (the first time, for the root and
the rdma-core source).
EOF
}

say() {
	echo "# $prog: $*"
}

n=0
# result STATUS TEXT: one KTAP result (STATUS 0: ok).
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
	fi
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

# ksft_extract DIR: the kselftest harness from the linux-source tarball.
ksft_extract() {
	for t in /usr/src/linux-source-*.tar.xz; do
		[ -f "$t" ] || die "no /usr/src/linux-source-*.tar.xz (make deps)"
		tar -xJf "$t" -C "$1" --strip-components=4 \
			--wildcards '*/tools/testing/selftests/kselftest_harness.h' \
			'*/tools/testing/selftests/kselftest.h' ||
			die "cannot extract the kselftest harness from $t"
		return 0
	done
}

build=1
test=1
case ${1:-} in
-h | --help) usage; exit 0 ;;
--build) test= ; shift ;;
--test) build= ; shift ;;
-*) usage >&2; exit 2 ;;
esac
[ $# -ge 1 ] || { usage >&2; exit 2; }
suite=$1
shift
case $suite in
*/* | .* | "") die "bad suite name '$suite'" ;;
esac
tests=${*:-$default_tests}

sh scripts/roots.sh "$suite" >&2 || die "no root for $suite"
root=$(sh scripts/roots.sh --path "$suite")
# shellcheck disable=SC2012 # a kernel version, no odd characters
kver=$(ls "$root/lib/modules" | sort -V | tail -n 1)
[ -n "$kver" ] || die "$root has no kernel"
tree=build/roots/$suite/tree

if [ -n "$build" ]; then
	say "$suite: kernel $kver, building in $tree"
	rm -rf "$tree"
	mkdir -p "$tree/build/ksft"
	# What git tracks, as it is in the work tree: a clean build, and
	# nothing the host built can leak in.
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tree" ||
		die "cannot copy the checkout to $tree"
	# The kselftest harness, as the host's build extracted it from its
	# linux-source tarball, else from that tarball (the roots have none;
	# selftests/snaa/Makefile takes it from build/ksft).
	if [ -f build/ksft/kselftest_harness.h ] && [ -f build/ksft/kselftest.h ]; then
		cp build/ksft/kselftest_harness.h build/ksft/kselftest.h \
			"$tree/build/ksft/"
	else
		ksft_extract "$tree/build/ksft"
	fi
	cd "$tree"
	log=$(mktemp /tmp/snaa-matrix.XXXXXX)
	# W=1, no warning, both modules, sparse: kbuild-check.sh's results,
	# numbered on here
	if ! sh "$top/scripts/roots.sh" --run "$suite" sh scripts/kbuild-check.sh \
		"$kver" >"$log" 2>&1 && ! grep -q '^not ok ' "$log"; then
		# not kbuild-check.sh's failure: the root's
		tail -n 20 "$log" | sed 's/^/# /'
		result 1 "$suite: scripts/kbuild-check.sh runs in the root"
		rm -f "$log"
		exit 1
	fi
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*) result 0 "$suite: ${line#* - }" ;;
		"not ok "[0-9]*) result 1 "$suite: ${line#* - }" ;;
		"# "[0-9]*" passed, "*) ;;
		"#"*) echo "$line" ;;
		esac
	done <"$log"
	if sh "$top/scripts/roots.sh" --run "$suite" sh -c \
		"make -s all KVER=$kver && sh scripts/modroot.sh $kver" \
		>"$log" 2>&1; then
		result 0 "$suite: make all (module, provider, libraries, tools, test programs) builds"
	else
		tail -n 40 "$log" | sed 's/^/# /'
		result 1 "$suite: make all (module, provider, libraries, tools, test programs) builds"
		rm -f "$log"
		exit 1
	fi
	if grep -E 'warning:' "$log" | head -n 20 | sed 's/^/# /' | grep .; then
		result 1 "$suite: no compiler warning in make all"
	else
		result 0 "$suite: no compiler warning in make all"
	fi
	sed -n 's/^provider-build: \(.*-rdmav.*\)$/# \1/p' "$log"
	rm -f "$log"
	cd "$top"
fi

if [ -n "$test" ]; then
	[ -d "$tree/build/modroot/lib/modules/$kver" ] ||
		die "nothing built for $suite ($tree): scripts/matrix.sh --build $suite"
	cd "$tree"
	# the tests' budgets and a minute each for the boot and the cleanup
	# between them, as scripts/check.sh gives its VM suites
	# shellcheck disable=SC2086 # a list of tests
	set -- $tests
	timeout=$(($(SNAA_TIME_SCALE=1 sh selftests/snaa/run_tests.sh --total "$@") + 60 * $#))
	selftests/vm/run --root "$root" --kernel "$kver" --timeout "$timeout" \
		-- sh selftests/snaa/run_tests.sh "$@"
fi
