#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build and install selftests/snaa the way a kernel developer runs it
# in-tree: as the "snaa" collection of the kernel's kselftest framework
# (tools/testing/selftests: lib.mk, kselftest_install.sh,
# run_kselftest.sh), here Debian's linux-source-6.1.
#
#   scripts/kselftest.sh          prints the install directory
#
# The selftests tree is extracted from /usr/src/linux-source-6.1.tar.xz
# into build/kselftest/ (once), selftests/snaa is copied in as
# tools/testing/selftests/snaa, and the kernel's kselftest_install.sh
# builds and installs it into build/kselftest/install: the collection
# "snaa" and its three nested collections snaa/hostile, snaa/interop and
# snaa/perf (as the kernel's net/forwarding).
# Run it in the test VM with, e.g.:
#
#   SNAA_TOP=$PWD build/kselftest/install/run_kselftest.sh -t snaa:device.sh
#   SNAA_TOP=$PWD build/kselftest/install/run_kselftest.sh -c snaa/hostile
#
# (SNAA_TOP: the tests take the module, the provider and the driver's
# headers from this repository.)
set -eu
cd "$(dirname "$0")/.."
top=$PWD
ks=$top/build/kselftest
tree=$ks/tools/testing/selftests
inst=$ks/install
tarball=/usr/src/linux-source-6.1.tar.xz

if [ ! -f "$tree/kselftest_install.sh" ]; then
	[ -r "$tarball" ] ||
		{ echo "kselftest: $tarball missing (make deps)" >&2; exit 1; }
	rm -rf "$ks"
	mkdir -p "$ks"
	tar -xaf "$tarball" -C "$ks" --strip-components=1 \
		linux-source-6.1/tools/testing/selftests \
		linux-source-6.1/scripts/subarch.include
fi

rm -rf "$tree/snaa" "$inst"
mkdir -p "$tree/snaa" "$inst"
git ls-files selftests/snaa | grep -v '^selftests/snaa/ktest/' |
	while IFS= read -r f; do
		d=$tree/snaa/${f#selftests/snaa/}
		mkdir -p "${d%/*}"
		cp -pP "$f" "$d"
	done
cd "$tree"
# kselftest_install.sh runs "make install": the target list and SNAA_TOP
# reach it as command-line variables through MAKEFLAGS.
MAKEFLAGS="TARGETS=snaa\\ snaa/hostile\\ snaa/interop\\ snaa/perf SNAA_TOP=$top" ./kselftest_install.sh "$inst" \
	>"$ks/install.log" 2>&1 ||
	{ tail -n 30 "$ks/install.log" >&2; echo "kselftest: install failed; log: $ks/install.log" >&2; exit 1; }
echo "$inst"
