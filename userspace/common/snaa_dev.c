// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa_dev - open an RDMA device by name (snaa_dev.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "snaa_dev.h"

/* " name name ..." of the @n devices of @list, cut to fit @buf. */
static void list_names(struct ibv_device **list, int n, char *buf,
		       size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++) {
		int w = snprintf(buf + o, len - o, " %s",
				 ibv_get_device_name(list[i]));

		if (w < 0)
			break;
		o += (size_t)w;
	}
}

struct ibv_context *snaa_dev_open(const char *prog, const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device *dev = NULL;
	char names[256];
	int n = 0, i, err;

	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "%s: cannot list RDMA devices: %s (load "
			"ib_uverbs and snaa, then create %s with 'rdma link "
			"add %s type snaa netdev IFACE')\n", prog,
			strerror(errno), name ? name : "a device",
			name ? name : "snaa0");
		errno = ENODEV;
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	list_names(list, n, names, sizeof(names));
	if (!n) {
		fprintf(stderr, "%s: no RDMA device: load snaa (or rdma_rxe) "
			"and create one with 'rdma link add %s type snaa "
			"netdev IFACE'\n", prog, name ? name : "snaa0");
	} else if (!dev) {
		fprintf(stderr, "%s: no RDMA device %s: create it with 'rdma "
			"link add %s type snaa netdev IFACE' (or type rxe); "
			"present:%s\n", prog, name, name, names);
	} else if (!name && n > 1) {
		fprintf(stderr, "%s: several RDMA devices; pick one with "
			"--dev:%s\n", prog, names);
		dev = NULL;
	}
	if (!dev) {
		ibv_free_device_list(list);
		errno = ENODEV;
		return NULL;
	}
	ctx = ibv_open_device(dev);
	err = errno;
	if (!ctx)
		fprintf(stderr, "%s: cannot open %s: %s (is its user-space "
			"provider installed? see ibv_devinfo -d %s)\n", prog,
			ibv_get_device_name(dev), strerror(err),
			ibv_get_device_name(dev));
	ibv_free_device_list(list);
	errno = err;
	return ctx;
}
