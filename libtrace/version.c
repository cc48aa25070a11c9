#include "version.h"

#include <bpf/libbpf.h>

#include "setup.h"

#ifndef TK_VERSION
#error "TK_VERSION comes from the Makefile's VERSION"
#endif

const char tk_version[] = TK_VERSION;

void tk_version_hook(FILE *f, struct argp_state *state)
{
	(void)state;
	fprintf(f, "%s (tracekit) %s\nlibbpf %u.%u\n", tk_tool_name(), tk_version,
		libbpf_major_version(), libbpf_minor_version());
}
