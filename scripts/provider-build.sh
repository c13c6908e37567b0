#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the snaa provider (userspace/provider) the way rdma-core builds
# its own: as providers/snaa of the source tree of the rdma-core release
# that is to load it, so that it is compiled against that release's
# libibverbs/driver.h and matches its private provider ABI, whatever it
# is (34 for rdma-core 34..56, 57, 59, 64, 65 later on).
#
# usage: scripts/provider-build.sh [OPTION]...
#
#   --rdma-core VER  build against this rdma-core source version: a Debian
#                    version such as 56.1-1 (default: that of the installed
#                    libibverbs-dev)
#   --suite SUITE    the Debian suite whose deb-src holds VER (default:
#                    the suite apt installed libibverbs-dev from, else
#                    this host's codename, from /etc/os-release)
#   --out DIR        where the provider lands (default: build/provider)
#   --tests          also build the provider's host test (test_verbs) and
#                    that release's ibv_devices, into DIR
#   --fetch          fetch and unpack the rdma-core source only
#   --stand-in       rdma-core 44 only: build against the stand-in for its
#                    source tree (userspace/provider/rdma-core-44.0/) even if
#                    the source can be had
#   -h, --help       this text
#
# The steps, each only when its result is missing or out of date (a
# second run rebuilds only what changed):
#  1. the version: dpkg-query of libibverbs-dev (pkg-config libibverbs
#     elsewhere, with RDMA_CORE_SRC);
#  2. its source: "apt-get source rdma-core=VER", with a private apt
#     configuration under the cache (its own sources.list holding one
#     deb-src line for the suite, its own lists and archives; the host's
#     apt configuration and state are not used or changed), unpacked
#     with dpkg-source into $SNAA_CACHE/rdma-core/VER, which is never
#     written to again.  Where the archive lacks one of the package's
#     files, the others are fetched one by one (apt-helper, each checked
#     against the SHA-256 of the signed Sources index) and the upstream
#     tarball unpacked with the Debian tarball's patches applied, or
#     alone (VER.origin says which).  Without the upstream tarball,
#     rdma-core 44 is built against its stand-in (3'.); for any other
#     release that is an error.  On other distributions RDMA_CORE_SRC
#     names an unpacked rdma-core source tree of the installed release;
#  3'. rdma-core 44 without its source: snaa.c, test_verbs.c and
#     test_pabi.c compiled with cc against userspace/provider/
#     rdma-core-44.0/ (driver.h, kern-abi.h and config.h of that release,
#     as far as the provider uses them) and the installed libibverbs,
#     into DIR/rdma-core-44.0-stand-in, then on to 6.;
#  3. a scratch copy of it, DIR/rdma-core-VER/src, with the provider
#     added as rdma-core keeps its providers: providers/snaa (a link to
#     userspace/provider), kernel-headers/rdma/snaa-abi.h (a link to
#     include/uapi/rdma/snaa-abi.h, the master copy), and their lines in
#     CMakeLists.txt and kernel-headers/CMakeLists.txt;
#  4. cmake in DIR/rdma-core-VER/build (Ninja if ninja is installed, else
#     Makefiles; CMAKE_GENERATOR chooses): no pyverbs, no man pages, no
#     libnl;
#  5. the target snaa only (and what it links: that release's libibverbs);
#  6. the result, in DIR: libsnaa.so.1.0.X and its links libsnaa.so.1,
#     libsnaa.so and libsnaa-rdmavNN.so (NN: that libibverbs' private ABI;
#     RDMAV_DRIVERS=DIR/libsnaa loads it without installing anything),
#     snaa.driver (the line for /etc/libibverbs.d/), provider.mk (what
#     was built, for make install).
#
# Environment:
#   SNAA_CACHE          the cache (default /var/cache/snaa; the sources go
#                       to $SNAA_CACHE/rdma-core/)
#   RDMA_CORE_SRC       an unpacked rdma-core source tree to build against
#                       instead of fetching one; only read
#   SNAA_APT_MIRROR     the archive for deb-src (default: Debian's
#                       http://deb.debian.org/debian, Ubuntu's
#                       http://archive.ubuntu.com/ubuntu)
#   SNAA_APT_KEYRING    the keyring that signs it (default: the
#                       distribution's archive keyring)
#   SNAA_JOBS           parallel compile jobs (default: nproc)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
prog=provider-build

