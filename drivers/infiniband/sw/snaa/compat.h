/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel API differences between the kernels snaa supports (Debian's
 * 6.1 and 6.12).  This is the only file that may depend on the kernel
 * version; the rest of the driver uses the names defined here.
 */
#ifndef _SNAA_COMPAT_H
#define _SNAA_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * ib_device_ops.create_cq: since 6.11 its last parameter is the uverbs
 * attribute bundle of the command (NULL for a kernel CQ) instead of the
 * driver udata.  snaa_create_cq() takes a "SNAA_CREATE_CQ_UARG *" and
 * gets its udata with snaa_create_cq_udata().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SNAA_CREATE_CQ_UARG struct uverbs_attr_bundle

static inline struct ib_udata *
snaa_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SNAA_CREATE_CQ_UARG struct ib_udata

static inline struct ib_udata *snaa_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

#endif /* _SNAA_COMPAT_H */
