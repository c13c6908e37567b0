// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaadv_dl.c: the direct verbs of snaadv.h for snaa's own programs
 * (wcubuf-emu, selftests' wcubuf_test), reached through the provider
 * that libibverbs has loaded instead of by linking libsnaa.so.1.
 *
 * libibverbs loads the provider that drives a device, by the path its
 * configuration or RDMAV_DRIVERS names: the installed one, or one in a
 * build tree (build/provider/).  A program linked with -lsnaa needs the
 * library on its search path as well (an rpath into a build tree, or an
 * installed copy that need not be the one libibverbs loads: two copies
 * then, and the one not driving the device refuses it).  Here every
 * entry point of snaadv.h calls its namesake in the loaded provider,
 * found by its SONAME with dlopen(RTLD_NOLOAD), which never loads
 * anything; the functions are bound at the version libsnaa.map gives
 * them.  While no snaa provider is loaded (no snaa device opened yet)
 * they answer as the provider does for a device that is not snaa: false,
 * EOPNOTSUPP, nothing.
 */
#define _GNU_SOURCE		/* dlvsym */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "snaadv.h"

#define SNAADV_DL_SONAME	"libsnaa.so.1"
#define SNAADV_DL_VERSION	"SNAA_1.0"

static struct {
	__typeof__(&snaadv_is_supported) is_supported;
	__typeof__(&snaadv_create_qp) create_qp;
	__typeof__(&snaadv_wcubuf_rkey) wcubuf_rkey;
	__typeof__(&snaadv_wcubuf_peek) wcubuf_peek;
	__typeof__(&snaadv_wcubuf_consume) wcubuf_consume;
	__typeof__(&snaadv_wcubuf_query) wcubuf_query;
} snaadv_dl;
static bool snaadv_dl_bound;
static pthread_mutex_t snaadv_dl_lock = PTHREAD_MUTEX_INITIALIZER;

static void *snaadv_dl_sym(void *lib, const char *name, bool *ok)
{
	void *sym = dlvsym(lib, name, SNAADV_DL_VERSION);

	if (!sym)
		*ok = false;
	return sym;
}

/* Bind all of them, once the provider is there; false until then. */
static bool snaadv_dl_bind(void)
{
	bool ok = true;
	void *lib;

	if (__atomic_load_n(&snaadv_dl_bound, __ATOMIC_ACQUIRE))
		return true;
	pthread_mutex_lock(&snaadv_dl_lock);
	if (snaadv_dl_bound)
		goto out;
	lib = dlopen(SNAADV_DL_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (!lib) {
		ok = false;
		goto out;
	}
#define SNAADV_DL_BIND(f)						\
	(snaadv_dl.f = (__typeof__(snaadv_dl.f))snaadv_dl_sym(lib,	\
						"snaadv_" #f, &ok))
	SNAADV_DL_BIND(is_supported);
	SNAADV_DL_BIND(create_qp);
	SNAADV_DL_BIND(wcubuf_rkey);
	SNAADV_DL_BIND(wcubuf_peek);
	SNAADV_DL_BIND(wcubuf_consume);
	SNAADV_DL_BIND(wcubuf_query);
#undef SNAADV_DL_BIND
	/* libibverbs holds the provider for good; drop our reference */
	dlclose(lib);
	if (ok)
		__atomic_store_n(&snaadv_dl_bound, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&snaadv_dl_lock);
	return ok;
}

bool snaadv_is_supported(struct ibv_context *ctx)
{
	return snaadv_dl_bind() && snaadv_dl.is_supported(ctx);
}

struct ibv_qp *snaadv_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr,
				const struct snaadv_qp_init_attr *dv)
{
	if (!snaadv_dl_bind()) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return snaadv_dl.create_qp(pd, attr, dv);
}

uint32_t snaadv_wcubuf_rkey(struct ibv_qp *qp)
{
	return snaadv_dl_bind() ? snaadv_dl.wcubuf_rkey(qp) : 0;
}

int snaadv_wcubuf_peek(struct ibv_qp *qp, struct snaadv_wcubuf_frame *frames,
		       int max)
{
	return snaadv_dl_bind() ? snaadv_dl.wcubuf_peek(qp, frames, max) : 0;
}

void snaadv_wcubuf_consume(struct ibv_qp *qp, int n)
{
	if (snaadv_dl_bind())
		snaadv_dl.wcubuf_consume(qp, n);
}

int snaadv_wcubuf_query(struct ibv_qp *qp, struct snaadv_wcubuf_stats *stats)
{
	return snaadv_dl_bind() ? snaadv_dl.wcubuf_query(qp, stats) :
				  EOPNOTSUPP;
}
