/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel API differences between the kernels snaa supports (Debian's
 * 6.1 and 6.12).  This is the only file that may depend on the kernel
 * version; the rest of the driver uses the names defined here.
 */
#ifndef _SNAA_COMPAT_H
#define _SNAA_COMPAT_H

#endif /* _SNAA_COMPAT_H */
