# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Time limits of the snaa VM test scripts (sourced through lib.sh).
#
# Every limit goes through snaa_secs: $SNAA_TIME_SCALE (a decimal >= 1 set
# by scripts/check.sh from selftests/vm/calibrate.sh; 1 if unset) says how
# much slower than normal the test VM is today, so that a slow machine
# gets more time rather than failures.  These helpers run often, and a
# process costs 50 ms in the test VM (300 ms on the debug kernel): they
# use the shell's own arithmetic and builtins, not awk or date.

# snaa_scale10 FACTOR: FACTOR (a decimal) times ten, rounded up, at least
# 10; 10 for anything that is not a decimal.
snaa_scale10() {
	case $1 in
	'' | *[!0-9.]* | *.*.* | .* | *.) echo 10; return ;;
	esac
	sc_int=${1%%.*}
	sc_frac=
	case $1 in *.*) sc_frac=${1#*.} ;; esac
	sc_tenths=0
	if [ -n "$sc_frac" ]; then
		sc_tenths=${sc_frac%"${sc_frac#?}"}
		sc_rest=${sc_frac#?}
		# anything below a tenth rounds up
		case $sc_rest in *[1-9]*) sc_tenths=$((sc_tenths + 1)) ;; esac
	fi
	# no leading zeros: the shell would read an octal number
	while [ "${sc_int#0}" != "$sc_int" ]; do
		sc_int=${sc_int#0}
	done
	sc_x=$((${sc_int:-0} * 10 + sc_tenths))
	[ "$sc_x" -lt 10 ] && sc_x=10
	echo "$sc_x"
}
SNAA_SCALE10=$(snaa_scale10 "${SNAA_TIME_SCALE:-1}")

# snaa_secs SECONDS: SECONDS (a whole number) scaled by the machine's
# speed, rounded up to a whole number.
snaa_secs() {
	echo $((($1 * SNAA_SCALE10 + 9) / 10))
}

# snaa_ack_timeout BASE: an RC local ACK timeout of BASE (4.096 us <<
# BASE) on a machine of normal speed, one step more per doubling of
# $SNAA_TIME_SCALE (at most 31), as verbs_util's vu_ack_timeout().
snaa_ack_timeout() {
	at_t=$1
	at_s=10
	while [ "$at_s" -lt "$SNAA_SCALE10" ] && [ "$at_t" -lt 31 ]; do
		at_t=$((at_t + 1))
		at_s=$((at_s * 2))
	done
	echo "$at_t"
}

# snaa_uptime: whole seconds since boot.
snaa_uptime() {
	read -r su_up _ </proc/uptime
	echo "${su_up%%.*}"
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds; false
# after (scaled) SECONDS.  (Its variables have a prefix of their own:
# callers have a "tries".)
wait_for() {
	wf_tries=$((($1 * SNAA_SCALE10 + 9) / 10 * 10))
	shift
	while [ "$wf_tries" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		wf_tries=$((wf_tries - 1))
	done
	return 1
}

# snaa_run TIMEOUT NAME PROG ARGS...: one run of the test program PROG,
# which prints a KTAP document of its own, killed after TIMEOUT seconds,
# between "# ==== PROGNAME NAME: ..." lines.  Adds a line to
# snaa_run_summary and counts the run in snaa_runs_failed unless it exited
# with 0 (4, kselftest's skip, counts too: a skipped run is no pass).
snaa_runs_failed=0
snaa_run_summary=
snaa_run() {
	sr_t=$(snaa_secs "$1")
	sr_name=$2
	sr_prog=$3
	shift 3
	echo "# ==== ${sr_prog##*/} $sr_name: $*"
	sr_start=$(snaa_uptime)
	timeout -k 10 "$sr_t" "$sr_prog" "$@"
	sr_rc=$?
	sr_secs=$(($(snaa_uptime) - sr_start))
	case $sr_rc in
	0) sr_res=ok ;;
	124|137) sr_res="TIMEOUT after ${sr_t}s" ;;
	4) sr_res="SKIP (exit 4)" ;;
	*) sr_res="FAILED (exit $sr_rc)" ;;
	esac
	[ "$sr_rc" = 0 ] || snaa_runs_failed=$((snaa_runs_failed + 1))
	echo "# ==== ${sr_prog##*/} $sr_name: $sr_res, ${sr_secs}s"
	snaa_run_summary="$snaa_run_summary
# $sr_name: $sr_res, ${sr_secs}s"
}
