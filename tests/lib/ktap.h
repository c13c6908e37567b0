/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KTAP output for every host test program (tests/unit and userspace/):
 * one "ok N - ..." or "not ok N - ..." line per check and "# "
 * diagnostics.  A program with a fixed number of checks prints its plan
 * first (ktap_plan()) and ends with test_finish(), which fails if the
 * count differs; one whose count depends on its input (vector files)
 * starts with ktap_header() and ends with ktap_finish(), which prints
 * the plan last.  Each test program is one translation unit, so the
 * counters live here.
 */
#ifndef SNAA_TEST_KTAP_H
#define SNAA_TEST_KTAP_H

#include <stdarg.h>
#include <stdio.h>

static unsigned int test_no, test_failed;

__attribute__((format(printf, 2, 3)))
static inline void result(int ok, const char *fmt, ...)
{
	va_list ap;

	if (!ok)
		test_failed++;
	printf("%sok %u - ", ok ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The header and the plan of @plan checks, first. */
static inline void ktap_plan(unsigned int plan)
{
	printf("KTAP version 1\n1..%u\n", plan);
}

/* The header of a run whose plan comes last (ktap_finish()). */
static inline void ktap_header(const char *suite)
{
	printf("KTAP version 1\n# suite: %s\n", suite);
}

/*
 * Fail if the number of checks run differs from @plan, print the
 * summary, and return the exit status (0 iff every check passed).
 */
static inline int test_finish(const char *name, unsigned int plan)
{
	if (test_no != plan)
		result(0, "ran %u checks, plan says %u", test_no, plan);
	printf("# %s: %u passed, %u failed\n", name, test_no - test_failed,
	       test_failed);
	return test_failed ? 1 : 0;
}

/* The plan (the number of checks run) and the summary, last. */
static inline int ktap_finish(void)
{
	printf("1..%u\n# %u passed, %u failed\n", test_no,
	       test_no - test_failed, test_failed);
	return test_failed ? 1 : 0;
}

/* A check that two integers are equal, both printed if they are not. */
#define KTAP_EQ(got, want, name)					\
	do {								\
		unsigned long long _g = (got), _w = (want);		\
		if (_g != _w)						\
			diag("%s: got %llu (0x%llx), want %llu (0x%llx)", \
			     name, _g, _g, _w, _w);			\
		result(_g == _w, "%s", name);				\
	} while (0)

#endif /* SNAA_TEST_KTAP_H */
