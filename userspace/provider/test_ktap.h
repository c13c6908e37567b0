/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KTAP output for the provider's host tests: one "ok N - ..." or
 * "not ok N - ..." line per check, "# " diagnostics, and a closing
 * check of the count against the plan.  Each test is one translation
 * unit, so the counters live here.
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

#endif /* SNAA_TEST_KTAP_H */
