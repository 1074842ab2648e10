#include "out.h"
#include "doc.h"
#include "efabench/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
	FILE *f;
	const char *path;
	char line[4096]; /* the line being printed */
	size_t len;
	int code; /* in a code block */
} md;

int eb_out_md(const char *path)
{
	if (path == NULL)
		return EB_OK;
	md.f = eb_out_open(path);
	md.path = path;
	md.len = 0;
	md.code = 0;
	return md.f != NULL ? EB_OK : EB_ESYS;
}

/* A whole line to the copy: table rows as they are, other lines fenced as code. */
static void md_line(const char *s, size_t n)
{
	int table = n > 0 && s[0] == '|';

	if (table && md.code)
		fputs("```\n\n", md.f);
	else if (!table && !md.code)
		fputs("```\n", md.f);
	md.code = !table;
	fwrite(s, 1, n, md.f);
	fputc('\n', md.f);
}

static void md_put(const char *s)
{
	const char *nl;

	while ((nl = strchr(s, '\n')) != NULL) {
		size_t n = (size_t)(nl - s);

		if (md.len + n < sizeof(md.line)) {
			memcpy(md.line + md.len, s, n);
			md.len += n;
		}
		md_line(md.line, md.len);
		md.len = 0;
		s = nl + 1;
	}
	if (*s != '\0' && md.len + strlen(s) < sizeof(md.line)) {
		memcpy(md.line + md.len, s, strlen(s));
		md.len += strlen(s);
	}
}

void eb_voutf(const char *fmt, va_list ap)
{
	char buf[4096];
	va_list copy;

	va_copy(copy, ap);
	vprintf(fmt, ap);
	if (md.f != NULL) {
		vsnprintf(buf, sizeof(buf), fmt, copy);
		md_put(buf);
	}
	va_end(copy);
}

void eb_outf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	eb_voutf(fmt, ap);
	va_end(ap);
}

void eb_out_flush(void)
{
	fflush(stdout);
}

int eb_out_md_close(void)
{
	int rc;

	if (md.f == NULL)
		return EB_OK;
	if (md.len > 0)
		md_line(md.line, md.len);
	if (md.code)
		fputs("```\n", md.f);
	rc = eb_out_close(md.f, md.path);
	memset(&md, 0, sizeof(md));
	return rc;
}
