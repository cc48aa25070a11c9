/* A tracepoint's fields, from its tracefs format file: the kernel's own
 * layout of the record a classic tracepoint program sees (tplist -v
 * prints them; trace reads them). */
#ifndef TK_TPFORMAT_H
#define TK_TPFORMAT_H

#include <stdbool.h>

struct tk_tp_field {
	char type[256];   /* "unsigned int", "struct hrtimer *",
			   * "__data_loc char[]" */
	char name[128];
	char array[32];   /* "[16]" of "char comm[16]"; "" */
	long offset, size;
	bool is_signed;
};

/* One "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line into f;
 * false for any other line. */
bool tk_tp_field_parse(const char *line, struct tk_tp_field *f);

/* The fields of CATEGORY:EVENT, common_* left out, into *fields (freed by
 * the caller). Returns how many, or -errno (tracefs mounted when
 * missing; -ENOENT: no such tracepoint). */
int tk_tp_fields(const char *category, const char *event, struct tk_tp_field **fields);

#endif
