#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest half of selftests/vm/run.  Runs as PID 1 on the overlay root that
# initramfs-init.sh switched to, so it must never exit: every path ends in
# poweroff (if PID 1 died the kernel would panic, and with panic=-1 and
# qemu's -no-reboot the VM would still stop, but noisily).
#
# Protocol with the host, through the writable 9p share (tag "snaa-share"):
#   token   random string for this run; read and deleted before CMD starts
#   argv    CMD and its arguments, each terminated by a NUL byte
#   env     NAME=VALUE entries to export, each terminated by a NUL byte
#   cwd     directory to run CMD in, terminated by a NUL byte
#   result  written here: "TOKEN STATUS" once CMD has exited
#   dmesg   written here: the kernel log after CMD has exited
#   kmemleak  written here on a kernel with kmemleak: the leaks CMD left
#           behind (objects allocated during the run and referenced from
#           nowhere afterwards), empty if none
#
# CMD's stdout and stderr go to /dev/hvc0 (a virtio console that the host
# streams to its stdout); this script's own messages go to the kernel
# console, i.e. the host's log file.

share=/run/snaa-vm
out=/dev/hvc0

guest_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH=$guest_path
umask 022

say() {
	echo "snaa-vm: $*" >/dev/console
}

poweroff_now() {
	# busybox's reboot(2) syncs and never returns: the VM is gone.
	[[ -x /bin/busybox ]] && /bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	# Wait using builtins only: the poweroff runs asynchronously, and while
	# the devices shut down exec'ing anything from the 9p root fails (EIO).
	# PID 1 must not exit: that would panic, with a "Call Trace".
	while :; do
		read -r -t 60 _ <> <(:)
	done
}

# Setup failure: no result is written, so the host reports exit status 125.
die() {
	say "$*"
	[[ -c $out ]] && echo "snaa-vm: $*" >"$out" 2>/dev/null
	poweroff_now
}

# Every exec of a dynamically linked binary costs ~50ms under TCG, so the
# setup steps use the static busybox (the initramfs needs it anyway) when
# the host has one, and avoid running anything that is not needed.
if [[ -x /bin/busybox ]]; then
	bb() { /bin/busybox "$@"; }
else
	bb() { "$@"; }
fi

is_mounted() {
	local dir
	while read -r _ dir _; do
		[[ $dir == "$1" ]] && return 0
	done </proc/self/mounts
	return 1
}

# mount_fs TYPE DIR [OPTIONS]: mount unless something is already there.
mount_fs() {
	[[ -d $2 ]] || bb mkdir -p "$2" || return
	is_mounted "$2" || bb mount -t "$1" ${3:+-o "$3"} "$1" "$2"
}

# /proc first: poweroff_now needs it.  /dev was moved here by the initramfs.
is_mounted /proc || bb mount -t proc proc /proc ||
	{ echo o >/proc/sysrq-trigger; exit 1; }
mount_fs sysfs /sys || die "cannot mount /sys"
mount_fs devtmpfs /dev || die "cannot mount /dev"
mount_fs devpts /dev/pts gid=5,mode=0620,ptmxmode=0666
mount_fs tmpfs /dev/shm mode=1777
[[ -e /dev/fd ]] || bb ln -s /proc/self/fd /dev/fd
[[ -e /dev/stdin ]] || bb ln -s /proc/self/fd/0 /dev/stdin
[[ -e /dev/stdout ]] || bb ln -s /proc/self/fd/1 /dev/stdout
[[ -e /dev/stderr ]] || bb ln -s /proc/self/fd/2 /dev/stderr
mount_fs tmpfs /run mode=0755 || die "cannot mount /run"
mount_fs debugfs /sys/kernel/debug
[[ -d /sys/kernel/tracing ]] && mount_fs tracefs /sys/kernel/tracing
# configfs is loaded by the initramfs if it is a module.
[[ -d /sys/kernel/config ]] && mount_fs configfs /sys/kernel/config

# The writable share: results for the host.  No cache, so that everything
# written here is on the host before poweroff.
bb mkdir -p "$share" || die "cannot create $share"
bb mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 snaa-share "$share" ||
	die "cannot mount the result share"

token=$(<"$share/token") || die "no token in the share"
bb rm -f "$share/token"
mapfile -d '' -t argv <"$share/argv" || die "no argv in the share"
mapfile -d '' -t envv <"$share/env" || die "no env in the share"
mapfile -d '' -t cwdv <"$share/cwd" || die "no cwd in the share"
((${#argv[@]} > 0)) || die "empty command"
((${#cwdv[@]} == 1)) || die "bad cwd in the share"
cwd=${cwdv[0]}

# /tmp is deliberately not a fresh tmpfs: like the rest of the overlay root
# it is writable and throw-away, and this way scripts and files that the
# caller put in the host's /tmp are visible to CMD.

echo snaa-vm >/proc/sys/kernel/hostname
bb ip link set lo up || say "cannot bring up lo"
ulimit -l unlimited # RDMA memory registration pins pages

# The virtio console port is announced asynchronously after the driver loads.
for ((i = 0; i < 100; i++)); do
	[[ -c $out ]] && break
	bb sleep 0.1
done
[[ -c $out ]] || die "$out did not appear"
# Pass bytes through unmodified (no \n -> \r\n etc.).  hvc resets the
# termios on last close, so keep the console open for the whole run.
exec 3<>"$out" || die "cannot open $out"
bb stty -F "$out" raw -echo || die "cannot set up $out"

cd -- "$cwd" || die "cannot cd to $cwd"

# kmemleak (debug kernels): only what the command leaks counts, so
# whatever boot left behind is scanned and forgotten first.
kmemleak=/sys/kernel/debug/kmemleak
if [[ -w $kmemleak ]]; then
	echo scan >"$kmemleak" 2>/dev/null
	echo clear >"$kmemleak" 2>/dev/null
fi

# Not the command line itself: the host scans this log for "BUG:" etc.
say "starting the command"
(
	# Start CMD with a clean environment: only what the host passed plus
	# a few basics.  Later entries override earlier ones.
	while read -r var; do
		unset "$var"
	done < <(compgen -e)
	export HOME=/root TERM=dumb PAGER=cat PWD="$cwd" SNAA_VM_CWD="$cwd"
	for kv in "${envv[@]}"; do
		# shellcheck disable=SC2163 # $kv is NAME=VALUE
		[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] && export "$kv"
	done
	export PATH=$guest_path SNAA_VM=1
	# In its own session and process group, as after a login: then e.g.
	# "kill 0" in a test reaches the test's processes only.  (-w: should
	# setsid have to fork, it waits and passes on the exit status.)
	exec setsid -w -- "${argv[@]}"
) </dev/null >"$out" 2>&1 3>&-
rc=$?
say "command exited with status $rc"

# tcsetattr(TCSADRAIN) waits until everything CMD wrote to hvc0 has gone out.
bb stty -F "$out" raw -echo

if [[ -w $kmemleak ]]; then
	# kmemleak reports objects older than 5 s that two scans in a row
	# found unreferenced.
	say "scanning for memory leaks"
	bb sleep 6
	echo scan >"$kmemleak" 2>/dev/null
	echo scan >"$kmemleak" 2>/dev/null
	cat "$kmemleak" >"$share/kmemleak" 2>/dev/null
fi
dmesg >"$share/dmesg"
printf '%s %d\n' "$token" "$rc" >"$share/result"
poweroff_now
