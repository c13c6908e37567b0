// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa driver methods of the uverbs ioctl (snaa-abi.h).
 *
 * The SQ doorbell is rung for every batch a process posts.  The legacy
 * POST_SEND write command with an empty list does it too, but uverbs
 * allocates a buffer, looks up and locks the QP's uobject and writes a
 * response for it: under TCG that is more than half of what a doorbell
 * costs.  This method names the QP by its number and finds it in the
 * driver's own table.
 */

#define UVERBS_MODULE_NAME snaa_ib
#include <rdma/uverbs_named_ioctl.h>

#include "snaa.h"

/*
 * The QP @qpn of the process's context, referenced, or NULL.  Numbers
 * of other contexts' QPs and of kernel QPs are not found.
 */
static struct snaa_qp *snaa_uapi_qp(struct uverbs_attr_bundle *attrs,
				    u32 qpn)
{
	struct ib_ucontext *uctx = ib_uverbs_get_ucontext(attrs);
	struct snaa_qp *qp;

	if (IS_ERR(uctx))
		return NULL;
	qp = snaa_qp_get(to_snaa_dev(uctx->device), qpn);
	if (qp && qp->uctx != uctx) {
		snaa_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

static int
UVERBS_HANDLER(SNAA_IB_METHOD_SQ_DOORBELL)(struct uverbs_attr_bundle *attrs)
{
	struct snaa_qp *qp;
	u32 qpn;
	int err;

	err = uverbs_copy_from(&qpn, attrs, SNAA_IB_ATTR_SQ_DOORBELL_QPN);
	if (err)
		return err;
	qp = snaa_uapi_qp(attrs, qpn);
	if (!qp)
		return -EINVAL;
	err = snaa_sq_doorbell(qp);
	snaa_qp_put(qp);
	return err;
}

DECLARE_UVERBS_NAMED_METHOD(SNAA_IB_METHOD_SQ_DOORBELL,
			    UVERBS_ATTR_PTR_IN(SNAA_IB_ATTR_SQ_DOORBELL_QPN,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY));

ADD_UVERBS_METHODS(snaa_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(SNAA_IB_METHOD_SQ_DOORBELL));

const struct uapi_definition snaa_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &snaa_ib_device),
	{},
};
