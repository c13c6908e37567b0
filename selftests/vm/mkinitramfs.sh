#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh KVER OUTPUT [ROOT] - build the tiny initramfs of the snaa
# test VM.
#
# The image holds a static busybox, /init (initramfs-init.sh from this
# directory) and just the kernel modules needed to mount the host root over
# virtio-9p with a tmpfs-backed overlay on top, plus virtio_console for the
# command output channel.  Modules are taken from ROOT/lib/modules/KVER
# (ROOT: another distribution's root, default /),
# dependencies are resolved through modules.dep and the load order is written
# to /modules (one name per line, dependencies first).  Compressed modules
# (.ko.xz, .ko.zst, .ko.gz) are decompressed because busybox insmod only
# handles plain ELF objects.  The cpio archive is left uncompressed: it is a
# few MB and decompressing it under TCG would cost more than copying it.
#
# Normally called (and cached) by selftests/vm/run; it can be run by hand.

set -euo pipefail

die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

[[ $# -eq 2 || $# -eq 3 ]] || die "usage: $0 KVER OUTPUT [ROOT]"
kver=$1
output=$2
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
moddir=${3:-}/lib/modules/$kver
busybox=${SNAA_VM_BUSYBOX:-/bin/busybox}

# What /init needs.  Anything built into the kernel is skipped.  configfs is
# not needed to boot, but loading it here is cheaper than in the guest.
wanted=(virtio_pci virtio_console 9pnet_virtio 9p overlay)
optional=(configfs)

[[ -r $moddir/modules.dep ]] || die "$moddir/modules.dep not found"
[[ -x $busybox ]] || die "$busybox not found (apt-get install busybox-static)"
# A dynamically linked busybox would need its libraries in the image.
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked; install busybox-static"
fi

# Module name of a modules.dep path, as the kernel spells it:
# kernel/fs/9p/9p.ko.xz -> 9p, .../virtio-foo.ko -> virtio_foo.  Sets REPLY.
modname() {
	local n=${1##*/}
	n=${n%.ko*}
	REPLY=${n//-/_}
}

declare -A mod_path=() mod_deps=() builtin=() seen=()
order=()

while IFS= read -r line; do
	modname "${line%%:*}"
	mod_path[$REPLY]=${line%%:*}
	mod_deps[$REPLY]=${line#*:}
done <"$moddir/modules.dep"

if [[ -r $moddir/modules.builtin ]]; then
	while IFS= read -r line; do
		modname "$line"
		builtin[$REPLY]=1
	done <"$moddir/modules.builtin"
fi

# Depth-first walk: a module is appended to $order after all its dependencies.
visit() {
	local name=$1 dep
	[[ -z ${seen[$name]:-} ]] || return 0
	seen[$name]=1
	for dep in ${mod_deps[$name]}; do
		modname "$dep"
		visit "$REPLY"
	done
	order+=("$name")
}

for name in "${wanted[@]}"; do
	if [[ -n ${mod_path[$name]:-} ]]; then
		visit "$name"
	elif [[ -z ${builtin[$name]:-} ]]; then
		die "kernel $kver has neither a module nor a built-in $name"
	fi
done
for name in "${optional[@]}"; do
	[[ -z ${mod_path[$name]:-} ]] || visit "$name"
done

root=$(mktemp -d "${TMPDIR:-/tmp}/snaa-initramfs.XXXXXXXX")
trap 'rm -rf -- "$root"' EXIT

mkdir -p "$root"/{bin,dev,proc,sys,lower,rw,newroot,lib/modules}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/initramfs-init.sh" "$root/init"
# The kernel opens /dev/console for /init before anything is mounted; /init
# copes without the node, but creating it avoids a boot-time complaint.
mknod -m 0600 "$root/dev/console" c 5 1 2>/dev/null || true

: >"$root/modules"
for name in "${order[@]}"; do
	src=$moddir/${mod_path[$name]}
	dst=$root/lib/modules/$name.ko
	case $src in
	*.ko.xz) xz -dc -- "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc -- "$src" >"$dst" ;;
	*.ko.gz) gzip -dc -- "$src" >"$dst" ;;
	*.ko) cp -- "$src" "$dst" ;;
	*) die "don't know how to unpack $src" ;;
	esac
	echo "$name" >>"$root/modules"
done

(cd "$root" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
	cpio --null --create --format=newc --owner=0:0 --quiet) >"$output"
