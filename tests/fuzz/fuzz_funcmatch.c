/* libFuzzer harness for the function matcher (libtrace/funcmatch.c):
 * patterns, and the kernel's function lists it parses.
 *
 * Input: one flag byte (bit 0: the pattern is a regex; bit 1: the rest
 * is kallsyms, else available_filter_functions), the pattern up to the
 * first newline, then the file. For any bytes: no read outside them
 * (ASan), and every function listed is a non-empty name without blanks
 * that the pattern matches, in strictly increasing name order (sorted,
 * no repeats); after tk_kernel_funcs_addrs succeeds, every address is
 * non-zero and in increasing order. Any violation abort()s.
 *
 *   make fuzz  (fuzz_src_funcmatch in the Makefile)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "funcmatch.h"

/* funcmatch.c looks for tracefs in tk_func_match only; not reached here. */
const char *tk_tracefs_file(const char *name, char *buf, size_t size)
{
	(void)name, (void)buf, (void)size;
	return NULL;
}

static void check(const struct tk_func_list *l, const struct tk_func_pattern *p)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const char *n = l->v[i].name;

		if (!*n || strpbrk(n, " \t\n") || !tk_func_pattern_match(p, n))
			abort();
		if (i && strcmp(l->v[i - 1].name, n) >= 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_func_list l = { 0 };
	struct tk_func_pattern p;
	const uint8_t *nl;
	char path[64], *pat;
	int fd, flags;
	size_t i;

	if (size < 2)
		return 0;
	flags = data[0];
	nl = memchr(data + 1, '\n', size - 1);
	if (!nl)
		return 0;
	pat = strndup((const char *)data + 1, nl - data - 1);
	if (!pat || strlen(pat) != (size_t)(nl - data - 1) ||
	    tk_func_pattern_init(&p, pat, flags & 1, NULL, 0)) {
		free(pat);
		return 0;
	}
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, nl + 1, size - (nl + 1 - data)) < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (flags & 2) {
		if (tk_kernel_funcs_match(&p, NULL, path, path, &l))
			abort();
	} else if (tk_kernel_funcs_match(&p, path, "/nonexistent", NULL, &l)) {
		abort();
	}
	check(&l, &p);
	if ((flags & 2) && !tk_kernel_funcs_addrs(&l, path))
		for (i = 0; i < l.n; i++)
			if (!l.v[i].addr || (i && l.v[i - 1].addr > l.v[i].addr))
				abort();
	tk_func_list_free(&l);
	tk_func_pattern_free(&p);
	close(fd);
	free(pat);
	return 0;
}
