/* libFuzzer target: the size parser (eb_size_parse) and its friends eb_count_parse and
 * eb_size_format. Properties: nothing crashes; an accepted size is at least 1 byte, formats to
 * at most 23 characters, and that spelling parses back to the same number and formats the same
 * again; an accepted count is within its bounds. */
#include "efabench/size.h"
#include "efabench/status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, buf[24], again[24];
	uint64_t v, w;
	long c;

	if (size > 4096)
		return -1; /* not worth the time: the parser reads one word */
	/* An exact-size copy, so that ASan sees any read past the terminator. */
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (eb_size_parse(text, &v) == EB_OK) {
		if (v == 0)
			abort();
		eb_size_format(v, buf, sizeof(buf));
		if (strlen(buf) >= sizeof(buf) - 1)
			abort();
		if (eb_size_parse(buf, &w) != EB_OK || w != v)
			abort();
		if (strcmp(eb_size_format(w, again, sizeof(again)), buf) != 0)
			abort();
	}
	/* Formatting is total: any 64-bit value, including those no parse yields. */
	if (size >= 8) {
		memcpy(&v, data, 8);
		eb_size_format(v, buf, sizeof(buf));
		if (v != 0 && (eb_size_parse(buf, &w) != EB_OK || w != v))
			abort();
	}
	if (eb_count_parse(text, 1, &c) == EB_OK && (c < 1 || c > 0x7fffffffL))
		abort();
	if (eb_count_parse(text, -5, &c) == EB_OK && (c < -5 || c > 0x7fffffffL))
		abort();
	free(text);
	return 0;
}
