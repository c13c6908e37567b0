#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the snaa test VM initramfs (built by mkinitramfs.sh).
#
# Loads the modules listed in /modules, mounts the host root (9p tag
# "snaa-root", read-only) as the lower layer of an overlay whose upper layer
# is a tmpfs, and switch_root's into it to run the in-guest runner whose
# absolute path the host passes as "snaa_vm_runner=PATH" on the kernel
# command line (the kernel hands unknown parameters to init as environment).
# With "snaa_vm_host=DIR:DIR..." (selftests/vm/run --root), the share
# "snaa-root" is another distribution's root and the host's root is the
# share "snaa-host", of which only those directories are mounted, at the
# same paths, each under an overlay of its own.
#
# Messages go to the kernel console (ttyS0), i.e. the host's log file.  On
# any failure the VM is powered off without a result, which the host reports.

PATH=/bin
export PATH

/bin/busybox --install -s /bin

mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

die() {
	echo "snaa-vm init: $*, powering off"
	poweroff -f
	sleep 60
}

mount -t proc proc /proc || die "cannot mount /proc"
mount -t sysfs sysfs /sys || die "cannot mount /sys"

while read -r mod; do
	insmod "/lib/modules/$mod.ko" || die "cannot load module $mod"
done </modules

# cache=loose: the host root is not supposed to change under a test run,
# and page-caching it makes a large difference to exec() speed under TCG.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
	snaa-root /lower || die "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || die "cannot mount the overlay root"

if [ -n "$snaa_vm_host" ]; then
	mkdir -p /host
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose \
		snaa-host /host || die "cannot mount the host root over 9p"
	n=0
	for d in $(echo "$snaa_vm_host" | tr : ' '); do
		n=$((n + 1))
		mkdir -p "/rw/host$n/upper" "/rw/host$n/work" "/newroot$d"
		mount -t overlay -o "lowerdir=/host$d,upperdir=/rw/host$n/upper,workdir=/rw/host$n/work" \
			overlay "/newroot$d" || die "cannot mount the host's $d"
	done
fi

[ -n "$snaa_vm_runner" ] || die "no snaa_vm_runner= on the kernel command line"
[ -f "/newroot$snaa_vm_runner" ] || die "runner $snaa_vm_runner not found"

umount /proc /sys
mount --move /dev /newroot/dev || die "cannot move /dev"
exec switch_root /newroot /bin/bash "$snaa_vm_runner"
