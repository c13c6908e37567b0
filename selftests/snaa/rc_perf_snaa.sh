#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest RC (write, read, send, atomics, latency), UD and rdma_cm, snaa <-> snaa.
#
# Features: perf, rc, ud, atomics, rdma_cm
exec sh "$(dirname "$0")/uc_perftest.sh" snaa rc
