/* Reading large /proc files (kallsyms: some 200,000 lines) through stdio
 * with a big buffer. procfs gives stdio a 1 KiB block size: a read of
 * kallsyms was 20,000 read() calls, each a point where a busy machine
 * preempts the reader (a tool's usage error took over 60 s so, beside
 * a loaded test suite). */
#ifndef TK_PROCFILE_H
#define TK_PROCFILE_H

#include <stdio.h>

/* fopen(path, "re") with a 256 KiB buffer; close with tk_proc_fclose. */
FILE *tk_proc_fopen(const char *path);
int tk_proc_fclose(FILE *f);

#endif
