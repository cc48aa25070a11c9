#include "version.h"

#include <bpf/libbpf.h>

#include "setup.h"

#ifndef TK_VERSION
#error "TK_VERSION comes from the Makefile's VERSION"
#endif

const char tk_version[] = TK_VERSION;

void tk_version_print(FILE *f, const char *program)
{
	fprintf(f, "%s %s\nlibbpf %u.%u\n", program, tk_version,
		libbpf_major_version(), libbpf_minor_version());
}

void tk_version_hook(FILE *f, struct argp_state *state)
{
	char program[128];

	(void)state;
	snprintf(program, sizeof(program), "%s (tracekit)", tk_tool_name());
	tk_version_print(f, program);
}