die() {
	echo "$prog: $*" >&2
	exit 1
}

say() {
	echo "$prog: $*"
}

usage() {
	sed -n '/^# usage:/,/^#   -h/s/^# \{0,1\}//p' "$0"
}

ver=
suite=
out=$top/build/provider
tests=
fetch_only=
standin=
while [ $# -gt 0 ]; do
	case $1 in
	--rdma-core) [ $# -ge 2 ] || die "--rdma-core needs a version"
		ver=$2; shift ;;
	--rdma-core=*) ver=${1#*=} ;;
	--suite) [ $# -ge 2 ] || die "--suite needs a suite"
		suite=$2; shift ;;
	--suite=*) suite=${1#*=} ;;
	--out) [ $# -ge 2 ] || die "--out needs a directory"
		out=$2; shift ;;
	--out=*) out=${1#*=} ;;
	--tests) tests=1 ;;
	--fetch) fetch_only=1 ;;
	--stand-in) standin=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
case $out in
/*) ;;
*) out=$(pwd)/$out ;;
esac
cache=${SNAA_CACHE:-/var/cache/snaa}/rdma-core

# ---- 1. which rdma-core -------------------------------------------------

# The upstream version of the libibverbs that programs here load:
# "44.0" from libibverbs' pkg-config version "1.14.44.0".
installed_upstream() {
	pkg-config --modversion libibverbs 2>/dev/null |
		sed -n 's/^[0-9]*\.[0-9]*\.\([0-9]*\.[0-9]*\)$/\1/p'
}

# The upstream version of an rdma-core source tree.
tree_version() {
	sed -n 's/^set(PACKAGE_VERSION "\([^"]*\)")$/\1/p' "$1/CMakeLists.txt"
}

if [ -n "${RDMA_CORE_SRC:-}" ]; then
	[ -z "$ver" ] || die "--rdma-core and RDMA_CORE_SRC exclude each other"
	src_pristine=$(cd "$RDMA_CORE_SRC" && pwd) ||
		die "RDMA_CORE_SRC=$RDMA_CORE_SRC: no such directory"
	up=$(tree_version "$src_pristine")
	[ -n "$up" ] ||
		die "RDMA_CORE_SRC=$RDMA_CORE_SRC is not an rdma-core source tree (no PACKAGE_VERSION in its CMakeLists.txt)"
	ver=$up
	inst=$(installed_upstream)
	if [ -n "$inst" ] && [ "$inst" != "$up" ]; then
		say "note: RDMA_CORE_SRC is rdma-core $up, the installed libibverbs is $inst: the provider will be for $up"
	fi
else
	if [ -z "$ver" ]; then
		command -v dpkg-query >/dev/null 2>&1 ||
			die "not a Debian-like system: set RDMA_CORE_SRC to an unpacked rdma-core source tree of the installed release ($(installed_upstream || true))"
		# (one line per installed architecture: the same version)
		ver=$(dpkg-query -W -f='${Version}\n' libibverbs-dev 2>/dev/null |
			head -n 1) || ver=
		[ -n "$ver" ] ||
			die "libibverbs-dev is not installed (make deps), or set RDMA_CORE_SRC"
	fi
	src_pristine=
fi
# No epoch in file and directory names.
ver_dir=${ver#*:}
case $ver_dir in
*/* | '' | .*) die "odd version '$ver'" ;;
esac

# ---- 2. its source ------------------------------------------------------

