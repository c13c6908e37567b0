// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa driver methods of the uverbs ioctl (snaa-abi.h).
 *
 * The SQ doorbell is rung for every batch a process posts.  The legacy
 * POST_SEND write command with an empty list does it too, but uverbs
 * allocates a buffer, looks up and locks the QP's uobject and writes a
 * response for it: under TCG that is more than half of what a doorbell
 * costs.  This method names the QP by its number and finds it in the
 * driver's own table.  The doorbell device (the snaa_doorbell module),
 * bound to a context by the second method here, is cheaper still.
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

static struct snaa_qp *snaa_uapi_db_get_qp(struct snaa_ucontext *uctx,
					   u32 qpn)
{
	return snaa_uctx_qp(&uctx->ibuc, qpn);
}

static int snaa_uapi_db_ring(struct snaa_qp *qp)
{
	int err = snaa_sq_doorbell(qp);

	snaa_qp_put(qp);
	return err;
}

/* The rings behind /dev/snaa_doorbell (snaa_doorbell.c). */
const struct snaa_db_ops snaa_uapi_db_ops = {
	.get_qp = snaa_uapi_db_get_qp,
	.ring = snaa_uapi_db_ring,
};

static int
UVERBS_HANDLER(SNAA_IB_METHOD_SQ_DOORBELL)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *uctx;
	struct snaa_qp *qp;
	u32 qpn;
	int err;

	err = uverbs_copy_from(&qpn, attrs, SNAA_IB_ATTR_SQ_DOORBELL_QPN);
	if (err)
		return err;
	uctx = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	qp = snaa_uctx_qp(uctx, qpn);
	return qp ? snaa_uapi_db_ring(qp) : -EINVAL;
}

DECLARE_UVERBS_NAMED_METHOD(SNAA_IB_METHOD_SQ_DOORBELL,
			    UVERBS_ATTR_PTR_IN(SNAA_IB_ATTR_SQ_DOORBELL_QPN,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY));

static int
UVERBS_HANDLER(SNAA_IB_METHOD_DOORBELL_BIND)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *uctx;
	s32 fd;
	int err;

	err = uverbs_copy_from(&fd, attrs, SNAA_IB_ATTR_DOORBELL_BIND_FD);
	if (err)
		return err;
	uctx = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	return snaa_db_bind(fd, to_snaa_uctx(uctx),
			    &to_snaa_uctx(uctx)->doorbell);
}

DECLARE_UVERBS_NAMED_METHOD(SNAA_IB_METHOD_DOORBELL_BIND,
			    UVERBS_ATTR_PTR_IN(SNAA_IB_ATTR_DOORBELL_BIND_FD,
					       UVERBS_ATTR_TYPE(s32),
					       UA_MANDATORY));

ADD_UVERBS_METHODS(snaa_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(SNAA_IB_METHOD_SQ_DOORBELL),
		   &UVERBS_METHOD(SNAA_IB_METHOD_DOORBELL_BIND));

const struct uapi_definition snaa_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &snaa_ib_device),
	{},
};
