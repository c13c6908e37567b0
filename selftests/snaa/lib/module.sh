# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The module, the provider and the test programs from the build tree
# (sourced through lib.sh).

read -r SNAA_RUNNING_KVER </proc/sys/kernel/osrelease
# The module built for the running kernel (scripts/modbuild.sh: under
# build/kver/KVER/).
SNAA_KO=$SNAA_TOP/$(sh "$SNAA_TOP/scripts/modbuild.sh" "$SNAA_RUNNING_KVER")/snaa.ko
# The provider built by scripts/provider-build.sh (make provider) for the
# installed rdma-core; libibverbs appends -rdmavNN.so.
SNAA_PROVIDER=$SNAA_TOP/build/provider/libsnaa

# snaa_build VAR NAME: set VAR to a usable binary of the selftests/snaa
# program NAME (see its Makefile).  If VAR is set already, it must name an
# executable.  In a kselftest install directory, the NAME installed there
# is used.  Else selftests/snaa/NAME is used if make says it is up to
# date ("make -C selftests/snaa" builds it), else NAME is built with that
# Makefile into a temporary directory (the VM's /tmp; nothing is written
# into the tree).  Skips the test if the program cannot be built.
snaa_build() {
	eval "sb_bin=\${$1:-}"
	if [ -n "$sb_bin" ]; then
		[ -x "$sb_bin" ] || snaa_skip "$1=$sb_bin is not executable"
		return 0
	fi
	sb_dir=$SNAA_TOP/selftests/snaa
	[ -f "$sb_dir/lib.sh" ] ||
		snaa_skip "SNAA_TOP=$SNAA_TOP is not the snaa repository; set it"
	# Installed by kselftest: use the programs installed with us.
	if [ "$SNAA_TEST_DIR" != "$sb_dir" ] && [ -x "$SNAA_TEST_DIR/$2" ]; then
		eval "$1=\$SNAA_TEST_DIR/\$2"
		return 0
	fi
	if make -s -q -C "$sb_dir" "$2" 2>/dev/null; then
		sb_bin=$sb_dir/$2
	else
		sb_out=$(mktemp -d) || snaa_skip "mktemp failed"
		sb_bin=$sb_out/$2
		echo "# building $sb_bin"
		make -s -C "$sb_dir" OUTPUT="$sb_out" "$sb_bin" >&2 ||
			snaa_skip "cannot build $2 (libibverbs-dev installed?)"
	fi
	eval "$1=\$sb_bin"
}

# snaa_install_module: install the build-tree module so that modprobe and
# the rdma-link autoload find it (the VM's /lib/modules is a writable
# overlay), once per boot (a marker in /run says which module is there).
# The module indexes were made on the host by scripts/modroot.sh; running
# depmod here instead takes a minute under TCG.
snaa_install_module() {
	kdir=/lib/modules/$SNAA_RUNNING_KVER
	marker=/run/snaa-installed
	mk_have=
	[ -r "$marker" ] && read -r mk_have <"$marker"
	if [ "$mk_have" != "$SNAA_KO" ]; then
		staged=$SNAA_TOP/build/modroot/lib/modules/$SNAA_RUNNING_KVER
		mkdir -p "$kdir/updates"
		if [ -f "$staged/modules.dep" ] &&
		   cmp -s "$staged/updates/snaa.ko" "$SNAA_KO"; then
			cp "$staged"/modules.* "$kdir/"
			cp "$SNAA_KO" "$kdir/updates/snaa.ko"
		else
			echo "# module indexes not staged (scripts/modroot.sh): running depmod"
			cp "$SNAA_KO" "$kdir/updates/snaa.ko"
			depmod -a
		fi
		echo "$SNAA_KO" >"$marker"
	fi
	# SNAA_DYNDBG="+p" (or "func snaa_qp_error +p"-style flags for the
	# whole module): the driver's debug messages, in dmesg, from load on
	if [ -n "${SNAA_DYNDBG:-}" ]; then
		echo "options snaa dyndbg=\"$SNAA_DYNDBG\"" \
			>/etc/modprobe.d/snaa-dyndbg.conf
	elif [ -e /etc/modprobe.d/snaa-dyndbg.conf ]; then
		rm -f /etc/modprobe.d/snaa-dyndbg.conf
	fi
}

# snaa_use_build_provider: use the build-tree provider, not an installed one.
snaa_use_build_provider() {
	export RDMAV_DRIVERS="$SNAA_PROVIDER"
}

snaa_device_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

snaa_device_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# Kernel log lines that fail a test: reports of every debug option of the
# debug kernel (KASAN, lockdep, kmemleak, UBSAN, DEBUG_OBJECTS, KFENCE) and
# of the lockup, stall and hung task detectors.
# shellcheck disable=SC2034 # for the scripts that source this
SNAA_DMESG_BAD='BUG:|WARNING:|Oops|Call Trace|general protection|refcount_t|list_add corruption|list_del corruption|KASAN|UBSAN|kernel BUG|soft lockup|hard LOCKUP|rcu_sched self-detected stall|rcu: INFO|hung_task|blocked for more than|Kernel panic|ODEBUG|KFENCE|possible circular locking|possible recursive locking|inconsistent lock state|unreferenced object|bad page|page allocation failure'

# snaa_nobody_wrapper FILE MEMLOCK_KB: write FILE, a script that runs its
# arguments as uid/gid 65534 without capabilities and with RLIMIT_MEMLOCK
# MEMLOCK_KB (what an unprivileged user has), writing its pid to
# $SNAA_PIDFILE first if that is set (env SNAA_PIDFILE=F FILE CMD...).
snaa_nobody_wrapper() {
	{
		echo '#!/bin/sh'
		echo "ulimit -l $2 || exit 1"
		echo '[ -n "${SNAA_PIDFILE:-}" ] && echo $$ >"$SNAA_PIDFILE"'
		echo 'exec setpriv --reuid=65534 --regid=65534 --clear-groups \'
		echo '	--inh-caps=-all -- "$@"'
	} >"$1" && chmod 755 "$1"
}
