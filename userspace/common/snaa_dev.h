/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_dev - open an RDMA device by name, the one way every snaa tool and
 * test program does it, with messages that say what to do when it fails.
 */
#ifndef SNAA_DEV_H
#define SNAA_DEV_H

#include <infiniband/verbs.h>

/*
 * Open the RDMA device @name (as ibv_devices lists it), or the only one
 * there is if @name is NULL.  On failure, print a message that starts
 * with "@prog: " and says what to do on stderr, and return NULL with
 * errno ENODEV if there is no such device (no RDMA device at all, or,
 * for a NULL @name, several: the message lists them), else errno as
 * ibv_open_device() left it (no user-space provider for the device).
 */
struct ibv_context *snaa_dev_open(const char *prog, const char *name);

#endif /* SNAA_DEV_H */
