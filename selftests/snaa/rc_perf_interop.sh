#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest RC (write, read, send, atomics, latency), UD and rdma_cm,
# rdma_rxe <-> snaa, both directions.
#
# Features: perf, rc, ud, atomics, rdma_cm, interop
exec sh "$(dirname "$0")/uc_perftest.sh" interop rc
