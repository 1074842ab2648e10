/* A small strict JSON reader (RFC 8259): the whole text into a tree, or one line saying where
 * it is wrong. For the documents efabench writes itself (info --json, a benchmark's --json). */
#ifndef EB_CORE_JSON_READ_H
#define EB_CORE_JSON_READ_H

#include <stddef.h>

enum eb_jtype { EB_J_NULL, EB_J_BOOL, EB_J_NUM, EB_J_STR, EB_J_ARR, EB_J_OBJ };

struct eb_jv {
	enum eb_jtype type;
	char *key;	   /* its name in the object that holds it, else NULL */
	char *str;	   /* STR: UTF-8, NUL-terminated (an escaped NUL ends it early) */
	double num;	   /* NUM; BOOL: 0 or 1 */
	struct eb_jv *kid; /* ARR, OBJ: the first element or member */
	struct eb_jv *next;
};

/* Parse text[0, len). EB_OK and *root (free with eb_jv_free), or EB_EINVAL with *root NULL
 * and err holding "line L column C: what" (not printed), or EB_ENOMEM. */
int eb_json_parse(const char *text, size_t len, struct eb_jv **root, char *err, size_t errlen);

/* The file at path parsed: EB_OK, or a negative status after one line naming the file. */
int eb_json_load(const char *path, struct eb_jv **root);

void eb_jv_free(struct eb_jv *v);

/* The member key of an object (the first of that name), NULL when v is not an object or has
 * none. */
const struct eb_jv *eb_jv_get(const struct eb_jv *v, const char *key);
/* The member's string, number or boolean; def when absent or of another type. */
const char *eb_jv_str(const struct eb_jv *v, const char *key, const char *def);
double eb_jv_num(const struct eb_jv *v, const char *key, double def);
int eb_jv_bool(const struct eb_jv *v, const char *key, int def);

#endif
