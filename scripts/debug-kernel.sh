#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build (once per machine) and install the debug kernel of the VM tests:
# Debian's linux-source-6.1 with KASAN, lockdep, kmemleak, UBSAN,
# DEBUG_OBJECTS and KFENCE, configured from selftests/vm/debug-kernel.config
# on top of allnoconfig.
#
#   scripts/debug-kernel.sh            build if needed, install, print KVER
#   scripts/debug-kernel.sh --kver     print the KVER it would install
#
# The build lives outside the work tree, in
# ${SNAA_CACHE:-/var/cache/snaa}/debug-kernel/KEY/, KEY being a hash of the
# source package version, the config fragment, this script and the
# compiler: only the first run on a machine (or after one of those
# changes) compiles.  "Install" makes the kernel look like a Debian one
# to the rest of the tree, with symlinks into the cache:
#
#   /boot/vmlinuz-KVER, /boot/config-KVER      booted by selftests/vm/run
#   /lib/modules/KVER (build -> the kernel build tree, for M= builds)
#
# KVER is 6.1.N-snaa-debug: no "-amd64", so nothing picks it by default.
set -eu
cd "$(dirname "$0")/.."
top=$PWD

cache=${SNAA_CACHE:-/var/cache/snaa}
tarball=/usr/src/linux-source-6.1.tar.xz
frag=$top/selftests/vm/debug-kernel.config
jobs=$(nproc 2>/dev/null || echo 2)

msg() {
	echo "debug-kernel: $*" >&2
}

die() {
	msg "$*"
	exit 1
}

[ -r "$tarball" ] || die "$tarball missing: install linux-source-6.1 (make deps)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
	die "linux-source-6.1 is not installed (make deps)"
key=$({
	echo "$srcver"
	cat "$frag" "$0"
	gcc --version | head -n 1
} | sha256sum | cut -c1-16)
dir=$cache/debug-kernel/$key
src=$cache/src/linux-source-6.1-$srcver
build=$dir/build
modroot=$dir/modroot

kernel_release() {
	cat "$build/include/config/kernel.release"
}

if [ "${1:-}" = --kver ]; then
	[ -f "$dir/done" ] || die "not built yet (scripts/debug-kernel.sh)"
	kernel_release
	exit 0
fi

# Every option of the fragment must have its value in the final .config:
# a missing dependency would otherwise drop it without a word.
check_config() {
	bad=0
	grep -E '^CONFIG_' "$frag" | while IFS= read -r line; do
		name=${line%%=*}
		want=${line#*=}
		if [ "$want" = n ]; then
			if grep -q "^$name=" "$build/.config"; then
				msg "$name is set, the fragment wants it off"
				echo bad
			fi
		elif ! grep -qxF "$line" "$build/.config"; then
			msg "$line did not survive: .config has '$(grep "^$name=" "$build/.config" || echo "$name unset")' (a dependency missing from $frag?)"
			echo bad
		fi
	done | grep -q bad && bad=1
	return "$bad"
}

build_kernel() {
	t0=$(date +%s)
	if [ ! -f "$src/Makefile" ]; then
		msg "unpacking $tarball"
		rm -rf "$src" "$src.tmp"
		mkdir -p "$src.tmp"
		tar -xaf "$tarball" -C "$src.tmp"
		mv "$src.tmp/linux-source-6.1" "$src"
		rmdir "$src.tmp"
	fi
	rm -rf "$dir"
	mkdir -p "$build"
	make -s -C "$src" O="$build" allnoconfig KCONFIG_ALLCONFIG="$frag" \
		>/dev/null
	check_config || die "$frag does not apply cleanly to $srcver"
	msg "building $srcver with $(grep -c '=y' "$build/.config") options on $jobs CPUs (the first time takes a while; cached in $dir)"
	make -s -C "$src" O="$build" -j"$jobs" bzImage modules >"$dir/build.log" 2>&1 ||
		{ tail -n 40 "$dir/build.log" >&2; die "build failed; log: $dir/build.log"; }
	make -s -C "$src" O="$build" INSTALL_MOD_PATH="$modroot" \
		modules_install >>"$dir/build.log" 2>&1 ||
		die "modules_install failed; log: $dir/build.log"
	touch "$dir/done"
	msg "built $(kernel_release) in $(($(date +%s) - t0))s"
	# Older builds are of no use any more.
	for old in "$cache"/debug-kernel/*; do
		[ "$old" = "$dir" ] || rm -rf "$old"
	done
}

[ -f "$dir/done" ] || build_kernel

kver=$(kernel_release)
mods=$modroot/lib/modules/$kver
ln -sfn "$build" "$mods/build"
# Replace whatever an earlier build installed under the same name.
if [ -e "/lib/modules/$kver" ] && [ ! -L "/lib/modules/$kver" ]; then
	die "/lib/modules/$kver exists and is not ours; remove it"
fi
ln -sfn "$mods" "/lib/modules/$kver"
ln -sfn "$build/arch/x86/boot/bzImage" "/boot/vmlinuz-$kver"
cp "$build/.config" "/boot/config-$kver"
echo "$kver"