# apt_src_fetch: unpack rdma-core $ver into $cache/$ver_dir with apt-get
# source through the private configuration in $cache/apt/$suite.
apt_src_fetch() {
	if ! command -v apt-get >/dev/null 2>&1 ||
	   ! command -v dpkg-source >/dev/null 2>&1; then
		die "rdma-core $ver is not in $cache and there is no apt-get/dpkg-source (dpkg-dev) to fetch it: set RDMA_CORE_SRC"
	fi
	# shellcheck disable=SC1091 # the host's
	os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-}")
	if [ -z "$suite" ]; then
		# The suite the installed libibverbs-dev came from, as apt
		# knows it ("500 URI SUITE/COMPONENT ..." under "*** VER"):
		# on sid, os-release names the next release (forky), whose
		# rdma-core may be another.  Else this host's codename.
		suite=$(apt-cache policy libibverbs-dev 2>/dev/null | awk '
			/^ \*\*\* / { f = 1; next }
			/^ {5}[^ ]/ { f = 0 }
			f && $2 ~ /^[a-z]+:\/\// { split($3, a, "/"); print a[1]; exit }')
		# shellcheck disable=SC1091
		[ -n "$suite" ] ||
			suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
		[ -n "$suite" ] || die "cannot tell this host's suite: give --suite"
	fi
	case $os_id in
	ubuntu)
		mirror=${SNAA_APT_MIRROR:-http://archive.ubuntu.com/ubuntu}
		keyring=${SNAA_APT_KEYRING:-/usr/share/keyrings/ubuntu-archive-keyring.gpg} ;;
	*)
		mirror=${SNAA_APT_MIRROR:-http://deb.debian.org/debian}
		keyring=${SNAA_APT_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg} ;;
	esac
	[ -r "$keyring" ] || die "no keyring $keyring (set SNAA_APT_KEYRING)"

	apt=$cache/apt/$suite
	mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/empty" \
		"$cache/dl"
	echo "deb-src [signed-by=$keyring] $mirror $suite main" >"$apt/sources.list"
	# Everything apt reads or writes is under $apt, but for the host's
	# dpkg status (read only).  Check-Valid-Until=false: a mirror's
	# Release of sid may be past its Valid-Until; the signature is still
	# checked, and the version asked for is exact.
	set -- -q -o Dir::Etc::SourceList="$apt/sources.list" \
		-o Dir::Etc::SourceParts="$apt/empty" \
		-o Dir::Etc::Preferences="$apt/empty/none" \
		-o Dir::Etc::PreferencesParts="$apt/empty" \
		-o Dir::State::Lists="$apt/lists" \
		-o Dir::Cache="$apt" \
		-o Dir::Cache::archives="$apt/archives" \
		-o Acquire::Check-Valid-Until=false
	# apt downloads as _apt where it can: let it write there.
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
		chown _apt "$apt/archives/partial" "$cache/dl"
	fi
	say "apt-get update ($suite, deb-src only, private lists in $apt)"
	apt-get "$@" update >"$apt/update.log" 2>&1 || {
		cat "$apt/update.log" >&2
		die "apt-get update for deb-src $mirror $suite failed"
	}
	say "apt-get source rdma-core=$ver"
	if (cd "$cache/dl" && apt-get "$@" source --download-only \
		"rdma-core=$ver" >"$cache/dl/source.log" 2>&1); then
		dsc_unpack
		return
	fi
	# A mirror or snapshot may lack a file of the source package
	# (Debian's archive here answers 404 for rdma-core_44.0.orig.tar.gz
	# and for the .dsc of 56.1-1 and 65.0-1.1): fetch what it has, file
	# by file, each checked against the signed Sources index.
	say "apt-get source failed ($(grep -m 1 -E '^(E|Err):' "$cache/dl/source.log" || echo 'see its log'))"
	say "fetching the files of rdma-core $ver one by one"
	apt-cache "$@" showsrc rdma-core >"$cache/dl/showsrc" 2>/dev/null
	dir=$(awk -v v="$ver" '/^Version: / { ok = $2 == v }
		ok && /^Directory: / { print $2; exit }' "$cache/dl/showsrc")
	[ -n "$dir" ] || {
		apt-cache "$@" showsrc rdma-core 2>/dev/null |
			sed -n 's/^Version: /'"$prog"': '"$suite"' has rdma-core /p' >&2
		die "$suite has no rdma-core $ver: another --suite, or RDMA_CORE_SRC"
	}
	awk -v v="$ver" '/^Version: / { ok = $2 == v }
		/^[^ ]/ { sums = 0 } /^Checksums-Sha256:/ { sums = ok; next }
		sums && NF == 3 { print $1, $3 }' "$cache/dl/showsrc" |
	while read -r sha name; do
		[ -f "$cache/dl/$name" ] && continue
		if /usr/lib/apt/apt-helper "$@" download-file \
			"$mirror/$dir/$name" "$cache/dl/$name" "SHA256:$sha" \
			>/dev/null 2>&1; then
			say "  $name"
		else
			say "  $name: not in the archive"
		fi
	done
	dsc=$cache/dl/rdma-core_${ver_dir}.dsc
	up=${ver_dir%-*}
	orig=
	for f in "$cache/dl/rdma-core_$up.orig.tar".*; do
		[ -f "$f" ] && orig=$f
	done
	deb=
	for f in "$cache/dl/rdma-core_$ver_dir.debian.tar".*; do
		[ -f "$f" ] && deb=$f
	done
	if [ -f "$dsc" ] && [ -n "$orig" ] && [ -n "$deb" ]; then
		dsc_unpack
		return
	fi
	# Without the .dsc, do what dpkg-source -x does for a 3.0 (quilt)
	# package; without the Debian tarball, the upstream release alone.
	[ -n "$orig" ] || return 1
	tmp=$cache/.unpack.$$
	rm -rf "$tmp"
	mkdir -p "$tmp/src"
	tar -xf "$orig" -C "$tmp/src" --strip-components=1 ||
		die "cannot unpack $orig"
	{
		echo "rdma-core $ver as assembled by scripts/provider-build.sh on $(date -u +%F):"
		echo "${orig##*/} (sha256 as in $suite's signed Sources index)"
	} >"$tmp/origin"
	if [ -n "$deb" ]; then
		mkdir -p "$tmp/src/debian"
		tar -xf "$deb" -C "$tmp/src" || die "cannot unpack $deb"
		echo "and ${deb##*/}, with the patches of debian/patches/series applied in order" >>"$tmp/origin"
		if [ -f "$tmp/src/debian/patches/series" ]; then
			sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
				"$tmp/src/debian/patches/series" |
			while read -r pf popt; do
				patch -s -d "$tmp/src" "${popt:--p1}" \
					<"$tmp/src/debian/patches/$pf" ||
					die "patch $pf does not apply"
			done || exit 1
		fi
	else
		echo "only: the Debian tarball is not in the archive, Debian's patches are not applied" >>"$tmp/origin"
		say "note: no Debian tarball for $ver: the upstream source without Debian's patches"
	fi
	mv "$tmp/origin" "$cache/$ver_dir.origin"
	mv "$tmp/src" "$cache/$ver_dir"
	rmdir "$tmp"
}

# dsc_unpack: dpkg-source -x of the fetched .dsc into $cache/$ver_dir.
dsc_unpack() {
	dsc=$cache/dl/rdma-core_${ver_dir}.dsc
	[ -f "$dsc" ] || die "apt-get source left no $dsc"
	tmp=$cache/.unpack.$$
	rm -rf "$tmp"
	dpkg-source -q -x "$dsc" "$tmp/src" >"$cache/dl/unpack.log" 2>&1 || {
		cat "$cache/dl/unpack.log" >&2
		rm -rf "$tmp"
		die "dpkg-source -x $dsc failed"
	}
	mv "$tmp/src" "$cache/$ver_dir"
	rmdir "$tmp"
}

# The stand-in for a release's source tree, if there is one.
standin_dir=$top/userspace/provider/rdma-core-${ver_dir%%-*}
if [ -n "$standin" ]; then
	[ -z "${RDMA_CORE_SRC:-}" ] || die "--stand-in and RDMA_CORE_SRC exclude each other"
	[ -d "$standin_dir" ] ||
		die "--stand-in: there is a stand-in for rdma-core 44 only, not for $ver"
elif [ -z "$src_pristine" ]; then
	src_pristine=$cache/$ver_dir
	if [ ! -f "$src_pristine/CMakeLists.txt" ]; then
		mkdir -p "$cache" || die "cannot create $cache (SNAA_CACHE=)"
		# One fetch at a time (work trees share the cache); the
		# one that waited finds the source there.
		exec 9>"$cache/.lock"
		command -v flock >/dev/null 2>&1 && flock 9
		# (a fetch that found no upstream tarball is not tried again
		# on every build: the marker says when it was)
		if [ -f "$src_pristine/CMakeLists.txt" ]; then
			:
		elif [ -f "$src_pristine.unavailable" ]; then
			say "no upstream tarball of rdma-core $ver in the archive on $(cat "$src_pristine.unavailable") (remove $src_pristine.unavailable to try again)"
			src_pristine=
		elif ! apt_src_fetch; then
			date -u +%F >"$src_pristine.unavailable"
			src_pristine=
		fi
		exec 9>&-
	fi
	if [ -z "$src_pristine" ]; then
		[ -d "$standin_dir" ] ||
			die "the archive has no upstream tarball of rdma-core $ver: set RDMA_CORE_SRC to an unpacked source tree of it"
		say "the archive has no upstream tarball of rdma-core $ver: building against its stand-in, ${standin_dir#"$top"/}"
		standin=1
	else
		[ "$(tree_version "$src_pristine")" = "${ver_dir%%-*}" ] ||
			die "$src_pristine is not rdma-core ${ver_dir%%-*} (remove it to fetch it again)"
	fi
fi
if [ -z "$standin" ]; then
	[ -f "$src_pristine/providers/siw/CMakeLists.txt" ] ||
		die "$src_pristine: not an rdma-core source tree"
	say "rdma-core $ver: $src_pristine"
fi
[ -z "$fetch_only" ] || exit 0

# put SRC DST: copy SRC to DST unless DST has the same bytes already
# (an unchanged provider keeps its time stamp).
put() {
	if ! cmp -s "$1" "$2"; then
		cp "$1" "$2.new"
		mv "$2.new" "$2"
	fi
}

# provider_mk PABI LIB LINK [VAR=VALUE...]: write $out/provider.mk, what
# $out holds (the Makefile's install and check read it).
provider_mk() {
	{
		echo "# Written by scripts/provider-build.sh: what $out holds."
		echo "SNAA_RDMA_CORE_VERSION := $ver"
		echo "SNAA_IBVERBS_PABI := $1"
		echo "SNAA_PROVIDER_LIB := $2"
		echo "SNAA_PROVIDER_LINK := $3"
		shift 3
		for kv in "$@"; do
			echo "${kv%%=*} := ${kv#*=}"
		done
	} >"$out/provider.mk.tmp"
	put "$out/provider.mk.tmp" "$out/provider.mk"
	rm -f "$out/provider.mk.tmp"
}

# clear_other LIB LINK: remove what another rdma-core left in $out.
clear_other() {
	for f in "$out"/libsnaa.so.1.* "$out"/libsnaa-rdmav*.so; do
		case ${f##*/} in
		"$1" | "$2") ;;
		*) rm -f "$f" ;;
		esac
	done
}

