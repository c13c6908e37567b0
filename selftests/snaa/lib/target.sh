# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Driving uc_target (uc_target.c), sourced through lib.sh.  Instances
# T1..T5 run in namespace $TGT_NS on RDMA device $TGT_DEV with a path to
# GID ::ffff:$TGT_DGID; their FIFOs and output live in $TGT_TMP.  The
# caller sets those four variables and UC_TARGET, and kills $T1_PID.. at
# cleanup (tgt_stop_all).

# tgt_fd T: the file descriptor feeding target T (T1 .. T5).
tgt_fd() {
	case $1 in
	T1) echo 3 ;;
	T2) echo 4 ;;
	T3) echo 5 ;;
	T4) echo 6 ;;
	T5) echo 7 ;;
	esac
}

# tgt_start T ARGS...: start uc_target T; its info line ends up in $T_INFO.
tgt_start() {
	t=$1
	shift
	mkfifo "$TGT_TMP/$t.in" || return 1
	ip netns exec "$TGT_NS" "$UC_TARGET" --dev "$TGT_DEV" \
		--dgid "$TGT_DGID" "$@" <"$TGT_TMP/$t.in" \
		>"$TGT_TMP/$t.out" 2>"$TGT_TMP/$t.err" &
	eval "${t}_PID=\$!"
	case $t in
	T1) exec 3>"$TGT_TMP/$t.in" ;;
	T2) exec 4>"$TGT_TMP/$t.in" ;;
	T3) exec 5>"$TGT_TMP/$t.in" ;;
	T4) exec 6>"$TGT_TMP/$t.in" ;;
	T5) exec 7>"$TGT_TMP/$t.in" ;;
	esac
	if ! wait_for 30 grep -q '^qpn=' "$TGT_TMP/$t.out"; then
		echo "# $t did not start:"
		sed 's/^/# /' "$TGT_TMP/$t.err"
		return 1
	fi
	eval "${t}_INFO=\$(grep '^qpn=' \"\$TGT_TMP/\$t.out\")"
}

# tgt_stop_all: kill every target started and close its FIFO.
tgt_stop_all() {
	for p in ${T1_PID:-} ${T2_PID:-} ${T3_PID:-} ${T4_PID:-} ${T5_PID:-}; do
		kill "$p" 2>/dev/null
	done
	for p in ${T1_PID:-} ${T2_PID:-} ${T3_PID:-} ${T4_PID:-} ${T5_PID:-}; do
		wait "$p" 2>/dev/null
	done
	T1_PID='' T2_PID='' T3_PID='' T4_PID='' T5_PID=''
	exec 3>&- 4>&- 5>&- 6>&- 7>&-
}

# field KEY LINE: the value of KEY=VALUE in LINE.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# tgt_cmd T COMMAND: send COMMAND, print the answer (without "end").
# Commands are answered in order; the answer to this one follows the
# last "end" already in the output (tgt_cmd runs in subshells: the
# count must come from the file).
tgt_cmd() {
	t=$1
	fd=$(tgt_fd "$t")
	n=$(($(grep -c '^end$' "$TGT_TMP/$t.out") + 1))
	# shellcheck disable=SC2039,SC3021 # fd number from a variable
	eval "printf '%s\n' \"\$2\" >&$fd" || return 1
	tries=300
	while [ "$(grep -c '^end$' "$TGT_TMP/$t.out")" -lt "$n" ]; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || { echo "error: $t does not answer"; return 1; }
		sleep 0.1
	done
	awk -v n="$n" 'BEGIN { e = 0 }
		/^end$/ { e++; next }
		e == n - 1 && !/^qpn=/' "$TGT_TMP/$t.out"
}
