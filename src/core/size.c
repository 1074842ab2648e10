#include "efabench/size.h"
#include "efabench/status.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eb_size_parse(const char *text, uint64_t *bytes)
{
	const char *p = text;
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (text == NULL || !isdigit((unsigned char)*p))
		return EB_EINVAL; /* rejects "", "-1", "+5", " 5" */
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno != 0)
		return EB_EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		end++;
		break;
	case 'M':
		shift = 20;
		end++;
		break;
	case 'G':
		shift = 30;
		end++;
		break;
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (shift != 0 && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
		end += 2;
	else if (end[0] == 'B' || end[0] == 'b')
		end++;
	if (*end != '\0' || v == 0)
		return EB_EINVAL;
	if (shift != 0 && v > (UINT64_MAX >> shift))
		return EB_EINVAL;
	*bytes = (uint64_t)v << shift;
	return EB_OK;
}

int eb_count_parse(const char *text, long min, long *value)
{
	long v;
	char *end;

	if (text == NULL || !(isdigit((unsigned char)text[0]) || text[0] == '-'))
		return EB_EINVAL;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > 0x7fffffffL || v < -0x7fffffffL - 1)
		return EB_EINVAL;
	*value = v;
	return EB_OK;
}

const char *eb_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		unsigned shift = 10u * (unsigned)(i + 1);

		if (bytes != 0 && (bytes & ((1ull << shift) - 1)) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes >> shift),
				 suffix[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
	return buf;
}

int eb_size_sweep(uint64_t begin, uint64_t end, uint64_t factor, uint64_t *sizes, int max)
{
	uint64_t s = begin;
	int n = 0;

	if (begin == 0 || begin > end || factor < 2 || max < 1)
		return EB_EINVAL;
	for (;;) {
		if (n == max)
			return EB_EINVAL;
		sizes[n++] = s;
		if (s > end / factor)
			break;
		s *= factor;
	}
	if (sizes[n - 1] != end) {
		if (n == max)
			return EB_EINVAL;
		sizes[n++] = end;
	}
	return n;
}
