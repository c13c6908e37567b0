/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vu_harness - named tests with the kernel's kselftest_harness for the
 * snaa test programs that check many things per test (verbs_test,
 * rc_test): the program parses its own command line (devices, --tests),
 * then runs the harness, which forks each TEST_F into a process of its
 * own.  A test's individual checks (vu_report()) are a KTAP subtest,
 * indented, before the harness's result line "ok N FIXTURE.TEST".
 *
 * kselftest_harness.h comes from the kernel: the selftests directory of
 * a kernel tree, else the installed linux-source tarball (Makefile).
 * Only its documented macros are used, so that any kernel's works.
 * Include this header in one file of a program only.
 */
#ifndef SNAA_SELFTEST_VU_HARNESS_H
#define SNAA_SELFTEST_VU_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "verbs_util.h"

/* the kernel's harness is not written for -Wextra */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/* --tests LIST: the names of the tests to run (comma-separated); NULL: all */
static const char *vu_tests;

/* The names of the program's tests, "FIXTURE.TEST" (VU_NAMED). */
#define VU_MAX_NAMES	128
static const char *vu_names[VU_MAX_NAMES];
static unsigned int vu_n_names;

static inline void vu_register_name(const char *name)
{
	if (vu_n_names < VU_MAX_NAMES)
		vu_names[vu_n_names++] = name;
}

/*
 * Next to each TEST_F: its name, for checking --tests.  (A variant does
 * not count: --tests names a test of every variant.)
 */
#define VU_NAMED(fixture, test)						\
	static void __attribute__((constructor))			\
	vu_name_##fixture##_##test(void)				\
	{								\
		vu_register_name(#fixture "." #test);			\
	}

/*
 * Is test @name ("FIXTURE.TEST") selected by --tests?  A test that is not
 * is skipped (the kernel 6.1 harness cannot select tests itself).
 */
static inline bool vu_test_selected(const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!vu_tests)
		return true;
	for (p = vu_tests; (p = strstr(p, name)); p += n)
		if ((p == vu_tests || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/*
 * In a TEST_F, first: skip the test unless --tests selects @name.  The
 * reason "not selected (--tests)" marks it as not run at all: make
 * check counts such a line neither as a pass nor as a skipped test.
 */
#define VU_SELECT(name) do {						\
		if (!vu_test_selected(name))				\
			SKIP(return, "not selected (--tests)");		\
	} while (0)

/*
 * In a TEST_F: run @call (which reports its checks with vu_report()) as
 * a subtest, and fail the test if one of its checks failed.
 */
#define VU_CHECKS(call) do {						\
		vu_ktap_subtest();					\
		call;							\
		vu_diag_flush();					\
		EXPECT_EQ(0U, vu_failed());				\
	} while (0)

/*
 * First thing in main(): stdout line by line.  The harness forks each
 * test; a line still in the parent's buffer would be printed again by
 * the child.
 */
static inline void vu_harness_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/*
 * Run every registered test; the harness prints TAP and exits.  Its own
 * options are not passed on: the program's command line is its own.
 */
static inline int vu_harness_run(char *argv0)
{
	char *argv[] = { argv0, NULL };
	const char *p = vu_tests, *e;
	unsigned int i;

	/* every name --tests gives must be one of ours: else exit 2 */
	while (p && *p) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		for (i = 0; i < vu_n_names; i++)
			if (strlen(vu_names[i]) == (size_t)(e - p) &&
			    !strncmp(vu_names[i], p, (size_t)(e - p)))
				break;
		if (i == vu_n_names) {
			fprintf(stderr, "%s: --tests: no test named '%.*s'; "
				"the tests:", argv0, (int)(e - p), p);
			for (i = 0; i < vu_n_names; i++)
				fprintf(stderr, " %s", vu_names[i]);
			fputc('\n', stderr);
			return 2;
		}
		p = *e ? e + 1 : e;
	}
	fflush(stdout);
	fflush(stderr);
	return test_harness_run(1, argv);
}

#endif /* SNAA_SELFTEST_VU_HARNESS_H */
