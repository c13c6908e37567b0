#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shared helpers for the snaa VM tests: KTAP output, assertions, module
# and provider setup from the build tree.  Sourced by the test scripts,
# which run as root inside the test VM (selftests/vm/run), never on the
# host.

SNAA_TOP=${SNAA_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
# The module built for the running kernel (scripts/modbuild.sh): in place
# for the default kernel, under build/kver/KVER/ for another one.
SNAA_KO=$SNAA_TOP/$(sh "$SNAA_TOP/scripts/modbuild.sh" "$(uname -r)")/snaa.ko
SNAA_PROVIDER=$SNAA_TOP/userspace/provider/libsnaa

ktap_n=0
ktap_failed=0

ktap_header() {
	echo "KTAP version 1"
	echo "# suite: $1"
}

# ktap_ok NAME / ktap_fail NAME [DIAG...]
ktap_ok() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n - $1"
}

ktap_fail() {
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	name=$1
	shift
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/# /'
	done
	echo "not ok $ktap_n - $name"
}

ktap_finish() {
	echo "1..$ktap_n"
	echo "# $((ktap_n - ktap_failed)) passed, $ktap_failed failed"
	[ "$ktap_failed" = 0 ] && exit 0
	exit 1
}

# check NAME CMD...: one test that passes iff CMD succeeds.
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		ktap_ok "$name"
	else
		ktap_fail "$name" "command failed: $*" "$out"
	fi
}

# check_fails NAME CMD...: passes iff CMD fails.
check_fails() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		ktap_fail "$name" "command unexpectedly succeeded: $*" "$out"
	else
		ktap_ok "$name"
	fi
}

# check_eq NAME GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "got:  '$2'" "want: '$3'"
	fi
}

# check_match NAME TEXT REGEX (grep -E, one line of TEXT must match)
check_match() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "no line matches /$3/ in:" "$2"
	fi
}

check_nomatch() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_fail "$1" "a line matches /$3/ in:" "$2"
	else
		ktap_ok "$1"
	fi
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	tries=$(($1 * 10))
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

# Install the build-tree module so that modprobe and the rdma-link
# autoload find it (the VM's /lib/modules is a writable overlay).  The
# module indexes were made on the host by scripts/modroot.sh; running
# depmod here instead takes a minute under TCG.
snaa_install_module() {
	kdir=/lib/modules/$(uname -r)
	staged=$SNAA_TOP/build/modroot/lib/modules/$(uname -r)
	mkdir -p "$kdir/updates"
	if [ -f "$staged/modules.dep" ] && cmp -s "$staged/updates/snaa.ko" "$SNAA_KO"; then
		cp "$staged"/modules.* "$kdir/"
		cp "$SNAA_KO" "$kdir/updates/snaa.ko"
	else
		echo "# module indexes not staged (scripts/modroot.sh): running depmod"
		cp "$SNAA_KO" "$kdir/updates/snaa.ko"
		depmod -a
	fi
}

# Use the build-tree provider, not an installed one.
snaa_use_build_provider() {
	export RDMAV_DRIVERS="$SNAA_PROVIDER"
}

snaa_device_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

snaa_device_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}
