/* tracekit's one version, for every tool's --version. */
#ifndef TK_VERSION_H
#define TK_VERSION_H

#include <argp.h>
#include <stdio.h>

extern const char tk_version[];

/* "PROGRAM VERSION" and the libbpf linked in (statically). */
void tk_version_print(FILE *f, const char *program);

/* argp_program_version_hook: "TOOL (tracekit) VERSION" and the libbpf
 * the tool was built with, which is linked in statically. */
void tk_version_hook(FILE *f, struct argp_state *state);

#endif
