// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_pabi: host unit test of the provider built for rdma-core 44
 * against the rdma-core 44 stand-in (rdma-core-44.0/), run against the
 * installed libibverbs 44, without a kernel device: that the stand-in's
 * layouts are those of the real library.  Prints KTAP; exits 0 iff all
 * checks pass.
 *
 *   ./test_pabi /abs/path/libsnaa-rdmav34.so
 *
 * How it works:
 *  - the provider's ELF file is inspected directly (exports, versioned
 *    imports, BIND_NOW);
 *  - the provider is dlmopen()ed into a fresh link-map namespace, where
 *    only the installed libibverbs/libc can satisfy its imports;
 *  - it is then dlopen()ed into this process, where this executable
 *    exports its own verbs_register_driver_34, ibv_cmd_get_context,
 *    ibv_cmd_query_device_any, ibv_cmd_query_port and __verbs_log.  Being
 *    first in the global lookup scope they take the place of libibverbs'
 *    (a versioned reference binds to an unversioned definition in the
 *    executable): the first captures the registered ops, the others play
 *    the kernel.  Everything else - _verbs_init_and_alloc_context,
 *    verbs_set_ops, verbs_uninit_context, verbs_open_device,
 *    ibv_close_device and the public verbs - is the real, installed
 *    libibverbs, driving the provider on a fake device with cmd_fd -1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/snaa-abi.h>

#include <infiniband/driver.h>	/* rdma-core-44.0/ */

/* Private, not used by the provider: declared here only. */
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);

#include "../../tests/lib/ktap.h"
#include "test_vlog.h"

#define NUM_TESTS	20


/* ------------------------------------------------------------------ */
/* Stand-ins for libibverbs / the kernel (exported, see Makefile)      */
/* ------------------------------------------------------------------ */

static struct {
	int calls;
	const struct verbs_device_ops *ops;
} reg;

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	reg.calls++;
	reg.ops = ops;
}

static struct {
	int ret;			/* 0 or positive errno to return */
	int write_drv;			/* write a driver response? */
	uint32_t abi_version;		/* ... with this version */
	int calls;
	size_t cmd_size, resp_size;
	struct verbs_context *vctx;
} kget;

struct test_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct snaa_uresp_alloc_ctx drv;
};

