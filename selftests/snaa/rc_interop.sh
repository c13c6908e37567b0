#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC between rdma_rxe and snaa, both directions: rc_test and rping.
#
# Features: rc, atomics, rdma_cm, interop
exec sh "$(dirname "$0")/rc.sh" interop
