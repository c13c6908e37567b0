/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The doorbell device's module (snaa_doorbell.c) as snaa sees it.
 */
#ifndef SNAA_DOORBELL_H
#define SNAA_DOORBELL_H

#include <linux/types.h>

struct snaa_db_file;
struct snaa_qp;
struct snaa_ucontext;

/**
 * struct snaa_db_ops - what a ring calls in snaa
 * @get_qp: the QP @qpn of @uctx, referenced, or NULL; called under a
 *	spinlock that keeps @uctx bound (and so alive): must not sleep
 * @ring: ring @qp's SQ doorbell and drop the reference @get_qp took;
 *	0 or a negative errno for the ioctl
 */
struct snaa_db_ops {
	struct snaa_qp *(*get_qp)(struct snaa_ucontext *uctx, u32 qpn);
	int (*ring)(struct snaa_qp *qp);
};

int snaa_db_register(const struct snaa_db_ops *ops);
void snaa_db_unregister(const struct snaa_db_ops *ops);
int snaa_db_bind(int fd, struct snaa_ucontext *uctx,
		 struct snaa_db_file **slot);
void snaa_db_unbind(struct snaa_db_file **slot);

#endif /* SNAA_DOORBELL_H */
