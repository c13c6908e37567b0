/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A stand-in for libibverbs' __verbs_log() for the provider's host
 * test, which binds the provider to itself instead of libibverbs: it
 * records the calls, the level and the last message (its first line).
 * Include it from one translation unit, after <infiniband/driver.h>.
 */
#ifndef SNAA_TEST_VLOG_H
#define SNAA_TEST_VLOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
	int calls;
	uint32_t level;
	char msg[512];
} klog;

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
{
	va_list ap;

	(void)ctx;
	klog.calls++;
	klog.level = level;
	va_start(ap, fmt);
	vsnprintf(klog.msg, sizeof(klog.msg), fmt, ap);
	va_end(ap);
	klog.msg[strcspn(klog.msg, "\n")] = 0;
}

static inline void log_reset(void)
{
	memset(&klog, 0, sizeof(klog));
}

#endif /* SNAA_TEST_VLOG_H */
