// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* RoCE v2 GIDs: snaa_gid.h. */
#include <arpa/inet.h>
#include <string.h>

#include "snaa_gid.h"

int snaa_gid_from_ip(const char *ip, union ibv_gid *gid)
{
	struct in_addr a4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, ip, &a4) == 1) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(gid->raw + 12, &a4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, ip, gid->raw) == 1 ? 0 : -1;
}

bool snaa_gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid, &zero, sizeof(*gid));
}

bool snaa_gid_is_v4mapped(const union ibv_gid *gid)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, pfx, sizeof(pfx));
}

bool snaa_gid_is_linklocal(const union ibv_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

enum snaa_gid_kind snaa_gid_kind_of(const union ibv_gid *gid)
{
	return snaa_gid_is_v4mapped(gid) ? SNAA_GID_IPV4 : SNAA_GID_IPV6;
}

int snaa_gid_find(struct ibv_context *ctx, uint8_t port, int tbl_len,
		  enum snaa_gid_kind kind, struct ibv_gid_entry *e)
{
	for (int i = 0; i < tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, e, 0) ||
		    snaa_gid_is_zero(&e->gid) ||
		    e->gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (kind == SNAA_GID_IPV4 && !snaa_gid_is_v4mapped(&e->gid))
			continue;
		if (kind == SNAA_GID_IPV6 &&
		    (snaa_gid_is_v4mapped(&e->gid) ||
		     snaa_gid_is_linklocal(&e->gid)))
			continue;
		return i;
	}
	return -1;
}

int snaa_gid_index(struct ibv_context *ctx, uint8_t port, int tbl_len,
		   const union ibv_gid *gid)
{
	struct ibv_gid_entry e;

	for (int i = 0; i < tbl_len; i++)
		if (!ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0) &&
		    e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, gid->raw, sizeof(gid->raw)))
			return i;
	return -1;
}