# ---- 3'. or: against the stand-in ----------------------------------------

# The provider and its tests compiled directly, with the warnings
# rdma-core builds its providers with, against the stand-in's driver.h
# and the installed libibverbs (which is that release).  test_pabi checks
# the stand-in's layouts against that library.
if [ -n "$standin" ]; then
	up=${ver_dir%%-*}
	inst=$(installed_upstream)
	[ "$inst" = "$up" ] ||
		die "the stand-in is rdma-core $up, the installed libibverbs is ${inst:-none}: it can only be built where that release is installed"
	pdir=$top/userspace/provider
	work=$out/rdma-core-$up-stand-in
	mkdir -p "$work"
	cc=${CC:-cc}
	set -- -std=gnu11 -Wall -Wextra -Wno-sign-compare \
		-Wno-unused-parameter -Wmissing-prototypes \
		-Wmissing-declarations -Wwrite-strings -Wformat=2 \
		-Wformat-nonliteral -Wcast-function-type -Wnested-externs \
		-Wshadow -Wno-missing-field-initializers -Werror -O2 -g \
		-I"$standin_dir" -I"$top/include/uapi" -I"$top/tests/lib"
	lib=libsnaa.so.1.0.$up
	link=libsnaa-rdmav34.so
	say "cc: $work/$lib (against ${standin_dir#"$top"/})"
	# -z now: a libibverbs without one of the imports is refused at
	# load time, not at the first call.
	"$cc" "$@" -fPIC -shared -Wl,-soname,libsnaa.so.1 -Wl,-z,defs \
		-Wl,-z,now -Wl,-z,relro \
		-Wl,--version-script="$pdir/libsnaa.map" \
		-o "$work/$lib" "$pdir/snaa.c" -libverbs -ldl ||
		die "build failed"
	if [ -n "$tests" ]; then
		# the libibverbs entry points the tests stand in for
		exports="verbs_register_driver_34 verbs_set_ops __verbs_log
			ibv_cmd_get_context ibv_cmd_query_device_any
			ibv_cmd_query_port ibv_cmd_alloc_pd ibv_cmd_dealloc_pd
			ibv_cmd_reg_mr ibv_cmd_dereg_mr ibv_cmd_create_cq
			ibv_cmd_destroy_cq ibv_cmd_req_notify_cq
			ibv_cmd_resize_cq ibv_cmd_create_qp ibv_cmd_modify_qp
			ibv_cmd_query_qp ibv_cmd_destroy_qp ibv_cmd_create_ah
			ibv_cmd_destroy_ah ibv_cmd_alloc_mw ibv_cmd_dealloc_mw
			ioctl"
		for t in test_verbs test_pabi; do
			# shellcheck disable=SC2046 # one option per name
			"$cc" "$@" $(for e in $exports; do
				printf -- '-Wl,--export-dynamic-symbol=%s ' "$e"; done) \
				-o "$work/$t" "$pdir/$t.c" -libverbs -ldl ||
				die "build of $t failed"
		done
	fi
	mkdir -p "$out"
	clear_other "$lib" "$link"
	put "$work/$lib" "$out/$lib"
	ln -sfn "$lib" "$out/libsnaa.so.1"
	ln -sfn libsnaa.so.1 "$out/libsnaa.so"
	ln -sfn "$lib" "$out/$link"
	echo "driver snaa" >"$work/snaa.driver"
	put "$work/snaa.driver" "$out/snaa.driver"
	if [ -n "$tests" ]; then
		for t in test_verbs test_pabi; do
			put "$work/$t" "$out/$t"
			chmod +x "$out/$t"
		done
		# the installed ibv_devices is that release's
		rm -f "$out/ibv_devices"
	fi
	provider_mk 34 "$lib" "$link" \
		"SNAA_RDMA_CORE_STAND_IN=${standin_dir#"$top"/}"
	say "$out/$link -> $lib (rdma-core $ver stand-in, private ABI 34)"
	exit 0
