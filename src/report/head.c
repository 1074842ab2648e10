#include "out.h"
#include "head.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRAP 100

void eb_head_fact(struct eb_head *h, const char *label, const char *fmt, ...)
{
	struct eb_fact *f;
	char value[1024];
	va_list ap;

	if (h->n == h->cap) {
		int cap = h->cap ? 2 * h->cap : 32;
		struct eb_fact *grown = realloc(h->f, sizeof(*grown) * (size_t)cap);

		if (grown == NULL) {
			h->oom = 1;
			return;
		}
		h->f = grown;
		h->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	f = &h->f[h->n];
	f->label = strdup(label != NULL ? label : "");
	f->value = strdup(value);
	if (f->label == NULL || f->value == NULL) {
		free(f->label);
		free(f->value);
		h->oom = 1;
		return;
	}
	f->brk = h->brk || h->n == 0;
	h->brk = 0;
	h->n++;
}

void eb_head_break(struct eb_head *h)
{
	h->brk = 1;
}

void eb_head_print(const struct eb_head *h)
{
	int i, col = 0;

	for (i = 0; i < h->n; i++) {
		const struct eb_fact *f = &h->f[i];
		int len = (int)(strlen(f->label) + strlen(f->value)) + (f->label[0] ? 4 : 2);

		if (f->label[0] == '\0' && f->value[0] == '\0') { /* a blank line between parts */
			eb_outf("%s#\n", col ? "\n" : "");
			col = 0;
			continue;
		}
		if (col > 0 && (f->brk || col + len > WRAP)) {
			eb_outf("\n");
			col = 0;
		}
		if (col == 0) {
			eb_outf("#");
			col = 1;
		}
		eb_outf(f->label[0] ? "%s %s: %s" : "%s %s%s", col > 1 ? " " : "", f->label,
			f->value);
		col += len;
	}
	if (col > 0)
		eb_outf("\n");
	eb_out_flush();
}

void eb_head_free(struct eb_head *h)
{
	int i;

	for (i = 0; i < h->n; i++) {
		free(h->f[i].label);
		free(h->f[i].value);
	}
	free(h->f);
	memset(h, 0, sizeof(*h));
}
