#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC between two snaa devices: rc_test (IPv4, IPv6, loopback, MTU 1024),
# rping both ways, the peer's device deleted mid-stream.
#
# Features: rc, atomics, rdma_cm
exec sh "$(dirname "$0")/rc.sh" snaa