fi

# ---- 3. the scratch copy with the provider ------------------------------

work=$out/rdma-core-$ver_dir
src=$work/src
bld=$work/build
# What the copy was made from and how: a different one is made again.
overlay="1 $src_pristine $top"

# add_after FILE PATTERN LINE COUNT: put LINE (indented as the match)
# after each line of FILE matching the awk regex PATTERN; there must be
# COUNT of them.
add_after() {
	awk -v pat="$2" -v add="$3" -v want="$4" '
		{ print }
		$0 ~ pat { match($0, /^[ \t]*/); print substr($0, 1, RLENGTH) add; n++ }
		END { exit n != want }' "$1" >"$1.new" ||
		die "$1: expected $4 line(s) matching $2 to add $3 after"
	mv "$1.new" "$1"
}

if [ "$(cat "$src/.snaa-overlay" 2>/dev/null)" != "$overlay" ]; then
	say "scratch copy: $src"
	rm -rf "$src.new"
	mkdir -p "$src.new"
	# (not a git checkout's .git)
	(cd "$src_pristine" && tar -cf - --exclude=./.git .) |
		(cd "$src.new" && tar -xf -) || die "cannot copy $src_pristine"
	[ ! -e "$src.new/providers/snaa" ] ||
		die "$src_pristine already has providers/snaa"
	ln -s "$top/userspace/provider" "$src.new/providers/snaa"
	ln -sf "$top/include/uapi/rdma/snaa-abi.h" \
		"$src.new/kernel-headers/rdma/snaa-abi.h"
	add_after "$src.new/CMakeLists.txt" \
		'^add_subdirectory\\(providers/siw\\)' \
		'add_subdirectory(providers/snaa)' 1
	# the header list and the list rdma_kernel_provider_abi() turns
	# into kernel-abi/ headers for DECLARE_DRV_CMD
	add_after "$src.new/kernel-headers/CMakeLists.txt" \
		'^[ \t]*rdma/siw-abi\\.h$' 'rdma/snaa-abi.h' 2
	echo "$overlay" >"$src.new/.snaa-overlay"
	rm -rf "$src"
	mv "$src.new" "$src"
