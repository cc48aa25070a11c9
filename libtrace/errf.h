/* For functions that explain a failure to their caller in a buffer of
 * its own (funcmatch.c, functarget.c): apart from setup.c so that the
 * fuzz harnesses link it alone. */
#ifndef TK_ERRF_H
#define TK_ERRF_H

#include <stddef.h>

/* The message into err (len bytes; NULL: none); returns ret. */
int tk_errf(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
