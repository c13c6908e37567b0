// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa verbs entry points: thin wrappers that validate their arguments
 * and call into the object files.
 */

#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/snaa-abi.h>

#include "snaa.h"

int snaa_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = SNAA_VENDOR_ID;
	attr->sys_image_guid = ibdev->node_guid;
	attr->page_size_cap = PAGE_SIZE;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	/*
	 * Atomics are atomic instructions on the target memory: atomic
	 * with respect to this device and to CPUs (snaa_mr_atomic()).
	 */
	attr->atomic_cap = IB_ATOMIC_HCA;
	/* "rdma link delete" may remove the device. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_pkeys = SNAA_PKEY_TBL_LEN;
	attr->max_mr_size = SNAA_MAX_MR_SIZE;
	attr->max_qp = SNAA_MAX_QP;
	attr->max_qp_wr = SNAA_MAX_QP_WR;
	attr->max_send_sge = SNAA_MAX_SGE;
	attr->max_recv_sge = SNAA_MAX_SGE;
	attr->max_sge_rd = SNAA_MAX_SGE;
	attr->max_qp_rd_atom = SNAA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SNAA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SNAA_MAX_QP * SNAA_MAX_RD_ATOMIC;
	attr->max_cq = SNAA_MAX_CQ;
	attr->max_cqe = SNAA_MAX_CQE;
	attr->max_mr = SNAA_MAX_MR;
	attr->max_pd = SNAA_MAX_PD;
	attr->max_ah = SNAA_MAX_AH;
	attr->max_srq = SNAA_MAX_SRQ;
	attr->max_srq_wr = SNAA_MAX_SRQ_WR;
	attr->max_srq_sge = SNAA_MAX_SGE;
	attr->max_mw = SNAA_MAX_MW;
	attr->max_fast_reg_page_list_len = SNAA_MAX_FR_PAGES;
	return 0;
}

int snaa_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct snaa_dev *sdev = to_snaa_dev(ibdev);
	u32 mtu;
	int err;

	/* The core zeroes @attr and checks @port. */
	mtu = snaa_mtu_from_netdev(READ_ONCE(sdev->ndev->mtu));
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = mtu ? ib_mtu_int_to_enum(mtu) : IB_MTU_256;
	attr->gid_tbl_len = SNAA_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SNAA_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SNAA_PKEY_TBL_LEN;
	attr->state = snaa_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err)
		snaa_dbg(sdev, "no link speed: %d\n", err);
	return 0;
}

int snaa_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer snaa_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

int snaa_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SNAA_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int snaa_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr)
{
	/* The system image GUID is fixed: it derives from the MAC. */
	if (mask & ~IB_DEVICE_MODIFY_NODE_DESC)
		return -EOPNOTSUPP;

	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

void snaa_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d", SNAA_ABI_VERSION);
}

int snaa_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct snaa_uresp_alloc_ctx uresp = {
		.abi_version = SNAA_ABI_VERSION,
		.dev_id = ibuc->device->index,
	};

	if (udata->outlen < sizeof(uresp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &uresp, sizeof(uresp));
}

/* Nothing of the driver's hangs off a context (the core insists). */
void snaa_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The device is going away while a process still has it open.  The core
 * has already destroyed the context's objects and zapped its mappings;
 * there is no hardware state left to detach.  Implementing this lets the
 * device (and its netdev) go away without waiting for the process.
 */
void snaa_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
