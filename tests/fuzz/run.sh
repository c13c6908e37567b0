#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run the libFuzzer targets that tests/fuzz/Makefile builds.
#
#   run.sh check TARGET...   KTAP, two tests per target: its regression
#                            inputs replayed, then a deterministic run of
#                            a fixed number of inputs (runs() below, or
#                            FUZZ_RUNS) from seed FUZZ_SEED that
#                            starts from the seeds and the regression
#                            inputs in a fresh corpus directory, with
#                            address space randomisation off
#   run.sh fuzz TARGET...    FUZZ_SECONDS per target (seed FUZZ_SEED) on
#                            build/fuzz/corpus/TARGET, which is kept and
#                            grows from run to run; a summary per target
#
# Crash reproducers go to build/fuzz/crashes/TARGET/, libFuzzer's output
# to build/fuzz/logs/.  Exit status 1 if a target failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
[ $# -gt 0 ] && shift
B=build/fuzz
: "${FUZZ_SEED:=1}" "${FUZZ_SECONDS:=60}"

# Runs per target in check: about 2 s each for the cheap targets, 5 s
# for fuzz_icrc (a bit-serial CRC over up to 4 KiB per input) on an idle
# core; three times that with the machine's two cores shared by 7 jobs.
# FUZZ_RUNS overrides all three.
runs() {
	if [ -n "${FUZZ_RUNS:-}" ]; then
		echo "$FUZZ_RUNS"
		return
	fi
	case $1 in
	fuzz_icrc) echo 100000 ;;
	*) echo 1000000 ;;
	esac
}

# Longest input: a bit more than the largest valid packet (BTH, RETH,
# ImmDt, 4096 bytes, ICRC: 4132) so that the length limits get tested.
max_len() {
	case $1 in
	fuzz_parse) echo 4160 ;;
	fuzz_icrc) echo 4200 ;;	# 7 control bytes, IPv6, UDP, packet
	*) echo 64 ;;
	esac
}

# The corpus directories after the first one (which libFuzzer adds to).
inputs() {
	[ -d "$B/seeds/$1" ] && echo "$B/seeds/$1"
	echo "$B/regress/$1"
}

quote() {
	tail -n "${2:-80}" "$1" | sed 's/^/# /'
}

# The "cov: N ft: N corp: N/..." numbers of the last status line.
cov() {
	grep -E '^#[0-9]+.*cov: ' "$1" | tail -n 1 |
		sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+).*/cov \1 ft \2 corp \3/'
}

final_stat() {
	sed -n "s/^stat::$2: *//p" "$1" | tail -n 1
}

artifact() {
	sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -n 1
}

# Pointer values reach libFuzzer's tables of compared values, so a run
# repeats exactly only with the same address layout: no ASLR for check.
norand=
if setarch "$(uname -m)" -R true 2>/dev/null; then
	norand="setarch $(uname -m) -R"
fi

n=0
failed=0

check_target() {
	t=$1
	bin=tests/fuzz/$t
	reg=$B/regress/$t
	log=$B/logs/$t.regress.log
	mkdir -p "$B/crashes/$t" "$B/logs"

	# 1. every regression input, before any fuzzing
	n=$((n + 1))
	nreg=$(find "$reg" -type f | wc -l)
	# shellcheck disable=SC2046 # file names made by mkcorpus: no spaces
	if [ "$nreg" = 0 ]; then
		echo "ok $n - $t: no regression inputs # SKIP"
	elif "$bin" -timeout=10 $(find "$reg" -type f | sort) \
			> "$log" 2>&1; then
		echo "ok $n - $t: $nreg regression inputs replayed"
	else
		bad=$(sed -n 's/^Running: //p' "$log" | tail -n 1)
		echo "not ok $n - $t: regression input $bad fails"
		quote "$log"
		failed=$((failed + 1))
	fi

	# 2. a bounded, deterministic run
	n=$((n + 1))
	log=$B/logs/$t.check.log
	work=$B/check/$t
	rm -rf "$work"
	mkdir -p "$work"
	t0=$(date +%s)
	# shellcheck disable=SC2046,SC2086
	$norand "$bin" -seed="$FUZZ_SEED" -runs="$(runs "$t")" \
		-max_len="$(max_len "$t")" \
		-timeout=10 -print_final_stats=1 \
		-artifact_prefix="$B/crashes/$t/" "$work" $(inputs "$t") \
		> "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ "$rc" = 0 ]; then
		echo "ok $n - $t: $(final_stat "$log" number_of_executed_units) runs," \
		     "seed $FUZZ_SEED, $(cov "$log"), ${secs}s"
	else
		a=$(artifact "$log")
		echo "not ok $n - $t: exit $rc after ${secs}s, reproducer ${a:-none}"
		if [ -n "$a" ]; then
			echo "# replay: $bin $a"
			echo "# keep it: sh tests/fuzz/add-regress.sh $t $a NAME"
		fi
		quote "$log"
		failed=$((failed + 1))
	fi
}

fuzz_target() {
	t=$1
	bin=tests/fuzz/$t
	log=$B/logs/$t.log
	mkdir -p "$B/corpus/$t" "$B/crashes/$t" "$B/logs"
	# shellcheck disable=SC2046
	"$bin" -seed="$FUZZ_SEED" -max_total_time="$FUZZ_SECONDS" \
		-max_len="$(max_len "$t")" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$B/crashes/$t/" "$B/corpus/$t" \
		$(inputs "$t") > "$log" 2>&1
	rc=$?
	printf '%-11s %ss  %s runs  %s exec/s  %s  %s\n' "$t" "$FUZZ_SECONDS" \
		"$(final_stat "$log" number_of_executed_units)" \
		"$(final_stat "$log" average_exec_per_sec)" "$(cov "$log")" \
		"$([ "$rc" = 0 ] && echo ok || echo "FAILED: $(artifact "$log")")"
	if [ "$rc" != 0 ]; then
		quote "$log" 60
		failed=$((failed + 1))
	fi
}

case $mode in
check)
	echo "KTAP version 1"
	echo "# suite: fuzz (seed $FUZZ_SEED)"
	echo "1..$((2 * $#))"
	for t; do
		check_target "$t"
	done
	echo "# $((n - failed)) passed, $failed failed"
	;;
fuzz)
	echo "fuzz: $# targets, ${FUZZ_SECONDS}s each, seed $FUZZ_SEED"
	for t; do
		fuzz_target "$t"
	done
	echo "fuzz: $failed of $# targets failed; corpus $B/corpus," \
	     "crashes $B/crashes, logs $B/logs"
	;;
*)
	echo "usage: run.sh check|fuzz TARGET..." >&2
	exit 2
	;;
esac
[ "$failed" = 0 ]
