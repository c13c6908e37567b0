/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * opt_util - command line helpers of the snaa selftest programs
 * (uc_test, verbs_test, uc_netem, uc_target, rawpkt).
 *
 * Every function that rejects an argument prints
 *
 *     PROGRAM: WHAT IS WRONG
 *     Try 'PROGRAM --help'.
 *
 * on stderr and exits with OPT_EXIT_USAGE; PROGRAM is the name the
 * program was started under (program_invocation_short_name).
 */
#ifndef SNAA_SELFTEST_OPT_UTIL_H
#define SNAA_SELFTEST_OPT_UTIL_H

#include <stdint.h>
#include <stdio.h>

#define OPT_EXIT_USAGE	2	/* exit status for a usage error */

/* Report a usage error (printf format) and exit. */
void opt_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/*
 * The end of every getopt_long() switch (run with opterr = 0, so that
 * messages have the format above): c is 'h' (--help): usage(stdout) and
 * exit 0; else c is what getopt_long() returned for an unknown option or
 * one that lacks its argument: a usage error.  Does not return.
 */
void opt_help_or_error(int c, char **argv, void (*usage)(FILE *f))
	__attribute__((noreturn));

/* Reject operands: argv[optind] and later, if there are any. */
void opt_no_operands(int argc, char **argv);

/* A decimal integer in min..max; name is the option, for the message. */
int opt_int(const char *name, const char *s, int min, int max);

/* An unsigned number in C notation (12, 0x1f, 017) up to max; no sign. */
uint64_t opt_u64(const char *name, const char *s, uint64_t max);

/* A signed number in C notation in lo..hi. */
long opt_long(const char *name, const char *s, long lo, long hi);

/*
 * Call fn(token, ctx) for each token of the comma-separated list arg
 * (empty tokens are skipped); what names the option in messages.  The
 * list is copied to the stack first, so fn may exit.
 */
void opt_list(const char *arg, const char *what,
	      void (*fn)(const char *tok, void *ctx), void *ctx);

#endif /* SNAA_SELFTEST_OPT_UTIL_H */
