#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest UC write/send bandwidth and latency, rdma_rxe <-> snaa.
#
# Features: perf, uc, interop
exec sh "$(dirname "$0")/uc_perftest.sh" interop
