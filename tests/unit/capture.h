/* Capture what a function prints to a FILE, for the unit tests. Include
 * after <cmocka.h>. */
#ifndef TK_TEST_CAPTURE_H
#define TK_TEST_CAPTURE_H

#include <stdio.h>
#include <string.h>

struct cap {
	FILE *f;
	char *buf;
	size_t len;
};

static inline void cap_open(struct cap *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

/* Close and check that the output holds no NUL byte (escaped output never
 * does), so it can be compared as a C string. Caller frees. */
static inline char *cap_close(struct cap *c)
{
	assert_int_equal(fclose(c->f), 0);
	assert_non_null(c->buf);
	assert_int_equal(strlen(c->buf), c->len);
	return c->buf;
}

#endif