fi

# ---- 4. configure ------------------------------------------------------

# A build directory configured for another source path (the tree moved)
# is of no use: cmake refuses it.
if [ -f "$bld/CMakeCache.txt" ] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$bld/CMakeCache.txt"; then
	rm -rf "$bld"
fi
if [ ! -f "$bld/CMakeCache.txt" ]; then
	command -v cmake >/dev/null 2>&1 || die "no cmake (make deps)"
	gen=${CMAKE_GENERATOR:-}
	if [ -z "$gen" ]; then
		if command -v ninja >/dev/null 2>&1; then
			gen=Ninja
		else
			gen="Unix Makefiles"
		fi
	fi
	say "cmake ($gen): $bld"
	mkdir -p "$bld"
	(cd "$bld" && cmake -G "$gen" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_RESOLVE_NEIGH=0 \
		-DENABLE_STATIC=0 "$src" >cmake.log 2>&1) || {
		cat "$bld/cmake.log" >&2
		rm -f "$bld/CMakeCache.txt"
		die "cmake failed (log above, $bld/cmake.log)"
	}
fi

# ---- 5. build ----------------------------------------------------------

targets=snaa
[ -z "$tests" ] || targets="snaa snaa_test_verbs ibv_devices"
# shellcheck disable=SC2086 # the target list
cmake --build "$bld" --parallel "${SNAA_JOBS:-$(nproc)}" --target $targets ||
	die "build failed"

