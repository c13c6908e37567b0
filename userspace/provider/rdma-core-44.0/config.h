/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The two values of rdma-core 44's generated config.h that the provider
 * reads: which release it is built for (snaa_check_libibverbs) and that
 * release's private provider ABI (libsnaa-rdmav34.so,
 * verbs_register_driver_34).  See infiniband/driver.h.
 */
#ifndef SNAA_RDMA_CORE_44_CONFIG_H
#define SNAA_RDMA_CORE_44_CONFIG_H

#define PACKAGE_VERSION		"44.0"
#define IBVERBS_PABI_VERSION	34

#endif
