// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa driver methods of the uverbs ioctl (snaa-abi.h).
 *
 * The one doorbell of user QPs, SQ and RQ alike.  User space posts into
 * the mapped rings and calls here only when the kernel has marked a ring
 * idle, so a doorbell is rung once per batch, and not at all while the
 * kernel is still working on the queue.  The QP is named by its number
 * in the doorbell word and found in the driver's own table: the uverbs
 * core does not look up or lock a uobject for it.
 */

#define UVERBS_MODULE_NAME snaa_ib
#include <rdma/uverbs_named_ioctl.h>

#include "snaa.h"

/**
 * snaa_uctx_qp() - find a QP of a user context
 * @uctx: the context
 * @qpn: the QP number
 *
 * Numbers of other contexts' QPs and of kernel QPs are not found.
 *
 * Context: any.
 * Return: the QP, referenced, or NULL.
 */
struct snaa_qp *snaa_uctx_qp(struct ib_ucontext *uctx, u32 qpn)
{
	struct snaa_qp *qp;

	qp = snaa_qp_get(to_snaa_dev(uctx->device), qpn);
	if (qp && qp->uctx != uctx) {
		snaa_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

static int
UVERBS_HANDLER(SNAA_IB_METHOD_QP_DOORBELL)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *uctx;
	struct snaa_qp *qp;
	u32 word;
	int err;

	err = uverbs_copy_from(&word, attrs, SNAA_IB_ATTR_DOORBELL);
	if (err)
		return err;
	if (word & ~(SNAA_DOORBELL_QPN_MASK | SNAA_DOORBELL_RQ))
		return -EINVAL;
	uctx = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	qp = snaa_uctx_qp(uctx, word & SNAA_DOORBELL_QPN_MASK);
	if (!qp)
		return -EINVAL;
	err = word & SNAA_DOORBELL_RQ ? snaa_rq_doorbell(qp) :
					snaa_sq_doorbell(qp);
	snaa_qp_put(qp);
	return err;
}

DECLARE_UVERBS_NAMED_METHOD(SNAA_IB_METHOD_QP_DOORBELL,
			    UVERBS_ATTR_PTR_IN(SNAA_IB_ATTR_DOORBELL,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY));

ADD_UVERBS_METHODS(snaa_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(SNAA_IB_METHOD_QP_DOORBELL));

const struct uapi_definition snaa_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &snaa_ib_device),
	{},
};
