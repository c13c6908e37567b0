// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa address handles: the destination of UD work requests.
 *
 * The resolved address vector lives in its own reference-counted object
 * (struct snaa_ah_av), freed after an RCU grace period, so that a sender
 * can keep using it while the AH is being destroyed and the core frees
 * the ib_ah.  Kernel consumers pass the ib_ah in the work request; user
 * space names the AH by the number (ahn) create_ah returned, which the
 * kernel looks up in the device's AH table.
 */

#include <linux/debugfs.h>

#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/snaa-abi.h>

#include "snaa.h"

static void snaa_ah_av_free_rcu(struct rcu_head *rcu)
{
	struct snaa_ah_av *aav = container_of(rcu, struct snaa_ah_av, rcu);

	snaa_av_release(&aav->av);
	kfree(aav);
}

/**
 * snaa_ah_av_put() - drop a reference to an AH's address vector
 * @aav: from snaa_ah_get() or the AH itself
 *
 * Context: any.
 */
void snaa_ah_av_put(struct snaa_ah_av *aav)
{
	if (refcount_dec_and_test(&aav->ref))
		call_rcu(&aav->rcu, snaa_ah_av_free_rcu);
}

/**
 * snaa_ah_get() - look up a user AH's address vector by number
 * @sdev: the device
 * @ahn: the number create_ah returned to user space
 * @pd: the PD of the QP that uses it; the AH must belong to it
 *
 * Context: any; takes no lock other than RCU.
 * Return: a referenced address vector (snaa_ah_av_put() it), or NULL when
 * @ahn names no AH of @pd.
 */
struct snaa_ah_av *snaa_ah_get(struct snaa_dev *sdev, u32 ahn,
			       struct ib_pd *pd)
{
	struct snaa_ah_av *aav;

	rcu_read_lock();
	aav = xa_load(&sdev->ah_xa, ahn);
	if (aav && (aav->pd != pd || !refcount_inc_not_zero(&aav->ref)))
		aav = NULL;
	rcu_read_unlock();
	return aav;
}

/*
 * For tests that exhaust the AHs on a slow (debug) kernel:
 * snaa/<device>/ah_limit in debugfs lowers the number of AHs the device
 * lets exist, the kernel's reserve scaled with it (snaa_obj_take()).
 * Values outside [16, SNAA_MAX_AH], 0 (the default) among them, mean
 * SNAA_MAX_AH; ibv_query_device keeps reporting SNAA_MAX_AH.
 */
void snaa_ah_debugfs_init(struct snaa_dev *sdev)
{
	debugfs_create_u32("ah_limit", 0600, sdev->debugfs, &sdev->ah_limit);
}

static int snaa_ah_limit(struct snaa_dev *sdev)
{
	u32 limit = READ_ONCE(sdev->ah_limit);

	return limit >= 16 && limit <= SNAA_MAX_AH ? limit : SNAA_MAX_AH;
}

/**
 * snaa_create_ah() - create an address handle
 * @ibah: the core's object, to fill
 * @init: the path (validated by the core: a RoCE AH with a GRH and a
 *	source GID of this device) and RDMA_CREATE_AH_SLEEPABLE
 * @udata: user space's response buffer, or NULL for a kernel AH
 *
 * A user AH is entered into the device's AH table and its number is
 * returned in struct snaa_uresp_create_ah.
 *
 * Context: process context; atomic context for a kernel AH created
 * without RDMA_CREATE_AH_SLEEPABLE.
 * Return: 0; -EINVAL for a path snaa cannot use or a short response
 * buffer; -ENOMEM when out of memory or SNAA_MAX_AH AHs exist (for user
 * space: all but the kernel's reserve, snaa_obj_take()).
 */
int snaa_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct snaa_dev *sdev = to_snaa_dev(ibah->device);
	struct snaa_ah *ah = to_snaa_ah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							    GFP_ATOMIC;
	struct snaa_uresp_create_ah uresp = { };
	struct snaa_ah_av *aav;
	int err;

	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	/* a user's AH, its route cache (per CPU) included, is its memory */
	if (udata)
		gfp |= __GFP_ACCOUNT;
	if (!snaa_obj_take(&sdev->num_ah, snaa_ah_limit(sdev), !!udata))
		return -ENOMEM;

	aav = kzalloc(sizeof(*aav), gfp);
	if (!aav) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&aav->ref, 1);
	aav->pd = ibah->pd;
	/* UD: the flow label and source port do not depend on the QPs. */
	err = snaa_av_init(sdev, &aav->av, init->ah_attr, 0, 0, gfp);
	if (err)
		goto err_free;

	ah->aav = aav;
	ah->attr = *init->ah_attr;
	ah->attr.grh.sgid_attr = NULL;		/* the core holds that */
	if (udata) {
		err = xa_alloc_cyclic(&sdev->ah_xa, &ah->ahn, aav,
				      XA_LIMIT(1, SNAA_MAX_AH), &sdev->ah_next,
				      gfp);
		if (err < 0) {
			err = err == -EBUSY ? -ENOMEM : err;
			goto err_av;
		}
		uresp.ahn = ah->ahn;
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (err)
			goto err_xa;
	}
	snaa_dbg(sdev, "AH %u created\n", ah->ahn);
	return 0;

err_xa:
	xa_erase(&sdev->ah_xa, ah->ahn);
err_av:
	snaa_av_release(&aav->av);
err_free:
	kfree(aav);
err_count:
	atomic_dec(&sdev->num_ah);
	return err;
}

/**
 * snaa_query_ah() - the path an AH was created with
 * @ibah: the AH
 * @attr: filled; no source GID reference is taken
 *
 * Return: 0.
 */
int snaa_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_snaa_ah(ibah)->attr;
	return 0;
}

/**
 * snaa_destroy_ah() - destroy an address handle
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0
 *
 * A send still holding the address vector keeps it until it is done.
 *
 * Context: any.
 * Return: 0.
 */
int snaa_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct snaa_dev *sdev = to_snaa_dev(ibah->device);
	struct snaa_ah *ah = to_snaa_ah(ibah);

	if (ah->ahn)
		xa_erase(&sdev->ah_xa, ah->ahn);
	snaa_ah_av_put(ah->aav);
	atomic_dec(&sdev->num_ah);
	snaa_dbg(sdev, "AH %u destroyed\n", ah->ahn);
	return 0;
}