# ---- 6. the result -----------------------------------------------------

set -- "$bld"/lib/libsnaa-rdmav*.so
if [ $# != 1 ] || [ ! -L "$1" ]; then
	die "expected one link $bld/lib/libsnaa-rdmavNN.so, found: $*"
fi
link=${1##*/}
pabi=${link#libsnaa-rdmav}
pabi=${pabi%.so}
lib=$(readlink "$1")
lib=${lib##*/}
mkdir -p "$out"
# What another rdma-core left here goes.
clear_other "$lib" "$link"
put "$bld/lib/$lib" "$out/$lib"
ln -sfn "$lib" "$out/libsnaa.so.1"
ln -sfn libsnaa.so.1 "$out/libsnaa.so"
ln -sfn "$lib" "$out/$link"
put "$bld/providers/snaa/snaa.driver" "$out/snaa.driver"
if [ -n "$tests" ]; then
	put "$bld/bin/snaa_test_verbs" "$out/test_verbs"
	chmod +x "$out/test_verbs"
	put "$bld/bin/ibv_devices" "$out/ibv_devices"
	chmod +x "$out/ibv_devices"
fi
[ -z "$tests" ] || rm -f "$out/test_pabi"
provider_mk "$pabi" "$lib" "$link" "SNAA_RDMA_CORE_SRC=$src_pristine" \
	"SNAA_RDMA_CORE_BUILD=$bld"
say "$out/$link -> $lib (rdma-core $ver, private ABI $pabi)"
