// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa_opt - the command line helpers of every snaa tool; see
 * snaa_opt.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snaa_opt.h"

void opt_usage_error(const char *fmt, ...)
{
	const char *prog = program_invocation_short_name;
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(OPT_EXIT_USAGE);
}

void opt_help_or_error(int c, char **argv, void (*usage)(FILE *f))
{
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	/*
	 * An option that lacks its argument: getopt_long() returns ':' if
	 * the option string starts with ':', else it sets optopt to the
	 * option's val, which is >= 256 for long-only options.
	 */
	if (c == ':' || optopt >= 256)
		opt_usage_error("option '%s' needs an argument",
				argv[optind - 1]);
	if (optopt)
		opt_usage_error("unknown option '-%c'", optopt);
	opt_usage_error("unknown option '%s'", argv[optind - 1]);
}

void opt_no_operands(int argc, char **argv)
{
	if (optind < argc)
		opt_usage_error("unexpected argument '%s'", argv[optind]);
}

int opt_int(const char *name, const char *s, int min, int max)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || e == s || *e || v < min || v > max)
		opt_usage_error("%s: bad value '%s' (want %d..%d)", name, s,
				min, max);
	return (int)v;
}

uint64_t opt_u64(const char *name, const char *s, uint64_t max)
{
	unsigned long long v;
	char *e;

	errno = 0;
	if (!*s || *s == '-')
		opt_usage_error("%s: bad number '%s'", name, s);
	v = strtoull(s, &e, 0);
	if (errno || *e || v > max)
		opt_usage_error("%s: bad number or out of range: '%s' (at most "
				"%llu)", name, s, (unsigned long long)max);
	return v;
}

uint64_t opt_size(const char *name, const char *s, uint64_t min, uint64_t max)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *e;

	errno = 0;
	v = *s && *s != '-' ? strtoull(s, &e, 0) : 0;
	if (!*s || *s == '-' || e == s || errno)
		opt_usage_error("%s: bad size '%s' (a number, optionally with "
				"K, M or G)", name, s);
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	}
	if (shift && e[0] == 'i' && e[1] == 'B')
		e += 2;
	else if (*e == 'B')
		e++;
	if (*e)
		opt_usage_error("%s: bad size '%s' (a number, optionally with "
				"K, M or G)", name, s);
	if (v > max >> shift || v << shift < min || v << shift > max)
		opt_usage_error("%s: size '%s' out of range (%llu..%llu bytes)",
				name, s, (unsigned long long)min,
				(unsigned long long)max);
	return v << shift;
}

long opt_long(const char *name, const char *s, long lo, long hi)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 0);
	if (errno || !*s || *e || v < lo || v > hi)
		opt_usage_error("%s: bad number or out of range: '%s' (want "
				"%ld..%ld)", name, s, lo, hi);
	return v;
}

void opt_list(const char *arg, const char *what,
	      void (*fn)(const char *tok, void *ctx), void *ctx)
{
	/* no heap copy: fn may exit through opt_usage_error() */
	char copy[1024], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(copy))
		opt_usage_error("%s: list too long", what);
	strcpy(copy, arg);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		fn(tok, ctx);
}
