#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UC data path between rdma_rxe and snaa, both directions.
#
# Features: uc, interop
exec sh "$(dirname "$0")/uc_test.sh" interop
