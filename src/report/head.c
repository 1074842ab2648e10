#include "head.h"

#include <stdarg.h>
#include <stdio.h>

void eb_head_fact(struct eb_head *h, const char *label, const char *fmt, ...)
{
	struct eb_head_line *l;
	struct eb_fact *f;
	va_list ap;

	if (h->n == 0 || h->line[h->n - 1].n == EB_HEAD_FACTS) {
		if (h->n == EB_HEAD_LINES)
			return;
		h->line[h->n++].n = 0;
	}
	l = &h->line[h->n - 1];
	f = &l->fact[l->n++];
	snprintf(f->label, sizeof(f->label), "%s", label != NULL ? label : "");
	va_start(ap, fmt);
	vsnprintf(f->value, sizeof(f->value), fmt, ap);
	va_end(ap);
}

void eb_head_break(struct eb_head *h)
{
	if (h->n < EB_HEAD_LINES && (h->n == 0 || h->line[h->n - 1].n > 0))
		h->line[h->n++].n = 0;
}

void eb_head_print(const struct eb_head *h)
{
	int i, k;

	for (i = 0; i < h->n; i++) {
		const struct eb_head_line *l = &h->line[i];

		if (l->n == 0)
			continue;
		if (l->n == 1 && l->fact[0].label[0] == '\0' && l->fact[0].value[0] == '\0') {
			printf("#\n"); /* a blank line between parts */
			continue;
		}
		printf("#");
		for (k = 0; k < l->n; k++)
			printf(l->fact[k].label[0] ? "%s %s: %s" : "%s %s%s", k ? " " : "",
			       l->fact[k].label, l->fact[k].value);
		printf("\n");
	}
	fflush(stdout);
}
