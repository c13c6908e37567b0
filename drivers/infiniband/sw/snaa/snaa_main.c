// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa: module init/exit, the "snaa" rdma link type, the netdev
 * notifier and the ib_device_ops table.
 *
 * A device is created with "rdma link add NAME type snaa netdev DEV".
 * Each device has one RoCEv2 port bound to DEV; it goes away with
 * "rdma link delete NAME", when DEV is unregistered, or on rmmod.
 */

#include <linux/debugfs.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/snaa-abi.h>

#include "snaa.h"

/*
 * All snaa devices, for the netdev notifier, the duplicate check and
 * module unload.  A device is on the list from just before
 * ib_register_device() until its dealloc_driver callback.  The mutex is
 * never held across calls into the RDMA core, which takes RTNL.
 */
static LIST_HEAD(snaa_dev_list);
static DEFINE_MUTEX(snaa_dev_lock);

/*
 * Parent of every snaa ib_device.  Its modalias ("platform:snaa") is what
 * the rdma-core provider matches, so binding works whatever the RDMA
 * device is named and survives renames.
 */
static struct platform_device *snaa_parent;

/* Send queue processing for all devices. */
struct workqueue_struct *snaa_wq;
struct dentry *snaa_debugfs_root;	/* snaa/: one directory per device */

/**
 * snaa_port_state() - port state derived from the netdev
 * @sdev: the device
 *
 * Return: IB_PORT_ACTIVE if the netdev is up and has carrier,
 * IB_PORT_DOWN otherwise.
 */
enum ib_port_state snaa_port_state(struct snaa_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/*
 * The device leaves snaa_dev_list last: module exit
 * (snaa_unregister_all()) waits for the list to be empty, so nothing of
 * the device (its debugfs directory under snaa_debugfs_root, its
 * sockets) may outlive its entry.
 */
static void snaa_dealloc_driver(struct ib_device *ibdev)
{
	struct snaa_dev *sdev = to_snaa_dev(ibdev);

	snaa_net_dev_del(sdev);
	debugfs_remove_recursive(sdev->debugfs);
	snaa_table_destroy(&sdev->qp_table);
	snaa_table_destroy(&sdev->key_table);
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	free_percpu(sdev->stats);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);

	mutex_lock(&snaa_dev_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&snaa_dev_lock);
}

static void snaa_report_port_event(struct ib_device *ibdev,
				   struct net_device *ndev,
				   unsigned long event);

static const struct ib_device_ops snaa_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SNAA_ABI_VERSION,

	.alloc_hw_port_stats = snaa_alloc_hw_port_stats,
	.alloc_mr = snaa_alloc_mr,
	.alloc_mw = snaa_alloc_mw,
	.alloc_pd = snaa_alloc_pd,
	.alloc_ucontext = snaa_alloc_ucontext,
	.create_ah = snaa_create_ah,
	.create_cq = snaa_create_cq,
	SNAA_OP_CREATE_USER_CQ(snaa_create_user_cq)
	.create_qp = snaa_create_qp,
	.create_srq = snaa_create_srq,
	.create_user_ah = snaa_create_ah,
	.dealloc_driver = snaa_dealloc_driver,
	.dealloc_mw = snaa_dealloc_mw,
	.dealloc_pd = snaa_dealloc_pd,
	.dealloc_ucontext = snaa_dealloc_ucontext,
	.dereg_mr = snaa_dereg_mr,
	.destroy_srq = snaa_destroy_srq,
	.destroy_ah = snaa_destroy_ah,
	.destroy_cq = snaa_destroy_cq,
	.destroy_qp = snaa_destroy_qp,
	.disassociate_ucontext = snaa_disassociate_ucontext,
	.get_dev_fw_str = snaa_get_dev_fw_str,
	.get_dma_mr = snaa_get_dma_mr,
	.get_hw_stats = snaa_get_hw_stats,
	.get_link_layer = snaa_get_link_layer,
	.get_port_immutable = snaa_get_port_immutable,
	.map_mr_sg = snaa_map_mr_sg,
	.mmap = snaa_mmap,
	.mmap_free = snaa_mmap_free,
	.modify_device = snaa_modify_device,
	.modify_qp = snaa_modify_qp,
	.modify_srq = snaa_modify_srq,
	.poll_cq = snaa_poll_cq,
	.post_recv = snaa_post_recv,
	.post_srq_recv = snaa_post_srq_recv,
	.post_send = snaa_post_send,
	.query_ah = snaa_query_ah,
	.query_device = snaa_query_device,
	.query_pkey = snaa_query_pkey,
	.query_port = snaa_query_port,
	.query_qp = snaa_query_qp,
	.query_srq = snaa_query_srq,
	.reg_user_mr = snaa_reg_user_mr,
	.req_notify_cq = snaa_req_notify_cq,
	SNAA_OP_REPORT_PORT_EVENT(snaa_report_port_event)
	SNAA_OP_RESIZE_CQ(snaa_resize_cq)

	INIT_RDMA_OBJ_SIZE(ib_ah, snaa_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, snaa_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, snaa_ibmw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, snaa_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, snaa_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, snaa_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, snaa_ucontext, ibuc),
};

