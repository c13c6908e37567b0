#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Register the module source with DKMS so it is rebuilt for new kernels.
set -eu
cd "$(dirname "$0")/.."
command -v dkms >/dev/null || { echo "dkms-install: install dkms first (apt-get install dkms)" >&2; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dst=/usr/src/snaa-$ver
rm -rf "$dst"
mkdir -p "$dst"
cp -r dkms.conf Kbuild drivers include "$dst/"
dkms add -m snaa -v "$ver" || true
dkms build -m snaa -v "$ver"
dkms install -m snaa -v "$ver"
