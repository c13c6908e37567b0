#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Print the kernel the test VM boots by default (make's VM_KVER; plain
# "make" builds for the running kernel): the oldest installed Debian
# *-amd64 kernel that has both headers and an image (bookworm's 6.1; a
# 6.12 from backports is picked with VM_KVER= or SNAA_KVER=).
for d in /lib/modules/*-amd64; do
	v=${d##*/}
	[ -d "$d/build" ] && [ -e "/boot/vmlinuz-$v" ] && echo "$v"
done | sort -V | head -n 1
