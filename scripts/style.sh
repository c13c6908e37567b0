#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Run the kernel's checkpatch.pl over the driver and the uapi header.
# checkpatch comes from Debian's linux-source-6.1 tarball (make deps
# installs it; make style runs make deps first); it is extracted to
# build/, never committed.
set -eu
cd "$(dirname "$0")/.."
cp=build/checkpatch/scripts/checkpatch.pl
if [ ! -x "$cp" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
	if [ -z "$tarball" ]; then
		echo "style.sh: checkpatch.pl comes from linux-source-6.1:" \
			"install it with 'make deps'" >&2
		exit 2
	fi
	mkdir -p build/checkpatch
	tar -xf "$tarball" -C build/checkpatch --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
opts="--no-tree --strict --max-line-length=100 --ignore FILE_PATH_CHANGES"
rc=0
# compat.h too: it tests kernel features (compat_probes.c), not versions.
# shellcheck disable=SC2046,SC2086
"$cp" $opts -f $(git ls-files "drivers/infiniband/sw/snaa/*.[ch]") \
	include/uapi/rdma/snaa-abi.h || rc=1
exit $rc
