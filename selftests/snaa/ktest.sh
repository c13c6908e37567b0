#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# snaa used by an in-kernel consumer: loads ktest/snaa_ktest.ko (built by
# "make ktest" against the VM's kernel), whose init runs the tests and
# prints KTAP to the kernel log, once in loopback (snaa0 -> snaa0) and
# once between two snaa devices in two network namespaces (snaa0 ->
# snaa1, lib/topology.sh's setup_snaa).  Each test line of the module is
# re-emitted here, prefixed with the run; insmod must succeed iff the
# module reported no failure.  Runs as root inside the test VM:
#
#     selftests/vm/run --timeout 300 -- sh selftests/snaa/ktest.sh
#
# Features: kernel
set -u

UC_HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$UC_HERE/lib.sh"

# Built by "make ktest" for the running kernel (scripts/modbuild.sh).
KTEST_KO=${KTEST_KO:-$SNAA_TOP/$(sh "$SNAA_TOP/scripts/modbuild.sh" "$(uname -r)" selftests/snaa/ktest)/snaa_ktest.ko}

# ktest_run NAME PARAMS...: one insmod of the test module.
ktest_run() {
	run=$1
	shift
	before=$(dmesg | wc -l)
	out=$(insmod "$KTEST_KO" "$@" 2>&1)
	rc=$?
	# The module's lines, without the kernel log's timestamp and prefix.
	dmesg | tail -n "+$((before + 1))" |
		sed -n 's/^.*snaa_ktest: //p' >"$ktest_log"
	passed=0
	failed=0
	while IFS= read -r line; do
		case $line in
		"ok "*)
			ktap_ok "$run: ${line#ok * - }"
			passed=$((passed + 1))
			;;
		"not ok "*)
			ktap_fail "$run: ${line#not ok * - }"
			failed=$((failed + 1))
			;;
		"#"*)
			echo "# $run: ${line#\# }"
			;;
		esac
	done <"$ktest_log"
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$ktest_log")
	if [ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "${plan:-x}" = "$passed" ] &&
	   [ "$passed" -gt 0 ]; then
		ktap_ok "$run: insmod succeeded, the module's plan 1..$plan matches its $passed results"
		rmmod snaa_ktest
	elif [ "$rc" != 0 ] && [ "$failed" -gt 0 ]; then
		ktap_ok "$run: insmod refused as the module reported $failed failure(s): $out"
	else
		ktap_fail "$run: insmod exit $rc, plan '${plan:-none}', $passed passed, $failed failed" \
			"$out" "$(cat "$ktest_log")"
		rmmod snaa_ktest 2>/dev/null
	fi
}

ktest_main() {
	case ${1:-} in
	-h|--help)
		echo "usage: $0 (in the test VM; see the header)"
		exit 0
		;;
	"") ;;
	*)
		echo "usage: $0" >&2
		exit 2
		;;
	esac
	uc_vm_only
	[ -f "$KTEST_KO" ] ||
		snaa_skip "$KTEST_KO not built (make ktest)"
	uc_backlog
	setup_snaa
	trap 'cleanup_snaa; exit 130' INT TERM
	ktest_log=$(mktemp)

	ktap_header "snaa-ktest"
	ktest_run loopback dev_a=snaa0 addr_a=198.18.0.1 \
		dev_b=snaa0 addr_b=198.18.0.1
	ktest_run "snaa0->snaa1" dev_a=snaa0 addr_a=198.18.0.1 \
		dev_b=snaa1 addr_b=198.18.0.2
	check "bad parameter: insmod with an unknown device fails" \
		sh -c "! insmod '$KTEST_KO' dev_a=nosuchdev dev_b=nosuchdev"
	check "no snaa_ktest module left loaded" \
		sh -c "! grep -q '^snaa_ktest ' /proc/modules"
	rm -f "$ktest_log"
	cleanup_snaa
	ktap_finish
}

ktest_main "$@"