int ibv_cmd_get_context(struct verbs_context *vctx,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
{
	(void)cmd;
	kget.calls++;
	kget.cmd_size = cmd_size;
	kget.resp_size = resp_size;
	kget.vctx = vctx;
	if (kget.ret)
		return kget.ret;
	vctx->context.num_comp_vectors = 1;
	if (kget.write_drv && resp_size >= sizeof(struct test_get_context_resp)) {
		/* resp is the first member of the provider's response. */
		struct test_get_context_resp *full = (void *)resp;

		full->drv.abi_version = kget.abi_version;
		full->drv.dev_id = 7;
	}
	return 0;
}

#define FAKE_VENDOR_ID	0x5aa0
#define FAKE_LID	0x1234

static struct {
	int calls;
	size_t attr_size;
	int resp_null;
} kqdev;

int ibv_cmd_query_device_any(struct ibv_context *ctx,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size)
{
	(void)ctx;
	(void)input;
	kqdev.calls++;
	kqdev.attr_size = attr_size;
	kqdev.resp_null = !resp && !resp_size;
	/* orig_attr is first; attr_size >= sizeof(orig_attr) always. */
	attr->orig_attr.vendor_id = FAKE_VENDOR_ID;
	return 0;
}

static struct {
	int calls;
	uint8_t port;
	size_t cmd_size;
} kqport;

int ibv_cmd_query_port(struct ibv_context *ctx, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size)
{
	(void)ctx;
	kqport.calls++;
	kqport.port = port_num;
	kqport.cmd_size = cmd ? cmd_size : 0;
	port_attr->state = IBV_PORT_ACTIVE;
	port_attr->lid = FAKE_LID;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Minimal ELF64 reader for the provider's dynamic symbols             */
/* ------------------------------------------------------------------ */

struct elf_img {
	const unsigned char *base;
	size_t size;
	const Elf64_Sym *sym;
	size_t nsym;
	const char *str;
	size_t strsz;
	const Elf64_Half *versym;
	const unsigned char *verneed;
	size_t verneedsz;
	const Elf64_Dyn *dyn;
	size_t ndyn;
};

static int elf_range(const struct elf_img *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

static const char *elf_str(const struct elf_img *img, uint64_t off)
{
	if (off >= img->strsz || !memchr(img->str + off, 0, img->strsz - off))
		return NULL;
	return img->str + off;
}

static int elf_load(struct elf_img *img, const char *path)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct stat st;
	int fd, i;
	void *p;

	memset(img, 0, sizeof(*img));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		diag("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	img->base = p;
	img->size = st.st_size;

	eh = p;
	if (!elf_range(img, 0, sizeof(*eh)) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !elf_range(img, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*sh))) {
		diag("not a usable ELF64 file");
		return -1;
	}
	sh = (const Elf64_Shdr *)(img->base + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (!elf_range(img, sh[i].sh_offset, sh[i].sh_size))
			return -1;
		switch (sh[i].sh_type) {
		case SHT_DYNSYM:
			if (sh[i].sh_link >= eh->e_shnum ||
			    !elf_range(img, sh[sh[i].sh_link].sh_offset,
				       sh[sh[i].sh_link].sh_size))
				return -1;
			img->sym = (const void *)(img->base + sh[i].sh_offset);
			img->nsym = sh[i].sh_size / sizeof(Elf64_Sym);
			img->str = (const char *)img->base +
				   sh[sh[i].sh_link].sh_offset;
			img->strsz = sh[sh[i].sh_link].sh_size;
			break;
		case SHT_GNU_versym:
			img->versym = (const void *)(img->base + sh[i].sh_offset);
			break;
		case SHT_GNU_verneed:
			img->verneed = img->base + sh[i].sh_offset;
			img->verneedsz = sh[i].sh_size;
			break;
		case SHT_DYNAMIC:
			img->dyn = (const void *)(img->base + sh[i].sh_offset);
			img->ndyn = sh[i].sh_size / sizeof(Elf64_Dyn);
			break;
		}
	}
	if (!img->sym || !img->nsym) {
		diag("no .dynsym");
		return -1;
	}
	return 0;
}

/* Version required for dynsym index i: "VERSION@file" pieces, or NULL. */
static const char *elf_sym_version(const struct elf_img *img, size_t i,
				   const char **file)
{
	uint64_t off = 0;
	Elf64_Half idx;

	*file = NULL;
	if (!img->versym)
		return NULL;
	idx = img->versym[i] & 0x7fff;
	if (idx <= 1)
		return NULL;
	while (elf_range(img, (img->verneed - img->base) + off,
			 sizeof(Elf64_Verneed)) &&
	       off + sizeof(Elf64_Verneed) <= img->verneedsz) {
		const Elf64_Verneed *vn = (const void *)(img->verneed + off);
		uint64_t aoff = off + vn->vn_aux;
		unsigned int k;

		for (k = 0; k < vn->vn_cnt; k++) {
			const Elf64_Vernaux *va;

			if (aoff + sizeof(*va) > img->verneedsz)
				return NULL;
			va = (const void *)(img->verneed + aoff);
			if (va->vna_other == idx) {
				*file = elf_str(img, vn->vn_file);
				return elf_str(img, va->vna_name);
			}
			if (!va->vna_next)
				break;
			aoff += va->vna_next;
		}
		if (!vn->vn_next)
			break;
		off += vn->vn_next;
	}
	return NULL;
}

static int elf_find_undef(const struct elf_img *img, const char *name)
{
	size_t i;

	for (i = 1; i < img->nsym; i++) {
		const char *s = elf_str(img, img->sym[i].st_name);

		if (s && !strcmp(s, name) && img->sym[i].st_shndx == SHN_UNDEF)
			return (int)i;
	}
	return -1;
}

/* The private symbols the stand-in declares: nothing else may be used. */
static const char *const pabi_declared[] = {
	"__verbs_log", "_verbs_init_and_alloc_context",
	"verbs_register_driver_34", "verbs_set_ops", "verbs_uninit_context",
	"ibv_cmd_alloc_pd", "ibv_cmd_create_ah", "ibv_cmd_create_cq",
	"ibv_cmd_create_qp", "ibv_cmd_dealloc_pd", "ibv_cmd_dereg_mr",
	"ibv_cmd_destroy_ah", "ibv_cmd_destroy_cq", "ibv_cmd_destroy_qp",
	"ibv_cmd_get_context", "ibv_cmd_modify_qp", "ibv_cmd_poll_cq",
	"ibv_cmd_query_device_any", "ibv_cmd_query_port", "ibv_cmd_query_qp",
	"ibv_cmd_reg_mr",
	"ibv_cmd_req_notify_cq", "ibv_cmd_resize_cq", "verbs_init_cq",
	"ibv_cmd_create_srq", "ibv_cmd_modify_srq", "ibv_cmd_query_srq",
	"ibv_cmd_destroy_srq", "ibv_cmd_alloc_mw", "ibv_cmd_dealloc_mw",
};

/* What the provider exports: the direct verbs of snaadv.h, nothing else. */
static const char *const snaadv_exports[] = {
	"snaadv_is_supported", "snaadv_create_qp", "snaadv_wcubuf_rkey",
	"snaadv_wcubuf_peek", "snaadv_wcubuf_consume", "snaadv_wcubuf_query",
};

/* What the provider must import today. */
static const char *const pabi_required[] = {
	"__verbs_log", "_verbs_init_and_alloc_context",
	"verbs_register_driver_34", "verbs_set_ops", "verbs_uninit_context",
	"ibv_cmd_get_context", "ibv_cmd_query_device_any",
	"ibv_cmd_query_port", "ibv_cmd_alloc_pd", "ibv_cmd_dealloc_pd",
	"ibv_cmd_reg_mr", "ibv_cmd_dereg_mr", "ibv_cmd_create_cq",
	"ibv_cmd_destroy_cq", "ibv_cmd_req_notify_cq", "ibv_cmd_resize_cq",
	"ibv_cmd_create_qp", "ibv_cmd_modify_qp", "ibv_cmd_query_qp",
	"ibv_cmd_destroy_qp", "ibv_cmd_create_ah", "ibv_cmd_destroy_ah",
	"verbs_init_cq", "ibv_cmd_alloc_mw", "ibv_cmd_dealloc_mw",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void test_elf(const char *path)
{
	struct elf_img img;
	int ok, nundef = 0, bad = 0;
	size_t i, nexp;

	if (elf_load(&img, path)) {
		result(0, "ELF: exports the direct verbs (snaadv.h) only");
		result(0, "ELF: private imports are IBVERBS_PRIVATE_34 from libibverbs.so.1, __verbs_log among them");
		result(0, "ELF: BIND_NOW set");
		return;
	}

	/* 1. No defined global/weak dynamic symbols but the direct verbs. */
	ok = 1;
	nexp = 0;
	for (i = 1; i < img.nsym; i++) {
		const Elf64_Sym *s = &img.sym[i];
		int bind = ELF64_ST_BIND(s->st_info);
		const char *name = elf_str(&img, s->st_name);

		if (s->st_shndx == SHN_UNDEF) {
			nundef++;
			continue;
		}
		if (bind != STB_GLOBAL && bind != STB_WEAK &&
		    bind != STB_GNU_UNIQUE)
			continue;
		/* the version nodes of libsnaa.map (SNAA_1.0) */
		if (s->st_shndx == SHN_ABS && !s->st_value)
			continue;
		if (in_list(name, snaadv_exports, ARRAY_SIZE(snaadv_exports))) {
			nexp++;
			continue;
		}
		diag("exported: %s", name);
		ok = 0;
	}
	if (nexp != ARRAY_SIZE(snaadv_exports)) {
		diag("%zu of the %zu direct verbs exported", nexp,
		     ARRAY_SIZE(snaadv_exports));
		ok = 0;
	}
	if (!nundef) {
		diag("found no imports either: reader broken?");
		ok = 0;
	}
	result(ok, "ELF: exports the direct verbs (snaadv.h) only");

	/* 2. Versioned private imports. */
	for (i = 0; i < ARRAY_SIZE(pabi_required); i++) {
		const char *ver, *file;
		int idx = elf_find_undef(&img, pabi_required[i]);

		if (idx < 0) {
			diag("%s is not imported", pabi_required[i]);
			bad++;
			continue;
		}
		ver = elf_sym_version(&img, idx, &file);
		if (!ver || strcmp(ver, "IBVERBS_PRIVATE_34") ||
		    !file || strcmp(file, "libibverbs.so.1")) {
			diag("%s bound to %s@%s", pabi_required[i],
			     ver ? ver : "(none)", file ? file : "(none)");
			bad++;
		}
	}
	for (i = 1; i < img.nsym; i++) {
		const char *ver, *file, *name;

		if (img.sym[i].st_shndx != SHN_UNDEF)
			continue;
		ver = elf_sym_version(&img, i, &file);
		name = elf_str(&img, img.sym[i].st_name);
		if (ver && !strncmp(ver, "IBVERBS_PRIVATE_", 16) &&
		    (!name || !in_list(name, pabi_declared,
				       ARRAY_SIZE(pabi_declared)))) {
			diag("unexpected private import %s@%s",
			     name ? name : "?", ver);
			bad++;
		}
	}
	result(!bad, "ELF: private imports are IBVERBS_PRIVATE_34 from libibverbs.so.1, __verbs_log among them");

	/* 3. Immediate binding, so the version guard holds for RTLD_LAZY. */
	ok = 0;
	for (i = 0; img.dyn && i < img.ndyn && img.dyn[i].d_tag != DT_NULL;
	     i++) {
		if (img.dyn[i].d_tag == DT_FLAGS &&
		    (img.dyn[i].d_un.d_val & DF_BIND_NOW))
			ok = 1;
		if (img.dyn[i].d_tag == DT_FLAGS_1 &&
		    (img.dyn[i].d_un.d_val & DF_1_NOW))
			ok = 1;
	}
	result(ok, "ELF: BIND_NOW set");

	munmap((void *)img.base, img.size);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

static void test_dlmopen(const char *path)
{
	struct link_map *lm = NULL;
	void *h;

	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		diag("%s", dlerror());
		result(0, "dlmopen(RTLD_NOW) in a clean namespace: all imports resolve against the installed libibverbs");
		return;
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0)
		for (; lm; lm = lm->l_next)
			if (strstr(lm->l_name, "libibverbs"))
				diag("resolved against %s", lm->l_name);
	result(1, "dlmopen(RTLD_NOW) in a clean namespace: all imports resolve against the installed libibverbs");
	/* Unloading a namespace with its own libc is best avoided. */
}

static void *test_dlopen(const char *path)
{
	void *h;

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		diag("%s", dlerror());
	result(h && reg.calls == 1 && reg.ops,
	       "dlopen: constructor registered its ops exactly once (%d call(s))",
	       reg.calls);
	return h;
}

static void test_dev_ops(const struct verbs_device_ops *ops)
{
	const struct verbs_match_ent *m;
	int ok;

	ok = ops && ops->name && !strcmp(ops->name, "snaa") &&
	     ops->match_min_abi_version == SNAA_ABI_VERSION &&
	     ops->match_max_abi_version == SNAA_ABI_VERSION &&
	     ops->alloc_device && ops->uninit_device && ops->alloc_context &&
	     !ops->match_device && !ops->import_context &&
	     !ops->static_providers;
	result(ok, "device ops: name \"snaa\", ABI %u..%u, alloc/uninit_device and alloc_context set, no match_device",
	       ops ? ops->match_min_abi_version : 0,
	       ops ? ops->match_max_abi_version : 0);

	m = ops ? ops->match_table : NULL;
	ok = m && m[0].kind == VERBS_MATCH_MODALIAS && m[0].u.modalias &&
	     !strcmp(m[0].u.modalias, SNAA_MODALIAS) && !m[0].driver_data &&
	     m[1].kind == VERBS_MATCH_SENTINEL;
	result(ok, "match table: one MODALIAS entry \"%s\", then the sentinel",
	       ok ? m[0].u.modalias : "?");

	/*
	 * libibverbs fnmatch()es each MODALIAS entry against
	 * "rdma_device:N<ibdev name>" and against device/modalias.
	 */
	ok = ok &&
	     fnmatch(m[0].u.modalias, "platform:snaa", 0) == 0 &&
	     fnmatch(m[0].u.modalias, "platform:snaa2", 0) != 0 &&
	     fnmatch(m[0].u.modalias, "rdma_device:Nsnaa0", 0) != 0 &&
	     fnmatch(m[0].u.modalias, "rdma_device:Nplatform:snaa", 0) != 0;
	result(ok, "match semantics: hits modalias platform:snaa only, never a device name");
}

/* ------------------------------------------------------------------ */
/* Driving the provider through the real libibverbs                    */
/* ------------------------------------------------------------------ */

static int refcount(struct verbs_device *vdev)
{
	return atomic_load(&vdev->refcount);
}

static struct ibv_context *open_fake(struct verbs_device *vdev, int ret,
				     int write_drv, uint32_t abi)
{
	memset(&kget, 0, sizeof(kget));
	kget.ret = ret;
	kget.write_drv = write_drv;
	kget.abi_version = abi;
	log_reset();
	errno = 0;
	return verbs_open_device(&vdev->device, NULL);
}

#define SENTINEL(slot)	((uintptr_t)0x5a5a0000u + (uintptr_t)(slot) * 16)

static int mirror_bad;
static int mirror_checked;

static void check_mirror(const char *name, size_t slot_off,
			 const void *mirror)
{
	size_t slot = slot_off / sizeof(snaa44_unused_op);
	uintptr_t got;

	memcpy(&got, mirror, sizeof(got));
	mirror_checked++;
	if (got != SENTINEL(slot)) {
		mirror_bad++;
		diag("slot %zu (%s): library mirror holds %#lx, expected %#lx",
		     slot, name, (unsigned long)got,
		     (unsigned long)SENTINEL(slot));
	}
}

#define OPOFF(m)	offsetof(struct verbs_context_ops, m)
/* Mirror in struct verbs_context, same name / other name. */
#define MV(m)		check_mirror(#m, OPOFF(m), &vctx->m)
#define MVN(m, f)	check_mirror(#m, OPOFF(m), &vctx->f)
/* Mirror in struct ibv_context_ops, same name / _compat_ name. */
#define MC(m)		check_mirror(#m, OPOFF(m), &vctx->context.ops.m)
#define MCC(m)		check_mirror(#m, OPOFF(m), \
				     &vctx->context.ops._compat_##m)

static void test_ops_layout(struct verbs_context *vctx)
{
	struct verbs_context_ops s;
	size_t i;

	/* A distinct value in every slot but free_context (needed later). */
	memset(&s, 0, sizeof(s));
	for (i = 0; i < SNAA44_NUM_OPS; i++) {
		uintptr_t v = SENTINEL(i);

		if (i * sizeof(v) == OPOFF(free_context))
			continue;
		memcpy((char *)&s + i * sizeof(snaa44_unused_op), &v,
		       sizeof(v));
	}
	verbs_set_ops(vctx, &s);

	MV(advise_mr); MV(alloc_dm); MC(alloc_mw); MV(alloc_null_mr);
	MCC(alloc_pd); MV(alloc_parent_domain); MV(alloc_td);
	MV(attach_counters_point_flow); MV(create_counters);
	MCC(async_event); MCC(attach_mcast); MC(bind_mw); MV(close_xrcd);
	MCC(cq_event); MCC(create_ah); MCC(create_cq);
	MVN(create_flow, ibv_create_flow); MV(create_flow_action_esp);
	MCC(create_qp); MV(create_qp_ex); MV(create_rwq_ind_table);
	MCC(create_srq); MV(create_srq_ex); MV(create_wq); MC(dealloc_mw);
	MCC(dealloc_pd); MV(dealloc_td); MV(destroy_counters);
	MCC(dereg_mr); MCC(destroy_ah); MCC(destroy_cq);
	MVN(destroy_flow, ibv_destroy_flow); MV(destroy_flow_action);
	MCC(destroy_qp); MV(destroy_rwq_ind_table); MCC(destroy_srq);
	MV(destroy_wq); MCC(detach_mcast); MV(free_dm); MV(get_srq_num);
	MV(modify_cq); MV(modify_flow_action_esp); MCC(modify_qp);
	MV(modify_qp_rate_limit); MCC(modify_srq); MV(modify_wq);
	MV(open_qp); MV(open_xrcd); MC(poll_cq); MC(post_recv);
	MC(post_send); MV(post_srq_ops); MC(post_srq_recv);
	MV(query_device_ex); MCC(query_qp); MV(query_rt_values);
	MV(read_counters); MCC(query_srq); MV(reg_dm_mr); MCC(reg_mr);
	MC(req_notify_cq); MCC(rereg_mr); MCC(resize_cq);

	result(!mirror_bad && mirror_checked == 63,
	       "installed verbs_set_ops() puts our slots where their names say (%d/%d public mirrors agree)",
	       mirror_checked - mirror_bad, mirror_checked);
}

/*
 * The verbs snaa implements are wired: their public mirrors (filled by
 * the real verbs_set_ops) point into the provider, not at libibverbs'
 * stubs.  free_context and query_port have no mirror; they are exercised
 * by the close and ibv_query_port checks.
 */
static void test_wired_ops(struct verbs_context *vctx)
{
	struct {
		const char *name;
		const void *fn;
	} ops[] = {
#define W(m, f)	{ #m, (const void *)(uintptr_t)(f) }
		W(alloc_mw, vctx->context.ops.alloc_mw),
		W(alloc_pd, vctx->context.ops._compat_alloc_pd),
		W(bind_mw, vctx->context.ops.bind_mw),
		W(create_ah, vctx->context.ops._compat_create_ah),
		W(create_cq, vctx->context.ops._compat_create_cq),
		W(create_qp, vctx->context.ops._compat_create_qp),
		W(dealloc_mw, vctx->context.ops.dealloc_mw),
		W(dealloc_pd, vctx->context.ops._compat_dealloc_pd),
		W(dereg_mr, vctx->context.ops._compat_dereg_mr),
		W(destroy_ah, vctx->context.ops._compat_destroy_ah),
		W(destroy_cq, vctx->context.ops._compat_destroy_cq),
		W(destroy_qp, vctx->context.ops._compat_destroy_qp),
		W(modify_qp, vctx->context.ops._compat_modify_qp),
		W(poll_cq, vctx->context.ops.poll_cq),
		W(post_recv, vctx->context.ops.post_recv),
		W(post_send, vctx->context.ops.post_send),
		W(query_device_ex, vctx->query_device_ex),
		W(query_qp, vctx->context.ops._compat_query_qp),
		W(reg_mr, vctx->context.ops._compat_reg_mr),
		W(req_notify_cq, vctx->context.ops.req_notify_cq),
		W(resize_cq, vctx->context.ops._compat_resize_cq),
#undef W
	};
	Dl_info prov, info;
	size_t i;
	int bad = 0;

	if (!dladdr(reg.ops, &prov)) {
		result(0, "the 21 verbs with a public mirror are wired to the provider (no dladdr)");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!ops[i].fn || !dladdr(ops[i].fn, &info) ||
		    info.dli_fbase != prov.dli_fbase) {
			diag("%s -> %p (%s)", ops[i].name, ops[i].fn,
			     ops[i].fn && dladdr(ops[i].fn, &info) ?
			     info.dli_fname : "?");
			bad++;
		}
	result(!bad && ARRAY_SIZE(ops) == 21,
	       "the %zu verbs with a public mirror are wired to the provider, not to libibverbs' stubs",
	       ARRAY_SIZE(ops));
}

static void test_contexts(const struct verbs_device_ops *ops)
{
	struct ibv_device_attr_ex attr_ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr pattr;
	struct verbs_device *vdev;
	struct ibv_context *ctx, *ctx2;
	struct verbs_context *vctx;
	size_t i;
	int ok, err;

	vdev = ops && ops->alloc_device ? ops->alloc_device(NULL) : NULL;
	ok = vdev != NULL;
	for (i = 0; ok && i < sizeof(*vdev); i++)
		if (((const unsigned char *)vdev)[i])
			ok = 0;
	result(ok, "alloc_device returns a zeroed %zu-byte verbs_device",
	       sizeof(*vdev));
	if (!vdev) {
		while (test_no < NUM_TESTS)
			result(0, "skipped: no device");
		return;
	}
	/* What libibverbs' try_driver() does after alloc_device. */
	vdev->ops = ops;
	atomic_init(&vdev->refcount, 1);
	snprintf(vdev->device.name, sizeof(vdev->device.name), "snaatest0");
	vdev->device.node_type = IBV_NODE_CA;
	vdev->device.transport_type = IBV_TRANSPORT_IB;

	/* Matching kernel: the context opens. */
	ctx = open_fake(vdev, 0, 1, SNAA_ABI_VERSION);
	vctx = ctx ? verbs_get_ctx(ctx) : NULL;
	ok = ctx && kget.calls == 1 &&
	     kget.cmd_size == sizeof(struct ibv_get_context) &&
	     kget.resp_size == sizeof(struct test_get_context_resp) &&
	     vctx && kget.vctx == vctx &&
	     vctx->sz == sizeof(struct verbs_context) &&
	     ctx->device == &vdev->device && refcount(vdev) == 2;
	if (!ok)
		diag("ctx %p errno %d get_context calls %d cmd %zu resp %zu refcount %d",
		     (void *)ctx, errno, kget.calls, kget.cmd_size,
		     kget.resp_size, refcount(vdev));
	result(ok, "verbs_open_device: get_context with %zu-byte cmd and %zu-byte resp, context opened, device held",
	       kget.cmd_size, kget.resp_size);
	if (!ctx) {
		while (test_no < NUM_TESTS)
			result(0, "skipped: no context");
		goto out;
	}

	memset(&kqdev, 0, sizeof(kqdev));
	memset(&attr, 0, sizeof(attr));
	err = ibv_query_device(ctx, &attr);
	ok = !err && kqdev.calls == 1 && kqdev.resp_null &&
	     kqdev.attr_size == sizeof(struct ibv_device_attr) &&
	     attr.vendor_id == FAKE_VENDOR_ID;
	memset(&attr_ex, 0, sizeof(attr_ex));
	err = ibv_query_device_ex(ctx, NULL, &attr_ex);
	ok = ok && !err && kqdev.calls == 2 && kqdev.resp_null &&
	     kqdev.attr_size == sizeof(attr_ex) &&
	     attr_ex.orig_attr.vendor_id == FAKE_VENDOR_ID;
	result(ok, "ibv_query_device{,_ex} -> query_device_ex -> ibv_cmd_query_device_any(resp NULL)");

	memset(&kqport, 0, sizeof(kqport));
	memset(&pattr, 0, sizeof(pattr));
	err = ibv_query_port(ctx, 1, &pattr);
	ok = !err && kqport.calls == 1 && kqport.port == 1 &&
	     kqport.cmd_size == sizeof(struct ibv_query_port) &&
	     pattr.state == IBV_PORT_ACTIVE && pattr.lid == FAKE_LID;
	result(ok, "ibv_query_port -> query_port -> ibv_cmd_query_port(port 1, %zu-byte cmd)",
	       kqport.cmd_size);

	test_wired_ops(vctx);

	/*
	 * ibv_alloc_pd now reaches the provider, which asks the kernel
	 * through the real ibv_cmd_alloc_pd.  With no uverbs file behind
	 * the context (cmd_fd -1) that fails with EBADF, not with the
	 * EOPNOTSUPP of libibverbs' stub for a missing op.
	 */
	errno = 0;
	ok = ibv_alloc_pd(ctx) == NULL && errno == EBADF;
	result(ok, "ibv_alloc_pd reaches the provider and the real ibv_cmd_alloc_pd: without a uverbs file (cmd_fd -1) no PD, errno EBADF (got %d)",
	       errno);

	/* A second context to scribble sentinels into. */
	ctx2 = open_fake(vdev, 0, 1, SNAA_ABI_VERSION);
	if (ctx2) {
		test_ops_layout(verbs_get_ctx(ctx2));
		ibv_close_device(ctx2);
	} else {
		result(0, "installed verbs_set_ops() puts our slots where their names say (no context)");
	}

	ibv_close_device(ctx);
	result(refcount(vdev) == 1,
	       "ibv_close_device -> free_context released the device (refcount %d)",
	       refcount(vdev));

	/* Kernel speaking another snaa ABI. */
	ctx = open_fake(vdev, 0, 1, SNAA_ABI_VERSION + 1);
	err = errno;
	ok = !ctx && err == EPROTO && kget.calls == 1 && refcount(vdev) == 1 &&
	     klog.calls == 1 && klog.level == VERBS_LOG_ERR &&
	     strstr(klog.msg, "ABI") && strstr(klog.msg, "snaatest0");
	if (klog.calls)
		diag("logged: %s", klog.msg);
	result(ok, "kernel ABI %u: open fails with EPROTO, logged at ERR, device released",
	       SNAA_ABI_VERSION + 1);
	if (ctx)
		ibv_close_device(ctx);

	/* Kernel that writes no driver response at all. */
	ctx = open_fake(vdev, 0, 0, 0);
	err = errno;
	result(!ctx && err == EPROTO && refcount(vdev) == 1 &&
	       klog.calls == 1 && klog.level == VERBS_LOG_ERR,
	       "kernel without driver response: open fails with EPROTO, logged, device released");
	if (ctx)
		ibv_close_device(ctx);

	/* get_context itself failing. */
	ctx = open_fake(vdev, EIO, 0, 0);
	err = errno;
	result(!ctx && err == EIO && refcount(vdev) == 1 && klog.calls == 1,
	       "get_context error: open fails with its errno (EIO), device released");
	if (ctx)
		ibv_close_device(ctx);

out:
	ops->uninit_device(vdev);
}

int main(int argc, char **argv)
{
	void *h;

	if (argc != 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: %s /abs/path/libsnaa-rdmav34.so\n",
			argv[0]);
		return 2;
	}

	ktap_plan(NUM_TESTS);

	/* Compile-time: a failing _Static_assert stops the build. */
	result(1, "the rdma-core 44 stand-in's layout asserts hold for this compiler and headers");

	test_elf(argv[1]);
	test_dlmopen(argv[1]);
	h = test_dlopen(argv[1]);
	test_dev_ops(reg.ops);
	test_contexts(reg.ops);

	if (h)
		dlclose(h);
	return test_finish("test_pabi", NUM_TESTS);
}
