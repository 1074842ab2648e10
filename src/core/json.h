/* A small streaming JSON writer: it tracks commas and escapes strings, nothing more. */
#ifndef EB_CORE_JSON_H
#define EB_CORE_JSON_H

#include <stdint.h>
#include <stdio.h>

struct eb_json {
	FILE *f;
	int depth;
	int need_comma[32];
};

void eb_json_init(struct eb_json *j, FILE *f);
void eb_json_obj_begin(struct eb_json *j, const char *key);
void eb_json_obj_end(struct eb_json *j);
void eb_json_arr_begin(struct eb_json *j, const char *key);
void eb_json_arr_end(struct eb_json *j);
void eb_json_str(struct eb_json *j, const char *key, const char *value);
void eb_json_int(struct eb_json *j, const char *key, long long value);
/* Non-finite numbers are written as null so the output stays valid JSON. */
void eb_json_num(struct eb_json *j, const char *key, double value);
void eb_json_bool(struct eb_json *j, const char *key, int value);
void eb_json_null(struct eb_json *j, const char *key);

#endif
