/* NDJSON output: one object per line. Strings are escaped so that the
 * output is valid JSON and valid UTF-8 for any input bytes: control
 * characters are escaped, and each byte that is not part of a well-formed
 * UTF-8 sequence becomes U+FFFD. */
#ifndef TK_JSON_H
#define TK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TK_JSON_MAX_DEPTH 8

struct tk_json {
	FILE *f;
	int depth;
	bool need_comma[TK_JSON_MAX_DEPTH];
};

/* Write s[0..len) as a quoted JSON string. */
void tk_json_write_string(FILE *f, const char *s, size_t len);

/* Length of the well-formed UTF-8 sequence at s (1..4), 0 if it is not one. */
size_t tk_utf8_seq_len(const unsigned char *s, size_t avail);

/* Start and end one record (a line). */
void tk_json_begin(struct tk_json *j, FILE *f);
void tk_json_end(struct tk_json *j);

/* Members. key is NULL for array elements. */
void tk_json_str(struct tk_json *j, const char *key, const char *s);
void tk_json_strn(struct tk_json *j, const char *key, const char *s, size_t n);
void tk_json_int(struct tk_json *j, const char *key, long long v);
void tk_json_uint(struct tk_json *j, const char *key, unsigned long long v);
void tk_json_double(struct tk_json *j, const char *key, double v);
void tk_json_bool(struct tk_json *j, const char *key, bool v);
void tk_json_null(struct tk_json *j, const char *key);
void tk_json_obj_open(struct tk_json *j, const char *key);
void tk_json_obj_close(struct tk_json *j);
void tk_json_arr_open(struct tk_json *j, const char *key);
void tk_json_arr_close(struct tk_json *j);

#endif
