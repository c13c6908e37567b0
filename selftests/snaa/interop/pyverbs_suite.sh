#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Print the path of a ready-to-run copy of rdma-core's own test suite
# (pyverbs' tests/, run_tests.py) for selftests/snaa/interop/pyverbs.sh.
#
#   selftests/snaa/interop/pyverbs_suite.sh
#
# Debian's python3-pyverbs ships rdma-core's tests/ under
# /usr/share/doc/rdma-core/tests with the larger files gzipped (dh_compress),
# which Python cannot import.  The first call copies that directory to
# ${SNAA_CACHE:-/var/cache/snaa}/pyverbs-tests-VERSION/ (VERSION: the
# python3-pyverbs package version, so an upgrade gets a fresh copy) and
# gunzips the *.gz files there; later calls only print the path.  Nothing
# is written into the work tree.
#
# Exit status: 0 and the path on stdout; 1 and a message on stderr if
# python3-pyverbs is not installed ("make deps" installs it) or the copy
# cannot be made.
set -eu

src=/usr/share/doc/rdma-core/tests
cache=${SNAA_CACHE:-/var/cache/snaa}

die() {
	echo "pyverbs_suite: $*" >&2
	exit 1
}

ver=$(dpkg-query -W -f='${Status} ${Version}' python3-pyverbs 2>/dev/null |
      sed -n 's/^install ok installed //p')
[ -n "$ver" ] ||
	die "python3-pyverbs is not installed (apt-get install python3-pyverbs, or make deps)"
[ -f "$src/run_tests.py" ] ||
	die "$src/run_tests.py missing: python3-pyverbs $ver ships no tests (reinstall it; is /usr/share/doc excluded by dpkg path-exclude?)"

dir=$cache/pyverbs-tests-$ver
if [ -f "$dir/.snaa-complete" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache" || die "cannot create $cache (set SNAA_CACHE)"
tmp=$(mktemp -d "$cache/.pyverbs-tests.XXXXXX") || die "cannot write to $cache"
trap 'rm -rf "$tmp"' EXIT
cp -R "$src/." "$tmp/" || die "cannot copy $src"
find "$tmp" -name '*.gz' -exec gunzip -f {} + || die "gunzip failed in $tmp"
date -u +%FT%TZ >"$tmp/.snaa-complete"
chmod 755 "$tmp"
# Another caller may have won the race: keep its copy.
if ! mv -T "$tmp" "$dir" 2>/dev/null; then
	[ -f "$dir/.snaa-complete" ] || die "cannot create $dir"
fi
trap - EXIT
rm -rf "$tmp"
echo "$dir"
