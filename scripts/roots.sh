#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Cached Debian roots: the distributions snaa supports besides the host's,
# each with its own kernel, compiler and rdma-core, for building the
# module in a chroot and for booting in the test VM
# (selftests/vm/run --root DIR).  Run "scripts/roots.sh --help".
#
# A root lives in ${SNAA_CACHE:-/var/cache/snaa}/roots/SUITE, outside the
# work tree, and is made once per machine with debootstrap from Debian's
# archive ($SNAA_MIRROR, default http://deb.debian.org/debian).  Its key,
# a hash of the suite, the package list and the recipe below, is kept in
# SUITE/etc/snaa-root: a later run with the same key does nothing, one with
# another key (the package list was edited) builds the root afresh next to
# the old one and swaps it in.
set -eu
# (where --run's CMD starts)
caller_cwd=$(pwd -P)
cd "$(dirname "$0")/.."
top=$PWD

cache=${SNAA_CACHE:-/var/cache/snaa}
dir=$cache/roots
mirror=${SNAA_MIRROR:-http://deb.debian.org/debian}
default_suites="trixie sid"

# What every root gets on top of debootstrap's minbase: the kernel and its
# headers, the toolchain that built it, rdma-core's libraries, tools and
# source, what the VM tests run (iproute2, kmod, procps, ping, perftest,
# pyverbs) and what building Debian packages needs (dpkg-dev, debhelper,
# dkms).  Packages in $optional are installed where the suite has them.
packages="linux-image-amd64 linux-headers-amd64 build-essential cmake
pkg-config libibverbs-dev librdmacm-dev ibverbs-utils ibverbs-providers
rdmacm-utils rdma-core perftest python3-pyverbs iproute2 kmod procps
iputils-ping dpkg-dev fakeroot debhelper dkms"
optional="sparse busybox-static"

# No documentation, manual pages or translations (dpkg path-exclude):
# about a fifth of the root.  Copyright files stay, and so does
# rdma-core's test suite, which python3-pyverbs ships as documentation
# (selftests/snaa/interop/pyverbs.sh runs it).
nodoc='path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-include /usr/share/doc/rdma-core/tests/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*'

# Options for every apt-get inside a root.  The archive may be a snapshot
# whose Release files are past their Valid-Until date (sid's are valid
# for a week).
aptconf='APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
Acquire::Languages "none";
DPkg::Lock::Timeout "900";'

# Bump when the steps below change in a way that needs new roots.
recipe=3

usage() {
	cat <<EOF
Usage: scripts/roots.sh [--force] [SUITE...]
       scripts/roots.sh --path SUITE
       scripts/roots.sh --run SUITE [--] CMD [ARGS...]
       scripts/roots.sh --help

Create (once) the cached Debian roots SUITE... (default: $default_suites)
in \${SNAA_CACHE:-/var/cache/snaa}/roots/SUITE with debootstrap: the
suite's kernel (linux-image-amd64, linux-headers-amd64), toolchain,
rdma-core (libraries, tools, deb-src for "apt-get source rdma-core"),
perftest, pyverbs and what the VM tests use.  A root whose package list
is unchanged is left alone; --force builds it again anyway.

  --path SUITE   print the root's directory (fails if it is not built)
  --run SUITE    run CMD as root chrooted into the root, in a private
                 mount namespace: the root read-only, this checkout
                 ($top) bind-mounted at the same path and writable,
                 the host's /dev, fresh /proc, /sys, /tmp and /run, the
                 cache's rdma-core sources (scripts/provider-build.sh)
                 shared, the archive reachable as on the host; CMD starts in
                 the current directory if it is inside the checkout,
                 else at its top.  For example:
                   scripts/roots.sh --run sid make -s modules ktest KVER=\$(ls ROOT/lib/modules)

Sources: "apt-get source rdma-core" in a root needs the archive's .dsc,
which a partial mirror may lack; "apt-get source --download-only
rdma-core" still fetches (and checks) the files the mirror has, e.g.
the upstream tarball rdma-core_VERSION.orig.tar.gz.

Then boot a root's kernel in the test VM:
  selftests/vm/run --root \$(scripts/roots.sh --path sid) -- CMD

Environment: SNAA_CACHE (cache directory, default /var/cache/snaa),
SNAA_MIRROR (Debian archive, default http://deb.debian.org/debian).
Needs root, debootstrap (make deps) and the archive over the network.
EOF
}

msg() {
	echo "roots: $*" >&2
}

die() {
	msg "$*"
	exit 1
}

# root_key SUITE: the key of a root as this script would build it.
root_key() {
	printf '%s\n' "$1" "$recipe" "$packages" "$optional" "$nodoc" "$aptconf" |
		sha256sum | cut -c1-16
}

# have_key ROOT KEY: ROOT is complete and was built with KEY.
have_key() {
	[ -f "$1/etc/snaa-root" ] && grep -qx "key=$2" "$1/etc/snaa-root"
}

# unmount_under DIR: unmount whatever is mounted at or below DIR (a build
# that was interrupted), deepest first.
unmount_under() {
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do
			umount -l "$m" || true
		done
}

remove_root() {
	[ -e "$1" ] || return 0
	unmount_under "$1"
	rm -rf --one-file-system "$1"
}

# in_root ROOT CMD...: run CMD in ROOT during the build, with /proc, /sys
# and /dev from a private mount namespace, no services started.
in_root() {
	r=$1
	shift
	# shellcheck disable=SC2016 # expanded by that sh
	unshare --mount --propagation private sh -ec '
		r=$1
		shift
		mount -t proc proc "$r/proc"
		mount -t sysfs -o ro sysfs "$r/sys"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" "$@"' sh "$r" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive INITRD=No "$@"
}

# build SUITE: build the root of SUITE into $dir/SUITE.new, then swap it
# in for $dir/SUITE.
build() {
	suite=$1
	key=$(root_key "$suite")
	final=$dir/$suite
	new=$final.new
	start=$(date +%s)

	remove_root "$new"
	mkdir -p "$new/etc/dpkg/dpkg.cfg.d" "$new/etc/apt/apt.conf.d"
	# Before debootstrap: its second stage runs dpkg inside the root,
	# which reads these.
	printf '%s\n' "$nodoc" >"$new/etc/dpkg/dpkg.cfg.d/01-snaa-nodoc"
	printf '%s\n' "$aptconf" >"$new/etc/apt/apt.conf.d/01-snaa"

	msg "$suite: debootstrap from $mirror into $new"
	debootstrap --variant=minbase --components=main --merged-usr \
		"$suite" "$new" "$mirror" >"$new.log" 2>&1 ||
		die "$suite: debootstrap failed; its log: $new.log (and $new/debootstrap/debootstrap.log)"

	# The suite's binary and source packages from the same archive.
	rm -f "$new/etc/apt/sources.list"
	cat >"$new/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb deb-src
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# Nothing is started in the root; no initramfs is made for its kernel
	# (the VM boots with its own, and INITRD=No tells the kernel's hook).
	printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
	chmod 755 "$new/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$new/etc/resolv.conf" 2>/dev/null || true

	msg "$suite: installing packages"
	in_root "$new" apt-get update -q >>"$new.log" 2>&1 ||
		die "$suite: apt-get update failed; see $new.log"
	extra=
	for p in $optional; do
		if in_root "$new" apt-cache show "$p" >/dev/null 2>&1; then
			extra="$extra $p"
		else
			msg "$suite: no package $p, going on without it"
		fi
	done
	# shellcheck disable=SC2086 # word splitting intended
	in_root "$new" apt-get install -y -q $packages $extra >>"$new.log" 2>&1 ||
		die "$suite: apt-get install failed; see $new.log"
	in_root "$new" apt-get clean >>"$new.log" 2>&1

	# What debootstrap's first stage unpacked before dpkg's excludes
	# applied, any initramfs after all, and caches.
	find "$new/usr/share/doc" -mindepth 1 ! -type d ! -name copyright \
		! -path "$new/usr/share/doc/rdma-core/tests/*" -delete
	find "$new/usr/share/doc" -mindepth 1 -type d -empty -delete
	for d in man info lintian; do
		rm -rf "${new:?}/usr/share/$d"
		mkdir -p "$new/usr/share/$d"
	done
	find "$new/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias \
		-exec rm -rf {} +
	rm -f "$new"/boot/initrd.img-* "$new"/var/cache/debconf/*-old
	rm -rf "${new:?}/debootstrap"
	mv "$new.log" "$new/var/log/snaa-root.log"

	# shellcheck disable=SC2012 # kernel versions: no odd characters
	kvers=$(ls "$new/lib/modules" | tr '\n' ' ')
	kvers=${kvers% }
	{
		echo "key=$key"
		echo "suite=$suite"
		echo "mirror=$mirror"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "kernels=$kvers"
		echo "packages=$(echo "$packages$extra" | tr '\n' ' ')"
	} >"$new/etc/snaa-root"

	# Swap: the old root (if any) goes only once the new one is in place.
	if [ -e "$final" ]; then
		remove_root "$final.old"
		mv "$final" "$final.old"
	fi
	mv "$new" "$final"
	remove_root "$final.old"

	secs=$(($(date +%s) - start))
	size=$(du -sh --one-file-system "$final" | cut -f1)
	# shellcheck disable=SC2016 # a dpkg-query format
	rdma=$(in_root "$final" dpkg-query -W -f='${Version}' rdma-core)
	msg "$suite: built $final in ${secs}s ($size; kernel $kvers, rdma-core $rdma)"
}

# run SUITE CMD...: CMD in the root with this checkout, see usage.
run() {
	r=$dir/$1
	shift
	[ $# -gt 0 ] || die "--run: no command given"
	[ -f "$r/etc/snaa-root" ] || die "no root at $r (scripts/roots.sh $(basename "$r"))"
	[ "$(id -u)" = 0 ] || die "--run: must run as root (mount namespace, chroot)"
	# Shared: a rebuild (exclusive) waits until CMD is done, and CMD
	# until a rebuild is.
	exec 9>"$dir/.lock"
	flock -s 9
	cwd=$caller_cwd
	here=$(cd "$top" && pwd -P)
	case $cwd/ in
	"$here"/*) ;;
	*) cwd=$here ;;
	esac
	case $here in
	/) die "--run: the checkout is /" ;;
	esac
	# The rdma-core sources scripts/provider-build.sh fetches: shared
	# with the host's cache, so that a root fetches its release once.
	src_cache=$cache/rdma-core
	mkdir -p "$src_cache"
	# shellcheck disable=SC2016 # expanded by that sh
	unshare --mount --propagation private sh -ec '
		r=$1 tree=$2 cwd=$3 src_cache=$4
		shift 4
		# The mount points of the checkout and the source cache are
		# the only things this leaves in the root (empty directories).
		mkdir -p "$r$tree" "$r$src_cache"
		mount --bind "$r" "$r"
		mount -o remount,bind,ro "$r"
		mount -t proc proc "$r/proc"
		mount -t sysfs -o ro sysfs "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
		mount -t tmpfs -o mode=0755 tmpfs "$r/run"
		# (again: a checkout under /tmp or /run is in those tmpfs)
		mkdir -p "$r$tree" "$r$src_cache"
		mount --bind "$tree" "$r$tree"
		mount --bind "$src_cache" "$r$src_cache"
		exec chroot "$r" env -i -C "$cwd" \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 TERM=dumb \
			SNAA_CACHE="${src_cache%/rdma-core}" "$@"
	' sh "$r" "$here" "$cwd" "$src_cache" "$@"
}

force=
case ${1:-} in
-h | --help)
	usage
	exit 0
	;;
--path)
	[ $# = 2 ] || { usage >&2; exit 2; }
	[ -f "$dir/$2/etc/snaa-root" ] || die "no root $2 at $dir/$2 (scripts/roots.sh $2)"
	echo "$dir/$2"
	exit 0
	;;
--run)
	[ $# -ge 3 ] || { usage >&2; exit 2; }
	suite=$2
	shift 2
	[ "$1" != -- ] || shift
	run "$suite" "$@"
	exit
	;;
--force)
	force=1
	shift
	;;
-*)
	usage >&2
	exit 2
	;;
esac

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null ||
	die "debootstrap is not installed (make deps, or apt-get install debootstrap)"
mkdir -p "$dir"
# One builder at a time per cache.  (A root that is up to date needs no
# lock: a --run holding the shared one goes on.)
exec 9>"$dir/.lock"
# shellcheck disable=SC2086 # a list
[ $# -gt 0 ] || set -- $default_suites
stale=
for suite in "$@"; do
	have_key "$dir/$suite" "$(root_key "$suite")" || stale=1
done
if [ -n "$stale" ] || [ -n "$force" ]; then
	flock 9
fi

for suite in "$@"; do
	case $suite in
	*/* | .* | "") die "bad suite name '$suite'" ;;
	esac
	if [ -z "$force" ] && have_key "$dir/$suite" "$(root_key "$suite")"; then
		echo "roots: $suite: up to date in $dir/$suite ($(sed -n 's/^kernels=/kernel /p' "$dir/$suite/etc/snaa-root"))"
		continue
	fi
	if [ -e "$dir/$suite" ]; then
		msg "$suite: package list or recipe changed (or --force): building it again"
	fi
	build "$suite"
done