static struct snaa_dev *snaa_find_by_netdev(struct net_device *ndev)
{
	struct snaa_dev *sdev;

	lockdep_assert_held(&snaa_dev_lock);
	list_for_each_entry(sdev, &snaa_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/*
 * rdma_link_ops.newlink: "rdma link add NAME type snaa netdev DEV".
 * The core holds a reference on @ndev for the duration of the call.
 */
static int snaa_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct snaa_dev *sdev;
	struct ib_device *ibdev;
	int err;

	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		pr_err("snaa: %s is not an Ethernet device; RoCE needs one\n",
		       netdev_name(ndev));
		return -EINVAL;
	}

	sdev = ib_alloc_device(snaa_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;
	/* From here on ib_dealloc_device() calls snaa_dealloc_driver(). */
	ib_set_device_ops(ibdev, &snaa_dev_ops);

	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sdev->ndev = ndev;
	sdev->port_state = snaa_port_state(sdev);
	INIT_LIST_HEAD(&sdev->list);
	INIT_LIST_HEAD(&sdev->net_list);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1);
	sdev->stats = __alloc_percpu(sizeof(u64) * SNAA_CNT_NR,
				     __alignof__(u64));
	if (!sdev->stats ||
	    snaa_table_init(&sdev->qp_table, SNAA_QP_TABLE_ORDER) ||
	    snaa_table_init(&sdev->key_table, SNAA_KEY_TABLE_ORDER)) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	/* The check and the insertion are atomic: one device per netdev. */
	mutex_lock(&snaa_dev_lock);
	if (snaa_find_by_netdev(ndev)) {
		mutex_unlock(&snaa_dev_lock);
		pr_err("snaa: %s already has an snaa device; delete it first\n",
		       netdev_name(ndev));
		err = -EEXIST;
		goto err_dealloc;
	}
	list_add_tail(&sdev->list, &snaa_dev_list);
	mutex_unlock(&snaa_dev_lock);

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	/*
	 * CQ arming is the REQ_NOTIFY_CQ write command.  POST_SEND and
	 * POST_RECV stay off: user space posts into the mapped rings and
	 * rings SNAA_IB_METHOD_QP_DOORBELL (snaa_uapi.c).
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->dev.parent = &snaa_parent->dev;
	ibdev->driver_def = snaa_uapi_defs;
	strscpy(ibdev->node_desc, SNAA_NODE_DESC, sizeof(ibdev->node_desc));
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);

	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	err = snaa_net_dev_add(sdev);
	if (err)
		goto err_dealloc;

	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		pr_err("snaa: cannot register %s on %s: %d\n", ibdev_name,
		       netdev_name(ndev), err);
		goto err_dealloc;
	}

	sdev->debugfs = debugfs_create_dir(dev_name(&ibdev->dev),
					   snaa_debugfs_root);
	snaa_wcubuf_debugfs_init(sdev);
	snaa_net_debugfs_init(sdev);
	snaa_qp_debugfs_init(sdev);
	snaa_ah_debugfs_init(sdev);

	/*
	 * The netdev may have started unregistering while the device was
	 * being registered, before the notifier could see it; do what the
	 * notifier would have done.
	 */
	if (ndev->reg_state != NETREG_REGISTERED)
		ib_unregister_device_queued(ibdev);
	return 0;

err_dealloc:
	/* Calls snaa_dealloc_driver(), which undoes the list and the hold. */
	ib_dealloc_device(ibdev);
	return err;
}

