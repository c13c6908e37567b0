/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_gid - RoCE v2 GIDs for the snaa tools and test programs: from an
 * IP address, what kind they are, and which entry of a port's GID table
 * holds one.  (libibverbs; the GID table is read with ibv_query_gid_ex.)
 */
#ifndef SNAA_GID_H
#define SNAA_GID_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

enum snaa_gid_kind {
	SNAA_GID_IPV4,	/* IPv4-mapped (::ffff:a.b.c.d) */
	SNAA_GID_IPV6,	/* IPv6, neither IPv4-mapped nor link-local */
	SNAA_GID_ANY,	/* any address */
};

/*
 * The GID of IP address @ip: ::ffff:a.b.c.d for an IPv4 address, an IPv6
 * address as it is.  0, or -1 if @ip is neither.
 */
int snaa_gid_from_ip(const char *ip, union ibv_gid *gid);

bool snaa_gid_is_zero(const union ibv_gid *gid);
bool snaa_gid_is_v4mapped(const union ibv_gid *gid);
/* fe80::/10 */
bool snaa_gid_is_linklocal(const union ibv_gid *gid);
/* IPv4 or IPv6: the kind of @gid (to pick a GID of a peer's kind). */
enum snaa_gid_kind snaa_gid_kind_of(const union ibv_gid *gid);

/*
 * The first RoCE v2 GID of @kind in the @tbl_len entries of @port's
 * table: its index (and the entry in *@e), or -1.
 */
int snaa_gid_find(struct ibv_context *ctx, uint8_t port, int tbl_len,
		  enum snaa_gid_kind kind, struct ibv_gid_entry *e);

/* The index of RoCE v2 GID @gid in @port's table, or -1. */
int snaa_gid_index(struct ibv_context *ctx, uint8_t port, int tbl_len,
		   const union ibv_gid *gid);

#endif /* SNAA_GID_H */
