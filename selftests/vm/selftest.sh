#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh [RUN OPTIONS] - test selftests/vm/run itself; KTAP output.
#
# Options (e.g. --kernel KVER) are passed to every run.  Exits 0 only if
# every test passes.  Takes a minute or so: most tests boot a VM.

set -u

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
run_opts=("$@")

work=$(mktemp -d "${TMPDIR:-/tmp}/snaa-vm-selftest.XXXXXXXX") || exit 1
trap 'rm -rf -- "$work"' EXIT

# vm EXPECTED_STATUS [RUN ARGS...]: run the runner, stdout to $work/out and
# stderr to $work/err; succeed if it exits with EXPECTED_STATUS.
vm() {
	local expected=$1
	shift
	# TMPDIR: the run's kept temporary directories go away with $work.
	TMPDIR=$work "$here/run" "${run_opts[@]}" "$@" </dev/null >"$work/out" 2>"$work/err"
	status=$?
	if ((status != expected)); then
		echo "# expected exit status $expected, got $status"
		return 1
	fi
}

# expect_output STRING: the last run printed exactly STRING on stdout.
expect_output() {
	local got
	got=$(cat -- "$work/out"; echo .)
	got=${got%.}
	[[ $got == "$1" ]] && return 0
	echo "# expected output: $(printf '%q' "$1")"
	echo "#      got output: $(printf '%q' "$got")"
	return 1
}

## The tests.  Each prints diagnostics as "# ..." lines. ##

tests=()

tests+=("run true exits 0")
t_true() {
	vm 0 true
}

tests+=("the exit status of the command is passed on")
t_status() {
	vm 7 sh -c 'exit 7'
}

tests+=("console text cannot fake a pass")
t_fake_text() {
	vm 3 sh -c 'echo 0; echo PASS; echo "0 0" >/dev/console; exit 3' &&
		expect_output $'0\nPASS\n'
}

tests+=("a result file without the token is rejected")
t_fake_result() {
	# Forge a result, then power off before the runner can write its own.
	vm 125 sh -c 'echo "0000 0" >/run/snaa-vm/result; echo o >/proc/sysrq-trigger; sleep 30'
}

tests+=("a WARNING in the kernel log fails the run")
t_warning() {
	vm 126 sh -c "echo 'WARNING: test' >/dev/kmsg" &&
		grep -q 'WARNING: test' "$work/err"
}

tests+=("arguments reach the command intact")
t_args() {
	# shellcheck disable=SC2016 # literal $(id)
	local nasty=('a b' "c'd" '' '$(id)' '*' '\n' $'tab\there' $'new\nline' '"' '-e')

	vm 0 printf '%s|' 'a b' "c'd" && expect_output "a b|c'd|" &&
		vm 0 printf '[%s]' "${nasty[@]}" &&
		expect_output "$(printf '[%s]' "${nasty[@]}")"
}

tests+=("environment: cwd, TERM, SNAA_*/RDMAV_*/IBV_* are passed, nothing else")
t_env() {
	# shellcheck disable=SC2016 # expanded in the guest
	SNAA_SELFTEST='x y$' RDMAV_SELFTEST=1 IBV_SELFTEST=2 OTHER_SELFTEST=3 \
		vm 0 sh -c 'echo "$PWD|$SNAA_VM_CWD|$TERM|$SNAA_SELFTEST|$RDMAV_SELFTEST|$IBV_SELFTEST|${OTHER_SELFTEST-unset}|$SNAA_VM"' &&
		expect_output "$PWD|$PWD|dumb|x y\$|1|2|unset|1"$'\n'
}

tests+=("the guest sees the host's files, can write anywhere, the host is not modified")
t_readonly_host() {
	local probe=snaa-vm-selftest-$$

	rm -f "/etc/$probe" "/tmp/$probe" "$here/$probe"
	echo visible >"$work/visible"
	# shellcheck disable=SC2016 # expanded in the guest
	vm 0 sh -c '
		set -e
		test "$(pwd)" = "$1"
		test -f selftest.sh
		test "$(cat "$3")" = visible
		echo x >"/tmp/$2"
		touch "/etc/$2" "$1/$2"
		rm "$3"
		test -f "/etc/$2" -a -f "$1/$2" -a -s "/tmp/$2" -a ! -e "$3"
		echo ok' sh "$here" "$probe" "$work/visible" &&
		expect_output $'ok\n' || return 1
	if [[ -e /etc/$probe || -e /tmp/$probe || -e $here/$probe || ! -e $work/visible ]]; then
		echo "# the guest modified the host file system"
		rm -f "/etc/$probe" "/tmp/$probe" "$here/$probe"
		return 1
	fi
}

tests+=("a kernel panic ends the run with 125")
t_panic() {
	vm 125 sh -c 'echo c >/proc/sysrq-trigger; sleep 30' &&
		grep -q 'Kernel panic' "$work/err" || return 1
	if grep -q 'booting once more' "$work/err"; then
		echo "# a panic after the command started was retried"
		return 1
	fi
}

tests+=("a VM that dies while booting is booted once more")
t_boot_retry() {
	# Without its initramfs /init the kernel panics before the command
	# starts; the second boot is a normal one.
	SNAA_VM_APPEND_FIRST=rdinit=/nonexistent vm 0 echo second &&
		expect_output $'second\n' &&
		grep -q 'died before the command started (Kernel panic' "$work/err" &&
		grep -q 'booting once more' "$work/err"
}

tests+=("the hard timeout kills the VM")
t_timeout() {
	local start=$SECONDS

	SNAA_TIME_SCALE=1 vm 124 --timeout 20 sleep 100 || return 1
	if ((SECONDS - start > 45)); then
		echo "# took $((SECONDS - start))s"
		return 1
	fi
}

tests+=("SNAA_TIME_SCALE multiplies the timeout; a bad one is a usage error")
t_time_scale() {
	local start=$SECONDS

	SNAA_TIME_SCALE=1.5 vm 124 --timeout 14 sleep 100 || return 1
	grep -q 'killed the VM after 21s (14s x time scale 1.5)' "$work/err" || {
		echo "# no 'killed the VM after 21s (14s x time scale 1.5)' in:"
		sed 's/^/# /' "$work/err"
		return 1
	}
	if ((SECONDS - start < 21)); then
		echo "# killed after $((SECONDS - start))s, before 21s"
		return 1
	fi
	SNAA_TIME_SCALE=fast vm 2 true
}

tests+=("usage errors exit 2, --help exits 0")
t_usage() {
	vm 2 --bogus-option true && vm 2 && vm 0 --help &&
		grep -q '^Usage:' "$work/out"
}

funcs=(t_true t_status t_fake_text t_fake_result t_warning t_args t_env
	t_readonly_host t_panic t_boot_retry t_timeout t_time_scale t_usage)

## KTAP driver ##

cd "$here" || exit 1
echo "KTAP version 1"
echo "1..${#tests[@]}"
failed=0
for i in "${!tests[@]}"; do
	: >"$work/out"
	: >"$work/err"
	start=$SECONDS
	if "${funcs[$i]}"; then
		result=ok
	else
		result="not ok"
		failed=$((failed + 1))
		awk '{ print "# stdout: " $0 }' "$work/out"
		awk '{ print "# stderr: " $0 }' "$work/err"
	fi
	echo "# ${funcs[$i]}: $((SECONDS - start))s"
	echo "$result $((i + 1)) - ${tests[$i]}"
done
echo "# $((${#tests[@]} - failed)) passed, $failed failed"
((failed == 0))
