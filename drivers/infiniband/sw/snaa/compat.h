/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel API differences between the kernels snaa supports (Debian's 6.1
 * to sid's 7.2).  This is the only file that knows about them; the rest
 * of the driver uses the snaa_ names defined here.
 *
 * Which side of each difference a kernel is on is decided by the feature
 * probes of compat_probes.c, compiled by Kbuild against that kernel's
 * headers: compat_probed.h (generated in the build directory) defines
 * SNAA_HAVE_<NAME> for each probe that compiled.  No kernel version
 * numbers: distributions backport.
 */
#ifndef _SNAA_COMPAT_H
#define _SNAA_COMPAT_H

#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "compat_probed.h"

#ifdef SNAA_HAVE_IPV6_STUBS
#include <net/ipv6_stubs.h>
#endif

/*
 * ib_device_ops.create_cq: its last parameter is the uverbs attribute
 * bundle of the command (NULL for a kernel CQ), or on older kernels the
 * driver udata.  snaa_create_cq() takes a "SNAA_CREATE_CQ_UARG *" and
 * gets its udata with snaa_create_cq_udata().
 */
#ifdef SNAA_HAVE_CREATE_CQ_ATTRS
#define SNAA_CREATE_CQ_UARG struct uverbs_attr_bundle

static inline struct ib_udata *
snaa_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SNAA_CREATE_CQ_UARG struct ib_udata

static inline struct ib_udata *snaa_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * ib_device_ops entries that only some kernels have, or have under
 * another name.  Each macro expands to a designated initialiser (comma
 * included) or to nothing:
 *
 * SNAA_OP_CREATE_USER_CQ(fn): user CQs have an op of their own
 * (create_cq is then for kernel CQs only).  fn gets the attribute bundle.
 *
 * SNAA_OP_RESIZE_CQ(fn): resize_user_cq, or resize_cq before it; fn's
 * CQE count is a SNAA_RESIZE_CQE (unsigned int, or int before).
 */
#ifdef SNAA_HAVE_CREATE_USER_CQ
#define SNAA_OP_CREATE_USER_CQ(fn) .create_user_cq = (fn),
#else
#define SNAA_OP_CREATE_USER_CQ(fn)
#endif

/*
 * SNAA_OP_REPORT_PORT_EVENT(fn): where ib_core follows the netdev's link
 * state itself (NETDEV_UP, _DOWN, _CHANGE), it reports the port events
 * unless the driver takes them with this op; snaa does, so that they are
 * reported once, by the same code on every kernel.  SNAA_CORE_NETDEV_EVENTS
 * says whether the core calls it (else snaa's own netdev notifier does).
 */
#ifdef SNAA_HAVE_REPORT_PORT_EVENT
#define SNAA_OP_REPORT_PORT_EVENT(fn) .report_port_event = (fn),
#define SNAA_CORE_NETDEV_EVENTS true
#else
#define SNAA_OP_REPORT_PORT_EVENT(fn)
#define SNAA_CORE_NETDEV_EVENTS false
#endif

#ifdef SNAA_HAVE_RESIZE_USER_CQ
#define SNAA_OP_RESIZE_CQ(fn) .resize_user_cq = (fn),
#define SNAA_RESIZE_CQE unsigned int
#else
#define SNAA_OP_RESIZE_CQ(fn) .resize_cq = (fn),
#define SNAA_RESIZE_CQE int
#endif

/*
 * snaa_cq_user_buffer() - user space offers the CQ's memory
 * @attrs: the create-CQ command's attributes
 *
 * Kernels that have create_user_cq let user space pass a buffer (VA or
 * dma-buf) for the CQ ring; snaa's rings are the kernel's and mapped
 * into the process, so such a CQ is refused.
 */
static inline bool
snaa_cq_user_buffer(const struct uverbs_attr_bundle *attrs)
{
#ifdef SNAA_HAVE_CQ_BUFFER_ATTRS
	return uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_VA) ||
	       uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_FD) ||
	       uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUF_UMEM);
#else
	return false;
#endif
}

/*
 * ib_device_ops.reg_user_mr: newer kernels pass a DMA handle (PCIe TPH
 * steering hints) before the udata.  snaa_reg_user_mr() declares the
 * parameter with SNAA_REG_MR_DMAH_ARG(dmah) and refuses a handle when
 * snaa_dmah_given(dmah): it has no PCIe function to steer.
 */
#ifdef SNAA_HAVE_REG_USER_MR_DMAH
#define SNAA_REG_MR_DMAH_ARG(name) struct ib_dmah *(name),
#define snaa_dmah_given(name) ((name) != NULL)
#else
#define SNAA_REG_MR_DMAH_ARG(name)
#define snaa_dmah_given(name) false
#endif

/* Pin a user memory range (ib_umem_get_va(), once ib_umem_get()). */
static inline struct ib_umem *snaa_umem_get(struct ib_device *dev,
					    unsigned long addr, size_t size,
					    int access)
{
#ifdef SNAA_HAVE_IB_UMEM_GET_VA
	return ib_umem_get_va(dev, addr, size, access);
#else
	return ib_umem_get(dev, addr, size, access);
#endif
}

/*
 * snaa_ip6_dst_lookup() - an IPv6 route for @fl6 in @net
 *
 * Through ipv6_stub where the kernel has it (no link-time dependency on
 * ipv6.ko when IPv6 is a module); kernels without it call IPv6 directly.
 * Return: the route, or an ERR_PTR().
 */
static inline struct dst_entry *snaa_ip6_dst_lookup(struct net *net,
						    struct flowi6 *fl6)
{
#ifdef SNAA_HAVE_IPV6_STUBS
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
#else
	return ip6_dst_lookup_flow(net, NULL, fl6, NULL);
#endif
}

/* UDP tunnel sockets: newer kernels take the struct sock, not the socket. */
static inline void snaa_udp_tunnel_setup(struct net *net,
					 struct socket *sock,
					 struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SNAA_HAVE_UDP_TUNNEL_SETUP_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void snaa_udp_tunnel_release(struct socket *sock)
{
#ifdef SNAA_HAVE_UDP_TUNNEL_RELEASE_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/* Timers: timer_delete() and timer_container_of(), once del_timer() etc. */
static inline int snaa_timer_delete(struct timer_list *timer)
{
#ifdef SNAA_HAVE_TIMER_DELETE
	return timer_delete(timer);
#else
	return del_timer(timer);
#endif
}

#ifdef SNAA_HAVE_TIMER_CONTAINER_OF
#define snaa_timer_container_of(var, timer, field) \
	timer_container_of(var, timer, field)
#else
#define snaa_timer_container_of(var, timer, field) \
	from_timer(var, timer, field)
#endif

/*
 * Workqueues: per-CPU (bound) ones say so with WQ_PERCPU where the
 * kernel has it, as unbound is to become the default; bound is the
 * default before.
 */
#ifdef SNAA_HAVE_WQ_PERCPU
#define SNAA_WQ_PERCPU WQ_PERCPU
#else
#define SNAA_WQ_PERCPU 0
#endif

#endif /* _SNAA_COMPAT_H */
