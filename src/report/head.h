/* A run's header as data: lines of labelled facts ("provider: shm") that the report layer
 * prints as "# label: value  label: value", so benchmarks hand over values and never print. */
#ifndef EB_REPORT_HEAD_H
#define EB_REPORT_HEAD_H

#define EB_HEAD_LINES 16
#define EB_HEAD_FACTS 8

struct eb_fact {
	char label[64];
	char value[320];
};

struct eb_head_line {
	struct eb_fact fact[EB_HEAD_FACTS];
	int n;
};

struct eb_head {
	struct eb_head_line line[EB_HEAD_LINES];
	int n;
};

/* A fact on the current line (a new line when none is open); the value printf-style. */
void eb_head_fact(struct eb_head *h, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Close the current line: the next fact starts a new one. */
void eb_head_break(struct eb_head *h);
/* Print every line as "# label: value  label: value" (a fact without label: its value). */
void eb_head_print(const struct eb_head *h);

#endif
