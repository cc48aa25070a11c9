#include "version.h"

#include <bpf/libbpf.h>
#include <string.h>

#include "setup.h"

#ifndef TK_VERSION
#error "TK_VERSION comes from the Makefile's VERSION"
#endif

const char tk_version[] = TK_VERSION;

void tk_version_hook(FILE *f, struct argp_state *state)
{
	const char *name = tk_tool_name();

	(void)state;
	if (!strcmp(name, "tracekit"))  /* the front command */
		fprintf(f, "tracekit %s\n", tk_version);
	else
		fprintf(f, "%s (tracekit) %s\n", name, tk_version);
	fprintf(f, "libbpf %u.%u\n", libbpf_major_version(), libbpf_minor_version());
}
