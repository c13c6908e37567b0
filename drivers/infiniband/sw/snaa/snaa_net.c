// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa: the network side of the driver.
 *
 * - One pair of UDP tunnel sockets (IPv4 and IPv6, port 4791) per network
 *   namespace that has at least one snaa device; their encap_rcv hook is
 *   where RoCEv2 packets enter the driver.
 * - Address vectors: the IP addresses, traffic class, hop limit and UDP
 *   source port of a connected QP, resolved once at INIT->RTR, plus a
 *   per-QP route cache.
 * - Building and sending packets: IP and UDP headers, ICRC, local output;
 *   or, when both ends are on the same snaa device, direct delivery.
 */

#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>

#include "snaa.h"

/* Hop limit used when the address vector leaves it 0. */
#define SNAA_DEFAULT_HOP_LIMIT	64

/**
 * struct snaa_net - per network namespace state
 * @dev_list: snaa devices whose netdev was in this namespace when they
 *	were added (snaa_dev.net_list); RCU readers (the receive hook)
 * @node: entry in snaa_net_active while @ndevs is not zero
 * @sock4: the IPv4 tunnel socket, NULL while @ndevs is zero
 * @sock6: the IPv6 tunnel socket, NULL while @ndevs is zero or if IPv6
 *	is unavailable
 * @ndevs: number of devices on @dev_list
 *
 * Everything but the RCU traversal of @dev_list is under snaa_net_lock.
 */
struct snaa_net {
	struct list_head dev_list;
	struct list_head node;
	struct socket *sock4;
	struct socket *sock6;
	unsigned int ndevs;
};

static unsigned int snaa_net_id __read_mostly;

/*
 * One lock for the state of all namespaces, not one per namespace: a
 * device can outlive its namespace's snaa_net (a physical netdev goes
 * back to init_net when its namespace is dismantled, and the device is
 * then removed asynchronously), and dev_net() of the netdev no longer
 * names the namespace the device was added to.  snaa_net_dev_del() finds
 * the owner through snaa_net_active instead, under this lock, and the
 * namespace exit detaches whatever devices are left.  Device addition
 * and removal are rare; the data path takes no lock.
 */
static DEFINE_MUTEX(snaa_net_lock);
static LIST_HEAD(snaa_net_active);

/* The CRC routine snaa_wire.c wants: reflected CRC-32, no inversions. */
static u32 snaa_crc32(u32 seed, const void *p, size_t len)
{
	return crc32_le(seed, p, len);
}

/**
 * snaa_skb_crc32() - continue a CRC over bytes of an skb
 * @skb: the buffer, linear or not
 * @off: offset from skb->data of the first byte
 * @len: number of bytes, all within the skb
 * @reg: the CRC register so far
 *
 * Context: any; does not sleep.
 * Return: the CRC register after the @len bytes.
 */
