# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# KTAP output and assertions of the snaa VM test scripts (sourced through
# lib.sh).  Each assertion is one "ok N" or "not ok N" line; what went
# wrong is printed as "# " lines before a "not ok".

ktap_n=0
ktap_failed=0

ktap_header() {
	echo "KTAP version 1"
	echo "# suite: $1"
}

# ktap_ok NAME: one passed test.
ktap_ok() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n - $1"
}

# ktap_fail NAME [DIAGNOSTIC...]: one failed test; each DIAGNOSTIC (may
# be several lines) is printed as "# " lines first.
ktap_fail() {
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	kf_name=$1
	shift
	for kf_l in "$@"; do
		printf '%s\n' "$kf_l" | sed 's/^/# /'
	done
	echo "not ok $ktap_n - $kf_name"
}

# ktap_finish: the plan and the totals; exits 0 iff nothing failed.
ktap_finish() {
	echo "1..$ktap_n"
	echo "# $((ktap_n - ktap_failed)) passed, $ktap_failed failed"
	[ "$ktap_failed" = 0 ] && exit 0
	exit 1
}

# snaa_skip REASON: the whole script cannot run here (kselftest's skip,
# exit 4).
snaa_skip() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	exit 4
}

# check NAME CMD...: one test that passes iff CMD succeeds.
check() {
	ck_name=$1
	shift
	if ck_out=$("$@" 2>&1); then
		ktap_ok "$ck_name"
	else
		ktap_fail "$ck_name" "command failed: $*" "$ck_out"
	fi
}

# check_fails NAME CMD...: one test that passes iff CMD fails.
check_fails() {
	ck_name=$1
	shift
	if ck_out=$("$@" 2>&1); then
		ktap_fail "$ck_name" "command unexpectedly succeeded: $*" \
			"$ck_out"
	else
		ktap_ok "$ck_name"
	fi
}

# check_eq NAME GOT WANT: one test that passes iff GOT is WANT.
check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "got:  '$2'" "want: '$3'"
	fi
}

# check_match NAME TEXT ERE: passes iff a line of TEXT matches ERE.
check_match() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "no line matches /$3/ in:" "$2"
	fi
}

# check_nomatch NAME TEXT ERE: passes iff no line of TEXT matches ERE.
check_nomatch() {
	if printf '%s\n' "$2" | grep -qE -- "$3"; then
		ktap_fail "$1" "a line matches /$3/ in:" "$2"
	else
		ktap_ok "$1"
	fi
}
