#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install what snaa needs to build and test (Debian bookworm, as root).
# Idempotent: apt-get runs only when something is missing.
#
# SNAA_BACKPORTS=1 also installs the 6.12 kernel (image + headers) from
# bookworm-backports for the compatibility matrix, adding the apt source
# for bookworm-backports if there is none.  Only the versioned 6.12
# packages are installed: bookworm's 6.1 stays the default kernel (see
# scripts/kver.sh), and linux-libc-dev, linux-perf and the linux-image-amd64
# / linux-headers-amd64 meta-packages keep their bookworm versions.
set -eu

# The debug kernel of the VM tests (scripts/debug-kernel.sh) is built
# from linux-source-6.1 with flex, bison, bc and libelf (objtool); the
# kernel's kselftest lib.mk installs with rsync; clang and
# libclang-rt-14-dev: libFuzzer and the sanitizers (tests/fuzz);
# python3-pyverbs: rdma-core's own test suite (selftests/snaa/interop/pyverbs.sh);
# debootstrap: the other distributions' roots (scripts/roots.sh);
# cmake, ninja-build, python3: the provider is built in the installed
# rdma-core's source tree, which dpkg-dev's dpkg-source unpacks
# (scripts/provider-build.sh).
pkgs="build-essential pkg-config linux-headers-amd64 linux-image-amd64
qemu-system-x86 busybox-static cpio kmod xz-utils sparse
rdma-core libibverbs-dev librdmacm-dev ibverbs-utils rdmacm-utils
perftest iproute2 procps clang libclang-rt-14-dev
linux-source-6.1 flex bison bc libelf-dev rsync python3-pyverbs
debootstrap cmake ninja-build python3 dpkg-dev"

bpo_list=/etc/apt/sources.list.d/snaa-bookworm-backports.list

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done

need_bpo=
if [ "${SNAA_BACKPORTS:-0}" = 1 ] &&
   ! ls /lib/modules/6.12*-amd64/build >/dev/null 2>&1; then
	need_bpo=1
fi

if [ -z "$missing" ] && [ -z "$need_bpo" ]; then
	echo "deps: all installed"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing:$missing; run 'make deps' as root" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# DPkg::Lock::Timeout: wait for another apt or dpkg rather than fail.
if [ -n "$need_bpo" ] && [ ! -e "$bpo_list" ] &&
   ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" > "$bpo_list"
fi
echo "deps: installing:$missing${need_bpo:+ (and the 6.12 backports kernel)}"
apt-get -o DPkg::Lock::Timeout=900 update -q
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $missing
fi
if [ -n "$need_bpo" ]; then
	# The versioned package the backports meta-package points at, e.g.
	# linux-image-6.12.95+deb12-amd64.  No "-t bookworm-backports": it
	# would also upgrade every installed package built from the same
	# source (linux-libc-dev, linux-perf, the meta-packages).
	bpo_pkgs=
	for meta in linux-image-amd64 linux-headers-amd64; do
		p=$(apt-cache show "$meta/bookworm-backports" 2>/dev/null |
		    sed -n 's/^Depends: \(linux-[a-z]*-6\.12[^ ,]*-amd64\).*/\1/p' |
		    sort -V | tail -n 1)
		if [ -z "$p" ]; then
			echo "deps: no 6.12 $meta in bookworm-backports" >&2
			exit 1
		fi
		bpo_pkgs="$bpo_pkgs $p"
	done
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
		-o APT::Get::Upgrade-By-Source-Package=false $bpo_pkgs
fi