static u32 snaa_skb_crc32(struct sk_buff *skb, unsigned int off,
			  unsigned int len, u32 reg)
{
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *p;

	if (off + len <= skb_headlen(skb))
		return crc32_le(reg, skb->data + off, len);

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		n = skb_seq_read(done, &p, &st);
		if (WARN_ON_ONCE(!n))	/* the caller checked the length */
			break;
		n = min(n, len - done);
		reg = crc32_le(reg, p, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return reg;
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */
/* ------------------------------------------------------------------ */

static struct snaa_dev *snaa_net_find_rcu(struct snaa_net *sn,
					  const struct net_device *ndev)
{
	struct snaa_dev *sdev;

	list_for_each_entry_rcu(sdev, &sn->dev_list, net_list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * snaa_net_rx_check() - validate the encapsulation of a received packet
 * @sk: the tunnel socket the packet arrived on
 * @skb: the packet, skb->data at the UDP header
 * @drop: set to the counter to bump when the packet is rejected
 *
 * Checks what the ICRC helpers rely on: an IP header of the socket's
 * family with no IPv4 options or IPv6 extension headers directly
 * followed by the UDP header, a UDP length that fits the buffer (the
 * buffer is trimmed to it), room for a BTH and an ICRC; then the ICRC
 * itself, without linearizing the buffer.
 *
 * Context: softirq.
 * Return: true if the packet is acceptable.
 */
static bool snaa_net_rx_check(struct sock *sk, struct sk_buff *skb,
			      enum snaa_counter *drop)
{
	u8 bth_buf[SNAA_BTH_BYTES], icrc_buf[SNAA_ICRC_BYTES];
	const u8 *bth, *icrc;
	unsigned int ulen, len;
	bool is_v6 = sk->sk_family == AF_INET6;
	u32 reg;

	*drop = SNAA_CNT_DROP_MALFORMED;
	if (skb_transport_offset(skb) != 0)
		return false;
	if (is_v6) {
		if (skb->protocol != htons(ETH_P_IPV6) ||
		    ipv6_hdr(skb)->version != 6 ||
		    ipv6_hdr(skb)->nexthdr != IPPROTO_UDP ||
		    skb_network_header_len(skb) != SNAA_IPV6_HDR_BYTES)
			return false;
	} else {
		if (skb->protocol != htons(ETH_P_IP) ||
		    ip_hdr(skb)->version != 4 || ip_hdr(skb)->ihl != 5 ||
		    skb_network_header_len(skb) != SNAA_IPV4_HDR_BYTES)
			return false;
	}

	ulen = ntohs(udp_hdr(skb)->len);
	if (ulen < SNAA_UDP_HDR_BYTES || ulen > skb->len)
		return false;
	if (ulen < skb->len && pskb_trim_rcsum(skb, ulen))
		return false;
	len = ulen - SNAA_UDP_HDR_BYTES;	/* BTH .. ICRC */
	if (len < SNAA_BTH_BYTES + SNAA_ICRC_BYTES) {
		*drop = SNAA_CNT_DROP_TRUNCATED;
		return false;
	}

	bth = skb_header_pointer(skb, SNAA_UDP_HDR_BYTES, SNAA_BTH_BYTES,
				 bth_buf);
	icrc = skb_header_pointer(skb, ulen - SNAA_ICRC_BYTES,
				  SNAA_ICRC_BYTES, icrc_buf);
	if (!bth || !icrc)
		return false;

	/* The IP and UDP headers are in the linear part: IP pulled them. */
	reg = snaa_icrc_begin(snaa_crc32, skb_network_header(skb), is_v6, bth);
	reg = snaa_skb_crc32(skb, SNAA_UDP_HDR_BYTES + SNAA_BTH_BYTES,
			     len - SNAA_BTH_BYTES - SNAA_ICRC_BYTES, reg);
	if (snaa_icrc_finish(reg) != snaa_icrc_get(icrc)) {
		*drop = SNAA_CNT_DROP_BAD_ICRC;
		return false;
	}
	return true;
}

/* Record the IP addresses of a checked packet for snaa_rcv(). */
static void snaa_net_rx_addrs(struct sock *sk, struct sk_buff *skb)
{
	struct snaa_skb_cb *cb = snaa_skb_cb(skb);

	memset(cb, 0, sizeof(*cb));
	cb->ipv6 = sk->sk_family == AF_INET6;
	if (cb->ipv6) {
		cb->saddr.v6 = ipv6_hdr(skb)->saddr;
		cb->daddr.v6 = ipv6_hdr(skb)->daddr;
	} else {
		cb->saddr.v4.s_addr = ip_hdr(skb)->saddr;
		cb->daddr.v4.s_addr = ip_hdr(skb)->daddr;
	}
}

/*
 * A packet with a bad ICRC, otherwise well encapsulated: let a WCU.BUF
 * receiver see its headers (snaa_rcv_bad_icrc()); the caller drops it.
 */
static void snaa_net_rx_bad_icrc(struct snaa_dev *sdev, struct sock *sk,
				 struct sk_buff *skb)
{
	unsigned int hdr = SNAA_UDP_HDR_BYTES +
			   min_t(unsigned int, skb->len - SNAA_UDP_HDR_BYTES,
				 SNAA_MAX_BTH_EXT_BYTES);

	if (!pskb_may_pull(skb, hdr))
		return;
	snaa_net_rx_addrs(sk, skb);
	__skb_pull(skb, SNAA_UDP_HDR_BYTES);
	snaa_rcv_bad_icrc(sdev, skb);
}

/**
 * snaa_net_encap_rcv() - encap_rcv hook of the tunnel sockets
 * @sk: the IPv4 or IPv6 tunnel socket
 * @skb: a UDP datagram to port 4791, skb->data at the UDP header
 *
 * Finds the snaa device of the receiving netdev, validates the
 * encapsulation and the ICRC, and hands the packet to snaa_rcv() with
 * skb->data at the BTH and skb->len covering BTH .. ICRC; the network
 * header still points at the IP header.  The BTH and the extension
 * headers (%SNAA_MAX_BTH_EXT_BYTES, or all of a shorter packet) are in
 * the linear part; the payload may be in page fragments.
 *
 * Context: softirq, RCU read side.
 * Return: 0: the packet is always consumed.
 */
static int snaa_net_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct snaa_net *sn = net_generic(sock_net(sk), snaa_net_id);
	enum snaa_counter drop;
	struct snaa_dev *sdev;
	unsigned int hdr;

	rcu_read_lock();
	sdev = snaa_net_find_rcu(sn, skb->dev);
	if (!sdev)
		goto free;

	if (!snaa_net_rx_check(sk, skb, &drop)) {
		snaa_count(sdev, drop, 1);
		if (drop == SNAA_CNT_DROP_BAD_ICRC)
			snaa_net_rx_bad_icrc(sdev, sk, skb);
		goto free;
	}

	/*
	 * snaa_rcv() parses the BTH and extension headers in place and
	 * copies the payload with skb_copy_bits(): only the headers need to
	 * be linear.  Pulling them is rare (drivers put at least the
	 * protocol headers in the linear part) and counted.
	 */
	hdr = SNAA_UDP_HDR_BYTES +
	      min_t(unsigned int, skb->len - SNAA_UDP_HDR_BYTES,
		    SNAA_MAX_BTH_EXT_BYTES);
	if (skb_headlen(skb) < hdr) {
		if (!pskb_may_pull(skb, hdr)) {
			snaa_count(sdev, SNAA_CNT_DROP_NO_MEM, 1);
			goto free;
		}
		snaa_count(sdev, SNAA_CNT_RX_LINEARIZED, 1);
	}

	snaa_net_rx_addrs(sk, skb);
	__skb_pull(skb, SNAA_UDP_HDR_BYTES);
	snaa_count(sdev, SNAA_CNT_RX_PKTS, 1);
	snaa_count(sdev, SNAA_CNT_RX_BYTES, skb->len);
	snaa_rcv(sdev, skb);
	rcu_read_unlock();
	return 0;

free:
	rcu_read_unlock();
	kfree_skb(skb);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Tunnel sockets and namespaces                                       */
/* ------------------------------------------------------------------ */

static struct socket *snaa_net_sock_create(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = snaa_net_encap_rcv,
	};
	struct udp_port_cfg ucfg = {
		.local_udp_port = htons(SNAA_ROCE_V2_UDP_DPORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		ucfg.family = AF_INET6;
		ucfg.ipv6_v6only = 1;
		/* rdma_rxe and others send UDP checksum 0 over IPv6 too. */
		ucfg.use_udp6_rx_checksums = 0;
	} else {
		ucfg.family = AF_INET;
	}

	err = udp_sock_create(net, &ucfg, &sock);
	if (err)
		return ERR_PTR(err);
	snaa_udp_tunnel_setup(net, sock, &tcfg);
	return sock;
}

/*
 * Release the sockets of @sn.  The caller waits for an RCU grace period
 * before assuming that the receive hook no longer runs for them.
 */
static void snaa_net_sock_release(struct snaa_net *sn)
{
	if (sn->sock6)
		snaa_udp_tunnel_release(sn->sock6);
	if (sn->sock4)
		snaa_udp_tunnel_release(sn->sock4);
	sn->sock6 = NULL;
	sn->sock4 = NULL;
}

static void snaa_net_sock_error(struct snaa_dev *sdev, struct net *net,
				const char *family, int err)
{
	if (err == -EADDRINUSE)
		pr_err("snaa: cannot add a device on %s: UDP port %u is in use in this network namespace (rdma_rxe loaded?): unload rdma_rxe (modprobe -r rdma_rxe) or stop whatever holds the port ('ss -uanp sport = :%u' in netns %u), or use another namespace\n",
		       netdev_name(sdev->ndev), SNAA_ROCE_V2_UDP_DPORT,
		       SNAA_ROCE_V2_UDP_DPORT, net->ns.inum);
	else
		pr_err("snaa: cannot add a device on %s: cannot open the %s UDP socket on port %u in netns %u: %d\n",
		       netdev_name(sdev->ndev), family,
		       SNAA_ROCE_V2_UDP_DPORT, net->ns.inum, err);
}

/* Open both sockets of @sn; IPv6 is optional. */
static int snaa_net_sock_open(struct snaa_net *sn, struct net *net,
			      struct snaa_dev *sdev)
{
	struct socket *sock;

	sock = snaa_net_sock_create(net, false);
	if (IS_ERR(sock)) {
		snaa_net_sock_error(sdev, net, "IPv4", PTR_ERR(sock));
		return PTR_ERR(sock);
	}
	sn->sock4 = sock;

	sock = snaa_net_sock_create(net, true);
	if (IS_ERR(sock)) {
		int err = PTR_ERR(sock);

		if (err == -EAFNOSUPPORT || err == -EPFNOSUPPORT) {
			pr_info("snaa: IPv6 unavailable in netns %u: RoCEv2 over IPv4 only\n",
				net->ns.inum);
			return 0;
		}
		snaa_net_sock_error(sdev, net, "IPv6", err);
		snaa_net_sock_release(sn);
		return err;
	}
	sn->sock6 = sock;
	return 0;
}

/**
 * snaa_net_dev_add() - attach a device to its netdev's namespace
 * @sdev: the device; sdev->ndev set, sdev->net_list initialised and not
 *	on any list
 *
 * Opens the namespace's tunnel sockets if this is its first device, then
 * makes @sdev visible to the receive hook: from here on snaa_rcv() may be
 * called for @sdev.
 *
 * Context: process context, may sleep; no locks held.
 * Return: 0, or a negative errno (-EADDRINUSE: another user holds UDP
 * port 4791 in the namespace).
 */
int snaa_net_dev_add(struct snaa_dev *sdev)
{
	struct net *net;
	struct snaa_net *sn;
	int err = 0;

	/* A namespace whose dismantling has begun gets no new device. */
	net = maybe_get_net(dev_net(sdev->ndev));
	if (!net)
		return -ENODEV;
	sn = net_generic(net, snaa_net_id);

	mutex_lock(&snaa_net_lock);
	if (WARN_ON_ONCE(!list_empty(&sdev->net_list))) {
		err = -EEXIST;
		goto out;
	}
	if (!sn->ndevs) {
		err = snaa_net_sock_open(sn, net, sdev);
		if (err)
			goto out;
		list_add(&sn->node, &snaa_net_active);
	}
	sn->ndevs++;
	list_add_tail_rcu(&sdev->net_list, &sn->dev_list);
out:
	mutex_unlock(&snaa_net_lock);
	put_net(net);
	return err;
}

static struct snaa_net *snaa_net_owner(struct snaa_dev *sdev)
{
	struct snaa_net *sn;
	struct snaa_dev *d;

	lockdep_assert_held(&snaa_net_lock);
	list_for_each_entry(sn, &snaa_net_active, node)
		list_for_each_entry(d, &sn->dev_list, net_list)
			if (d == sdev)
				return sn;
	return NULL;
}

/**
 * snaa_net_dev_del() - detach a device from its namespace
 * @sdev: the device
 *
 * Undoes snaa_net_dev_add(); closes the namespace's sockets with its last
 * device.  When this returns, no receive hook is running for @sdev.  A
 * no-op if @sdev was never added, or was detached already by the exit of
 * its namespace.
 *
 * Context: process context, may sleep (waits for an RCU grace period).
 */
void snaa_net_dev_del(struct snaa_dev *sdev)
{
	struct snaa_net *sn;

	mutex_lock(&snaa_net_lock);
	if (list_empty(&sdev->net_list)) {
		mutex_unlock(&snaa_net_lock);
		return;
	}
	sn = snaa_net_owner(sdev);
	if (WARN_ON_ONCE(!sn)) {
		mutex_unlock(&snaa_net_lock);
		return;
	}
	list_del_rcu(&sdev->net_list);
	if (!--sn->ndevs) {
		snaa_net_sock_release(sn);
		list_del(&sn->node);
	}
	mutex_unlock(&snaa_net_lock);

	synchronize_rcu();
	INIT_LIST_HEAD(&sdev->net_list);
}

static int __net_init snaa_net_ns_init(struct net *net)
{
	struct snaa_net *sn = net_generic(net, snaa_net_id);

	INIT_LIST_HEAD(&sn->dev_list);
	INIT_LIST_HEAD(&sn->node);
	return 0;
}

/*
 * The namespace is going away.  Netdevs have left it (the device exits
 * run first), but the removal of their snaa devices may still be queued:
 * close the sockets and detach the devices, so that their later
 * snaa_net_dev_del() does not touch this namespace's memory.
 */
static void __net_exit snaa_net_ns_exit(struct net *net)
{
	struct snaa_net *sn = net_generic(net, snaa_net_id);
	struct snaa_dev *sdev, *tmp;

	mutex_lock(&snaa_net_lock);
	if (sn->ndevs) {
		snaa_net_sock_release(sn);
		list_del(&sn->node);
		/* With the sockets gone, no reader of dev_list is left. */
		synchronize_rcu();
		list_for_each_entry_safe(sdev, tmp, &sn->dev_list, net_list)
			list_del_init(&sdev->net_list);
		sn->ndevs = 0;
	}
	mutex_unlock(&snaa_net_lock);
}

static struct pernet_operations snaa_net_ops = {
	.init = snaa_net_ns_init,
	.exit = snaa_net_ns_exit,
	.id = &snaa_net_id,
	.size = sizeof(struct snaa_net),
};

/**
 * snaa_net_init() - module init of the network side
 *
 * A pernet subsystem (not device): its exit runs after the netdevs have
 * left a dying namespace.
 *
 * Return: 0 or a negative errno.
 */
int snaa_net_init(void)
{
	return register_pernet_subsys(&snaa_net_ops);
}

/* Module exit; all devices must be gone. */
void snaa_net_exit(void)
{
	unregister_pernet_subsys(&snaa_net_ops);
}

/* ------------------------------------------------------------------ */
/* Address vectors                                                     */
/* ------------------------------------------------------------------ */

/* True if the GID's netdev is the device's own netdev. */
static bool snaa_gid_on_ndev(struct snaa_dev *sdev,
			     const struct ib_gid_attr *attr)
{
	struct net_device *ndev;
	bool ok;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	ok = !IS_ERR(ndev) && ndev == sdev->ndev;
	rcu_read_unlock();
	return ok;
}

/**
 * snaa_av_init() - resolve an address vector
 * @sdev: the device the packets leave from
 * @av: filled on success; untouched on failure
 * @ah: the path, validated by the RDMA core (sgid_attr set)
 * @lqpn: the local QPN, for the default flow label
 * @rqpn: the remote QPN, likewise
 * @gfp: allocation context of the caller
 *
 * Source address from the source GID, destination from the destination
 * GID, both IPv4 (v4-mapped GIDs) or both IPv6; traffic class, hop limit
 * (0 means 64), flow label (0 means the one rdma_calc_flow_label()
 * derives from the QPNs) and the UDP source port derived from it.  The
 * AV is "loopback" when the destination is one of this device's own
 * RoCEv2 GIDs.  Release it with snaa_av_release().
 *
 * Context: any; allocates with @gfp.
 * Return: 0, -EINVAL for an AV snaa cannot use, -ENOMEM.
 */
int snaa_av_init(struct snaa_dev *sdev, struct snaa_av *av,
		 const struct rdma_ah_attr *ah, u32 lqpn, u32 rqpn, gfp_t gfp)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sattr, *local;
	struct in6_addr src, dst;
	struct snaa_av new = { };
	u32 fl;
	int err;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sattr = grh->sgid_attr;
	if (!sattr || sattr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		snaa_dbg(sdev, "QP %u: source GID is not RoCEv2\n", lqpn);
		return -EINVAL;
	}
	/* Packets leave through sdev->ndev: GIDs of upper devices won't do. */
	if (!snaa_gid_on_ndev(sdev, sattr)) {
		snaa_dbg(sdev, "QP %u: source GID %pI6 is not on %s\n", lqpn,
			 sattr->gid.raw, netdev_name(sdev->ndev));
		return -EINVAL;
	}

	memcpy(&src, sattr->gid.raw, sizeof(src));
	memcpy(&dst, grh->dgid.raw, sizeof(dst));
	if (ipv6_addr_v4mapped(&src) != ipv6_addr_v4mapped(&dst)) {
		snaa_dbg(sdev, "QP %u: %pI6 -> %pI6 mixes IPv4 and IPv6\n",
			 lqpn, &src, &dst);
		return -EINVAL;
	}
	if (ipv6_addr_v4mapped(&dst)) {
		new.saddr.v4.s_addr = src.s6_addr32[3];
		new.daddr.v4.s_addr = dst.s6_addr32[3];
		if (ipv4_is_zeronet(new.daddr.v4.s_addr) ||
		    ipv4_is_multicast(new.daddr.v4.s_addr) ||
		    ipv4_is_lbcast(new.daddr.v4.s_addr))
			return -EINVAL;
	} else {
		new.ipv6 = true;
		new.saddr.v6 = src;
		new.daddr.v6 = dst;
		if (ipv6_addr_any(&dst) || ipv6_addr_is_multicast(&dst))
			return -EINVAL;
	}

	new.tos = grh->traffic_class;
	new.ttl = grh->hop_limit ?: SNAA_DEFAULT_HOP_LIMIT;
	fl = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	if (!fl)
		fl = rdma_calc_flow_label(lqpn, rqpn);
	new.flow_label = fl;
	new.sport = htons(rdma_get_udp_sport(fl, lqpn, rqpn));

	local = rdma_find_gid_by_port(&sdev->ibdev, &grh->dgid,
				      IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (!IS_ERR(local)) {
		new.loopback = true;
		rdma_put_gid_attr(local);
	}

	err = dst_cache_init(&new.dst_cache, gfp);
	if (err)
		return err;
	new.valid = true;
	*av = new;
	snaa_dbg(sdev, "QP %u -> %u: %pI6 -> %pI6 sport %u%s\n", lqpn, rqpn,
		 &src, &dst, ntohs(new.sport),
		 new.loopback ? " (loopback)" : "");
	return 0;
}

/**
 * snaa_av_release() - free what snaa_av_init() allocated
 * @av: the address vector; may be zeroed or released already
 *
 * Context: any.
 */
void snaa_av_release(struct snaa_av *av)
{
	if (av->dst_cache.cache)
		dst_cache_destroy(&av->dst_cache);
	av->dst_cache.cache = NULL;
	av->valid = false;
}

/**
 * snaa_av_match() - did a packet come along the reverse of a path?
 * @av: the path of a connected QP
 * @cb: the addresses the packet travelled between
 *
 * A connected QP accepts only packets sent from its destination to its
 * source address, as rdma_rxe does.
 *
 * Context: any.
 * Return: true if the packet's source is @av's destination and its
 * destination @av's source.
 */
bool snaa_av_match(const struct snaa_av *av, const struct snaa_skb_cb *cb)
{
	if (!av->valid || av->ipv6 != cb->ipv6)
		return false;
	if (cb->ipv6)
		return ipv6_addr_equal(&cb->saddr.v6, &av->daddr.v6) &&
		       ipv6_addr_equal(&cb->daddr.v6, &av->saddr.v6);
	return cb->saddr.v4.s_addr == av->daddr.v4.s_addr &&
	       cb->daddr.v4.s_addr == av->saddr.v4.s_addr;
}

/* ------------------------------------------------------------------ */
/* Transmit                                                            */
/* ------------------------------------------------------------------ */

static unsigned int snaa_ip_udp_len(const struct snaa_av *av)
{
	return (av->ipv6 ? SNAA_IPV6_HDR_BYTES : SNAA_IPV4_HDR_BYTES) +
	       SNAA_UDP_HDR_BYTES;
}

/**
 * snaa_skb_alloc() - allocate a packet for snaa_xmit()
 * @sdev: the sending device
 * @av: the destination
 * @len: bytes the caller will skb_put(): BTH, extension headers,
 *	payload and pad
 *
 * The buffer has headroom for the link layer, IP and UDP headers and
 * tailroom for the ICRC; skb->data is where the BTH goes.
 *
 * Context: any but hard IRQ; does not sleep (packets are built under
 * the QP's spinlocks).
 * Return: the buffer, or NULL.
 */
struct sk_buff *snaa_skb_alloc(struct snaa_dev *sdev, struct snaa_av *av,
			       unsigned int len)
{
	struct net_device *ndev = sdev->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + snaa_ip_udp_len(av);
	unsigned int size = head + len + SNAA_ICRC_BYTES;
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	/*
	 * Packets that fit a page are built around a piece of the per-CPU
	 * page fragment cache, whose pages are recycled without being
	 * cleared again; kmalloc()ed data (alloc_skb(), and
	 * __netdev_alloc_skb() below 1 KiB) is zeroed on every allocation
	 * under init_on_alloc, Debian's default: for small packets (ACKs,
	 * atomics, short SENDs) that was a tenth of the time the CPU
	 * spends per message.  kmalloc() is the fallback.
	 */
	if (fragsz <= PAGE_SIZE) {
		data = netdev_alloc_frag(fragsz);
		if (data) {
			/*
			 * The skb from the per-CPU cache NAPI drivers use,
			 * which snaa_rcv() refills with looped-back ones:
			 * no slab allocation, no zeroing of the whole head.
			 */
			local_bh_disable();
			skb = napi_build_skb(data, fragsz);
			local_bh_enable();
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(size, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	skb->dev = ndev;
	skb->protocol = av->ipv6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb->priority = rt_tos2priority(av->tos);
	return skb;
}

/*
 * Make @skb linear and private, with @headroom bytes in front and room
 * for the ICRC behind.  Normally a no-op for a buffer of snaa_skb_alloc().
 */
static int snaa_xmit_room(struct sk_buff *skb, unsigned int headroom)
{
	if (skb_is_nonlinear(skb) && __skb_linearize(skb))
		return -ENOMEM;
	if (skb_tailroom(skb) < SNAA_ICRC_BYTES &&
	    pskb_expand_head(skb, 0, SNAA_ICRC_BYTES, GFP_ATOMIC))
		return -ENOMEM;
	return skb_cow_head(skb, headroom);
}

/*
 * Both ends on this device: append an ICRC slot (not computed: nothing
 * checks it on this path) and run the receive path directly.
 */
static int snaa_xmit_loopback(struct snaa_dev *sdev, struct snaa_av *av,
			      u32 src_qpn, struct sk_buff *skb)
{
	struct snaa_skb_cb *cb = snaa_skb_cb(skb);

	if (snaa_xmit_room(skb, 0)) {
		kfree_skb(skb);
		snaa_count(sdev, SNAA_CNT_TX_ERR, 1);
		return -ENOMEM;
	}
	skb_put_zero(skb, SNAA_ICRC_BYTES);
	skb_reset_network_header(skb);
	skb_reset_transport_header(skb);
	skb->pkt_type = PACKET_LOOPBACK;
	skb->dev = sdev->ndev;
	memset(cb, 0, sizeof(*cb));
	cb->ipv6 = av->ipv6;
	cb->loopback = true;
	cb->tos = av->tos;
	cb->ttl = av->ttl;
	cb->flow_label = av->flow_label;
	cb->saddr = av->saddr;
	cb->daddr = av->daddr;
	/*
	 * The addresses are the sender's own: any QP of the device can
	 * name them.  Who sent it is what the receiver checks (snaa_rx.c).
	 */
	cb->src_qpn = src_qpn;
	snaa_count(sdev, SNAA_CNT_LOOPBACK_PKTS, 1);

	local_bh_disable();
	snaa_rcv(sdev, skb);
	local_bh_enable();
	return 0;
}

/* Route lookup, route cache first.  Context: BH disabled. */
static struct dst_entry *snaa_route4(struct snaa_dev *sdev,
				     struct snaa_av *av)
{
	struct flowi4 fl4 = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = av->saddr.v4.s_addr,
		.daddr = av->daddr.v4.s_addr,
		.fl4_sport = av->sport,
		.fl4_dport = htons(SNAA_ROCE_V2_UDP_DPORT),
	};
	struct rtable *rt;
	__be32 saddr;

	rt = dst_cache_get_ip4(&av->dst_cache, &saddr);
	if (rt)
		return &rt->dst;

	rt = ip_route_output_key(dev_net(sdev->ndev), &fl4);
	if (IS_ERR(rt)) {
		snaa_dbg(sdev, "no route to %pI4: %ld\n", &av->daddr.v4,
			 PTR_ERR(rt));
		return NULL;
	}
	dst_cache_set_ip4(&av->dst_cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

#if IS_ENABLED(CONFIG_IPV6)
/* Route lookup, route cache first.  Context: BH disabled. */
static struct dst_entry *snaa_route6(struct snaa_dev *sdev,
				     struct snaa_av *av)
{
	struct flowi6 fl6 = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.flowlabel = ip6_make_flowinfo(av->tos,
					       htonl(av->flow_label &
						     IB_GRH_FLOWLABEL_MASK)),
		.saddr = av->saddr.v6,
		.daddr = av->daddr.v6,
		.fl6_sport = av->sport,
		.fl6_dport = htons(SNAA_ROCE_V2_UDP_DPORT),
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	dst = dst_cache_get_ip6(&av->dst_cache, &saddr);
	if (dst)
		return dst;

	dst = snaa_ip6_dst_lookup(dev_net(sdev->ndev), &fl6);
	if (IS_ERR(dst)) {
		snaa_dbg(sdev, "no route to %pI6: %ld\n", &av->daddr.v6,
			 PTR_ERR(dst));
		return NULL;
	}
	if (dst->error) {
		snaa_dbg(sdev, "no route to %pI6: %d\n", &av->daddr.v6,
			 dst->error);
		dst_release(dst);
		return NULL;
	}
	dst_cache_set_ip6(&av->dst_cache, dst, &fl6.saddr);
	return dst;
}
#else
static struct dst_entry *snaa_route6(struct snaa_dev *sdev,
				     struct snaa_av *av)
{
	return NULL;
}
#endif

static void snaa_push_udp(struct sk_buff *skb, const struct snaa_av *av)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = av->sport;
	uh->dest = htons(SNAA_ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;		/* RoCEv2: the ICRC protects the packet */
}

static void snaa_push_ipv4(struct sk_buff *skb, const struct snaa_av *av,
			   struct net *net)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->tos;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;		/* ip_local_out() computes it */
	iph->saddr = av->saddr.v4.s_addr;
	iph->daddr = av->daddr.v4.s_addr;
	__ip_select_ident(net, iph, 1);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void snaa_push_ipv6(struct sk_buff *skb, const struct snaa_av *av)
{
	struct ipv6hdr *ip6h;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->tos,
		     htonl(av->flow_label & IB_GRH_FLOWLABEL_MASK));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->ttl;
	ip6h->saddr = av->saddr.v6;
	ip6h->daddr = av->daddr.v6;
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/*
 * Compute the ICRC of a packet whose IP and UDP headers are final and
 * store it in the last 4 bytes.  The buffer is linear.
 */
static void snaa_icrc_fill(struct sk_buff *skb, bool is_v6)
{
	const u8 *bth = skb_transport_header(skb) + SNAA_UDP_HDR_BYTES;
	u8 *icrc = skb_tail_pointer(skb) - SNAA_ICRC_BYTES;

	snaa_icrc_put(icrc, snaa_icrc_compute(snaa_crc32,
					      skb_network_header(skb), is_v6,
					      bth, icrc - bth));
}

/*
 * Transmit fault injection, for tests that need a loss pattern they can
 * predict to the packet: snaa/<device>/tx_fault_skip (N) and
 * tx_fault_drop (M) in debugfs make the device send N more packets,
 * then lose the M after them as a network would (counted in
 * tx_fault_drops; the sender sees success).  Every packet the device
 * sends counts: requests, ACKs, responses, looped back or not.
 */
void snaa_net_debugfs_init(struct snaa_dev *sdev)
{
	debugfs_create_atomic_t("tx_fault_skip", 0600, sdev->debugfs,
				&sdev->tx_fault_skip);
	debugfs_create_atomic_t("tx_fault_drop", 0600, sdev->debugfs,
				&sdev->tx_fault_drop);
}

static bool snaa_tx_fault(struct snaa_dev *sdev)
{
	if (likely(!atomic_read(&sdev->tx_fault_drop)))
		return false;
	if (atomic_dec_if_positive(&sdev->tx_fault_skip) >= 0)
		return false;
	if (atomic_dec_if_positive(&sdev->tx_fault_drop) < 0)
		return false;
	snaa_count(sdev, SNAA_CNT_TX_FAULT_DROPS, 1);
	return true;
}

/**
 * snaa_xmit() - send one RoCEv2 packet
 * @sdev: the sending device
 * @av: the destination, from snaa_av_init()
 * @src_qpn: the sending QP
 * @skb: the packet from the BTH to the end of the pad (a multiple of 4
 *	bytes), normally from snaa_skb_alloc(); always consumed
 *
 * To another node: route (through @av's route cache), add the UDP
 * header (checksum 0) and the IPv4 (DF set) or IPv6 header, compute and
 * append the ICRC, and hand the packet to IP local output.
 *
 * Loopback (@av->loopback): append an ICRC slot of zeros and call
 * snaa_rcv() directly, with BH disabled, before returning.  snaa_rcv()
 * sees skb->data at the BTH and skb->len including the ICRC slot, as for
 * a packet from the wire, but skb->pkt_type is PACKET_LOOPBACK and there
 * is no IP or UDP header (network and transport header at the BTH); the
 * addresses of @av and @src_qpn are in the control block (struct
 * snaa_skb_cb).
 *
 * Counters: TX_PKTS and TX_BYTES (BTH .. ICRC) for packets handed to IP,
 * LOOPBACK_PKTS for looped-back ones, TX_ERR for failures.
 *
 * Context: process or softirq context, not hard IRQ; does not sleep.
 * Return: 0 (also for NET_XMIT_CN), -EHOSTUNREACH without a route,
 * -ENOMEM, -ENOBUFS if the packet was dropped on the way out, or another
 * negative errno from IP output.
 */
int snaa_xmit(struct snaa_dev *sdev, struct snaa_av *av, u32 src_qpn,
	      struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	unsigned int bytes, head;
	struct dst_entry *dst;
	int err;

	if (unlikely(snaa_tx_fault(sdev))) {
		consume_skb(skb);
		return 0;
	}
	if (unlikely(!av->valid)) {
		err = -EINVAL;
		goto drop;
	}
	if (av->loopback)
		return snaa_xmit_loopback(sdev, av, src_qpn, skb);

	local_bh_disable();
	dst = av->ipv6 ? snaa_route6(sdev, av) : snaa_route4(sdev, av);
	local_bh_enable();
	if (!dst) {
		err = -EHOSTUNREACH;
		goto drop;
	}

	head = LL_RESERVED_SPACE(dst->dev) + snaa_ip_udp_len(av);
	if (snaa_xmit_room(skb, head)) {
		dst_release(dst);
		err = -ENOMEM;
		goto drop;
	}
	skb_put_zero(skb, SNAA_ICRC_BYTES);
	bytes = skb->len;

	skb_dst_drop(skb);
	skb_dst_set(skb, dst);
	skb->ip_summed = CHECKSUM_NONE;
	skb->pkt_type = PACKET_HOST;
	skb->dev = sdev->ndev;

	snaa_push_udp(skb, av);
	if (av->ipv6) {
		skb->protocol = htons(ETH_P_IPV6);
		snaa_push_ipv6(skb, av);
	} else {
		skb->protocol = htons(ETH_P_IP);
		snaa_push_ipv4(skb, av, net);
	}
	/* After the IP header: the ICRC covers the IPv4 ID among others. */
	snaa_icrc_fill(skb, av->ipv6);

	if (av->ipv6)
		err = ip6_local_out(net, NULL, skb);
	else
		err = ip_local_out(net, NULL, skb);
	err = net_xmit_eval(err);
	if (unlikely(err)) {
		snaa_dbg(sdev, "IP output failed: %d\n", err);
		snaa_count(sdev, SNAA_CNT_TX_ERR, 1);
		return err > 0 ? -ENOBUFS : err;
	}
	snaa_count(sdev, SNAA_CNT_TX_PKTS, 1);
	snaa_count(sdev, SNAA_CNT_TX_BYTES, bytes);
	return 0;

drop:
	kfree_skb(skb);
	snaa_count(sdev, SNAA_CNT_TX_ERR, 1);
	return err;
}
