#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# add-regress.sh TARGET FILE NAME
#
# Keep a fuzz input (typically a crash reproducer from build/fuzz/crashes/)
# as a regression input of TARGET: appends "NAME HEX" to
# tests/fuzz/regress/TARGET.hex, which "make check" replays before any
# fuzzing.  Describe the bug in the comment line above it, and commit it
# with the fix (or with the failing test, if the fix is someone else's).
set -eu

if [ $# != 3 ]; then
	echo "usage: $0 TARGET FILE NAME" >&2
	exit 2
fi
t=$1
f=$2
name=$3
hexfile=$(dirname "$0")/regress/$t.hex

if [ ! -e "$hexfile" ]; then
	echo "$0: no $hexfile: unknown target $t" >&2
	exit 1
fi
case $name in
'' | *[!A-Za-z0-9._-]*)
	echo "$0: NAME: letters, digits, '.', '_' and '-' only" >&2
	exit 1
	;;
esac
if grep -q "^$name " "$hexfile"; then
	echo "$0: $name is in $hexfile already" >&2
	exit 1
fi
hex=$(od -An -v -tx1 "$f" | tr -d ' \n')
printf '# %s: TODO what it found (from %s, %s)\n%s %s\n' "$name" \
	"${f##*/}" "$(date -u +%Y-%m-%d)" "$name" "$hex" >> "$hexfile"
echo "added $name to $hexfile; describe it in the comment line"
