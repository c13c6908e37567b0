#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Prepare module index files for the test VM: depmod run on the host over
# a staging tree that holds the build's snaa.ko in updates/ next to the
# distribution modules (symlinked).  Running depmod inside the VM takes
# about a minute under TCG; here it takes a second.  The VM copies
# build/modroot/KVER/{modules.*,updates/} over its /lib/modules/KVER.
#
#   scripts/modroot.sh [KVER [KO]]
#
# KVER defaults to $SNAA_KVER, else scripts/kver.sh; KO to the module
# built for KVER (scripts/modbuild.sh).  Each KVER has its own staging
# tree, so staging one kernel leaves the others alone.
set -eu
cd "$(dirname "$0")/.."
kver=${1:-${SNAA_KVER:-$(sh scripts/kver.sh)}}
ko=${2:-$(sh scripts/modbuild.sh "$kver")/snaa.ko}
root=build/modroot
dir=$root/lib/modules/$kver

rm -rf "$dir"
mkdir -p "$dir/updates"
ln -s "/lib/modules/$kver/kernel" "$dir/kernel"
cp "/lib/modules/$kver"/modules.order "/lib/modules/$kver"/modules.builtin* "$dir/"
cp "$ko" "$dir/updates/snaa.ko"
depmod -b "$root" "$kver"
grep -q '^updates/snaa.ko:' "$dir/modules.dep"
