/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal KTAP producer for host unit tests: one line per check,
 * "ok N - name" or "not ok N - name", and a plan at the end.
 */
#ifndef SNAA_KTAP_H
#define SNAA_KTAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct ktap {
	unsigned int n;
	unsigned int failed;
};

static inline void ktap_begin(struct ktap *t, const char *suite)
{
	t->n = 0;
	t->failed = 0;
	printf("KTAP version 1\n# suite: %s\n", suite);
}

static inline void ktap_result(struct ktap *t, int ok, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	if (!ok)
		t->failed++;
	printf("%sok %u - ", ok ? "" : "not ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Prints the plan and returns the process exit status (kselftest: 0/1). */
static inline int ktap_end(struct ktap *t)
{
	printf("1..%u\n# %u passed, %u failed\n", t->n, t->n - t->failed,
	       t->failed);
	return t->failed ? 1 : 0;
}

#define KTAP_EQ(t, got, want, name)					\
	do {								\
		unsigned long long _g = (got), _w = (want);		\
		if (_g != _w)						\
			printf("# %s: got %llu (0x%llx), want %llu (0x%llx)\n", \
			       name, _g, _g, _w, _w);			\
		ktap_result(t, _g == _w, "%s", name);			\
	} while (0)

#endif /* SNAA_KTAP_H */
