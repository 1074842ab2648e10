/* A run's header as data: labelled facts ("provider: shm") in lines that the report layer
 * prints as "# label: value  label: value", wrapping long lines, so that benchmarks hand over
 * values and never print. */
#ifndef EB_REPORT_HEAD_H
#define EB_REPORT_HEAD_H

struct eb_fact {
	char *label; /* "" for a value without label */
	char *value;
	int brk; /* a new line starts before this fact */
};

struct eb_head {
	struct eb_fact *f;
	int n, cap;
	int brk; /* the next fact starts a new line */
	int oom;
};

/* A fact on the current line; the value printf-style (label NULL: the value alone). */
void eb_head_fact(struct eb_head *h, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Close the current line: the next fact starts a new one. */
void eb_head_break(struct eb_head *h);
/* Print every line as "# label: value  label: value", a line wrapped before a fact that would
 * take it past 100 columns. */
void eb_head_print(const struct eb_head *h);
void eb_head_free(struct eb_head *h);

#endif
