// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel feature probes; not part of snaa.ko.
 *
 * Kbuild compiles each "#ifdef SNAA_PROBE_<NAME>" block of this file on
 * its own, with -DSNAA_PROBE_<NAME> and the flags of the module's objects
 * (implicit declarations, incompatible pointer types and int conversions
 * being errors), and writes "#define SNAA_HAVE_<NAME> 1" into the
 * generated compat_probed.h for every block that compiles.  compat.h is
 * the only reader.  Distribution kernels backport API changes (Debian's
 * 6.1 has timer_delete(), trixie's 6.12 WQ_PERCPU), so what a kernel has
 * is tried, never inferred from its version.
 *
 * A block uses the API the way the driver does and nothing else.
 */
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* ib_device_ops.create_cq gets the uverbs attribute bundle, not udata. */
#ifdef SNAA_PROBE_CREATE_CQ_ATTRS
static int snaa_probe_create_cq(struct ib_cq *cq,
				const struct ib_cq_init_attr *attr,
				struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct ib_device_ops snaa_probe_ops __maybe_unused = {
	.create_cq = snaa_probe_create_cq,
};
#endif

/* ib_device_ops.create_user_cq: user CQs apart from kernel ones. */
#ifdef SNAA_PROBE_CREATE_USER_CQ
static int snaa_probe_create_user_cq(struct ib_cq *cq,
				     const struct ib_cq_init_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct ib_device_ops snaa_probe_ops __maybe_unused = {
	.create_user_cq = snaa_probe_create_user_cq,
};
#endif

/*
 * ib_core follows the link state of a device's netdev itself and reports
 * port events, unless the driver has ib_device_ops.report_port_event.
 */
#ifdef SNAA_PROBE_REPORT_PORT_EVENT
static void snaa_probe_report_port_event(struct ib_device *ibdev,
					 struct net_device *ndev,
					 unsigned long event)
{
}

static const struct ib_device_ops snaa_probe_ops __maybe_unused = {
	.report_port_event = snaa_probe_report_port_event,
};
#endif

/* Create-CQ attributes with which user space brings the CQ's memory. */
#ifdef SNAA_PROBE_CQ_BUFFER_ATTRS
static bool __maybe_unused
snaa_probe_cq_buffer(const struct uverbs_attr_bundle *attrs)
{
	return uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_VA) ||
	       uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_FD) ||
	       uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUF_UMEM);
}
#endif

/* ib_device_ops.resize_user_cq (unsigned CQE count) replaces resize_cq. */
#ifdef SNAA_PROBE_RESIZE_USER_CQ
static int snaa_probe_resize_user_cq(struct ib_cq *cq, unsigned int cqe,
				     struct ib_udata *udata)
{
	return 0;
}

static const struct ib_device_ops snaa_probe_ops __maybe_unused = {
	.resize_user_cq = snaa_probe_resize_user_cq,
};
#endif

/* ib_device_ops.reg_user_mr gets a DMA handle before the udata. */
#ifdef SNAA_PROBE_REG_USER_MR_DMAH
static struct ib_mr *snaa_probe_reg_user_mr(struct ib_pd *pd, u64 start,
					    u64 length, u64 virt_addr,
					    int access, struct ib_dmah *dmah,
					    struct ib_udata *udata)
{
	return NULL;
}

static const struct ib_device_ops snaa_probe_ops __maybe_unused = {
	.reg_user_mr = snaa_probe_reg_user_mr,
};
#endif

/* ib_umem_get_va() pins user memory (ib_umem_get() before). */
#ifdef SNAA_PROBE_IB_UMEM_GET_VA
static struct ib_umem * __maybe_unused
snaa_probe_umem(struct ib_device *dev, unsigned long addr, size_t size,
		int access)
{
	return ib_umem_get_va(dev, addr, size, access);
}
#endif

/* ipv6_stub: IPv6 routing without a link-time dependency on ipv6.ko. */
#ifdef SNAA_PROBE_IPV6_STUBS
#include <net/ipv6_stubs.h>

static struct dst_entry * __maybe_unused
snaa_probe_route6(struct net *net, struct flowi6 *fl6)
{
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
}
#endif

/* setup_udp_tunnel_sock() takes the struct sock, not the socket. */
#ifdef SNAA_PROBE_UDP_TUNNEL_SETUP_SK
static void __maybe_unused
snaa_probe_tunnel_setup(struct net *net, struct socket *sock,
			struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sock->sk, cfg);
}
#endif

/* udp_tunnel_sock_release() takes the struct sock, not the socket. */
#ifdef SNAA_PROBE_UDP_TUNNEL_RELEASE_SK
static void __maybe_unused snaa_probe_tunnel_release(struct socket *sock)
{
	udp_tunnel_sock_release(sock->sk);
}
#endif

/* timer_delete() (del_timer() before). */
#ifdef SNAA_PROBE_TIMER_DELETE
static int __maybe_unused snaa_probe_timer_delete(struct timer_list *t)
{
	return timer_delete(t);
}
#endif

/* timer_container_of() (from_timer() before). */
#ifdef SNAA_PROBE_TIMER_CONTAINER_OF
struct snaa_probe_timer {
	struct timer_list timer;
};

static struct snaa_probe_timer * __maybe_unused
snaa_probe_timer_fn(struct timer_list *t)
{
	struct snaa_probe_timer *p = timer_container_of(p, t, timer);

	return p;
}
#endif

/* WQ_PERCPU: a bound workqueue says so (unbound will be the default). */
#ifdef SNAA_PROBE_WQ_PERCPU
static struct workqueue_struct * __maybe_unused snaa_probe_wq(void)
{
	return alloc_workqueue("snaa_probe", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
}
#endif