static struct rdma_link_ops snaa_link_ops = {
	.type = SNAA_DRV_NAME,
	.newlink = snaa_newlink,
};

static void snaa_port_event(struct snaa_dev *sdev)
{
	enum ib_port_state state = snaa_port_state(sdev);
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};

	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
	snaa_dbg(sdev, "port 1 %s\n",
		 state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN");
}

/*
 * snaa_report_port_event() - the netdev's link may have changed state
 * @ibdev: the snaa device
 * @ndev: its netdev
 * @event: NETDEV_UP, NETDEV_DOWN or NETDEV_CHANGE
 *
 * Called under RTNL by ib_core's netdev notifier where the core follows
 * the link state (ib_device_ops.report_port_event), else by snaa's own:
 * either way one PORT_ACTIVE or PORT_ERR event per change of state.
 */
static void snaa_report_port_event(struct ib_device *ibdev,
				   struct net_device *ndev,
				   unsigned long event)
{
	snaa_port_event(container_of(ibdev, struct snaa_dev, ibdev));
}

static int snaa_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct snaa_dev *sdev;

	/* Runs under RTNL, which serialises the events of one netdev. */
	mutex_lock(&snaa_dev_lock);
	sdev = snaa_find_by_netdev(ndev);
	if (!sdev || !ib_device_try_get(&sdev->ibdev)) {
		mutex_unlock(&snaa_dev_lock);
		return NOTIFY_DONE;
	}
	mutex_unlock(&snaa_dev_lock);

	snaa_dbg(sdev, "%s: %s\n", netdev_name(ndev),
		 netdev_cmd_to_name(event));
	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (!SNAA_CORE_NETDEV_EVENTS)
			snaa_report_port_event(&sdev->ibdev, ndev, event);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block snaa_netdev_notifier = {
	.notifier_call = snaa_netdev_event,
};

/*
 * Unregister every device.  A device found on the list is pinned with
 * get_device() under the lock, so it stays valid even if a queued
 * unregistration (netdev removal) finishes concurrently.
 */
static void snaa_unregister_all(void)
{
	struct snaa_dev *sdev;

	for (;;) {
		mutex_lock(&snaa_dev_lock);
		sdev = list_first_entry_or_null(&snaa_dev_list,
						struct snaa_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&snaa_dev_lock);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static int __init snaa_init(void)
{
	int err;

	/* Bound: a QP's send work stays on its CPU (snaa_sq_schedule()). */
	snaa_wq = alloc_workqueue("snaa", WQ_MEM_RECLAIM | SNAA_WQ_PERCPU, 0);
	if (!snaa_wq)
		return -ENOMEM;

	snaa_parent = platform_device_register_simple(SNAA_DRV_NAME,
						      PLATFORM_DEVID_NONE,
						      NULL, 0);
	if (IS_ERR(snaa_parent)) {
		err = PTR_ERR(snaa_parent);
		goto err_wq;
	}

	err = snaa_net_init();
	if (err)
		goto err_parent;

	err = register_netdevice_notifier(&snaa_netdev_notifier);
	if (err)
		goto err_net;

	snaa_debugfs_root = debugfs_create_dir(SNAA_DRV_NAME, NULL);
	rdma_link_register(&snaa_link_ops);
	pr_info("snaa: loaded (ABI %d)\n", SNAA_ABI_VERSION);
	return 0;

err_net:
	snaa_net_exit();
err_parent:
	platform_device_unregister(snaa_parent);
err_wq:
	destroy_workqueue(snaa_wq);
	return err;
}

static void __exit snaa_exit(void)
{
	rdma_link_unregister(&snaa_link_ops);
	unregister_netdevice_notifier(&snaa_netdev_notifier);
	snaa_unregister_all();
	snaa_net_exit();
	debugfs_remove_recursive(snaa_debugfs_root);
	platform_device_unregister(snaa_parent);
	destroy_workqueue(snaa_wq);
	/* AH address vectors are freed by RCU callbacks of this module. */
	rcu_barrier();
	pr_info("snaa: unloaded\n");
}

module_init(snaa_init);
module_exit(snaa_exit);

MODULE_ALIAS_RDMA_LINK(SNAA_DRV_NAME);
MODULE_AUTHOR("The snaa authors");
MODULE_DESCRIPTION("snaa: soft RoCEv2 RDMA provider over Ethernet");
MODULE_LICENSE("Dual BSD/GPL");
