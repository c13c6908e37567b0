/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers shared by naa-server and naa-client. */
#ifndef NAA_TOOL_H
#define NAA_TOOL_H

#include <stdint.h>
#include <stdlib.h>

/* "123", "4K", "64M", "1G" (binary units); -1 if invalid. */
static inline long long naa_parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	return *end || v > (1ULL << 40) ? -1 : (long long)v;
}

#endif /* NAA_TOOL_H */
