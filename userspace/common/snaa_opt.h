/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snaa_opt - the command line helpers of every snaa tool and test
 * program (naa-*, wcubuf-*, the selftests' programs, bench/).
 *
 * Every function that rejects an argument prints
 *
 *     PROGRAM: WHAT IS WRONG
 *     Try 'PROGRAM --help'.
 *
 * on stderr and exits with OPT_EXIT_USAGE; PROGRAM is the name the
 * program was started under (program_invocation_short_name).
 */
#ifndef SNAA_OPT_H
#define SNAA_OPT_H

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
 * one that lacks its argument: a usage error.  Programs whose options
 * have one-letter vals start the option string with ':' so that a
 * missing argument is told from an unknown option.  Does not return.
 */
void opt_help_or_error(int c, char **argv, void (*usage)(FILE *f))
	__attribute__((noreturn));

/* Reject operands: argv[optind] and later, if there are any. */
void opt_no_operands(int argc, char **argv);

/* A decimal integer in min..max; name is the option, for the message. */
int opt_int(const char *name, const char *s, int min, int max);

/* An unsigned number in C notation (12, 0x1f, 017) up to max; no sign. */
uint64_t opt_u64(const char *name, const char *s, uint64_t max);

/*
 * A byte count in min..max: a number in C notation with an optional
 * binary suffix K, M or G (2^10, 2^20, 2^30; k, m, g too), optionally
 * followed by "iB" or "B": 4096, 0x1000, 4K, 4KiB, 2M.
 */
uint64_t opt_size(const char *name, const char *s, uint64_t min, uint64_t max);

/* A signed number in C notation in lo..hi. */
long opt_long(const char *name, const char *s, long lo, long hi);

/*
 * Call fn(token, ctx) for each token of the comma-separated list arg
 * (empty tokens are skipped); what names the option in messages.  The
 * list is copied to the stack first, so fn may exit.
 */
void opt_list(const char *arg, const char *what,
	      void (*fn)(const char *tok, void *ctx), void *ctx);

#endif /* SNAA_OPT_H */
