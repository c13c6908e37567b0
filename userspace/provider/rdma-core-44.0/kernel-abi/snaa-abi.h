/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * In an rdma-core tree this is generated from rdma/snaa-abi.h (the
 * flattened _STRUCT_ forms of DECLARE_DRV_CMD).  The stand-in's
 * DECLARE_DRV_CMD (infiniband/kern-abi.h) needs only the tagged structs,
 * which the provider includes from <rdma/snaa-abi.h> itself.
 */
#include <rdma/snaa-abi.h>
