#include "procfile.h"

#include <stdlib.h>

#define PROC_BUF (256 * 1024)

/* The buffer of each open file, freed at its close. Few are open at once
 * (kallsyms, while a tool starts); beyond MAX_OPEN, stdio's own buffer. */
#define MAX_OPEN 8
static struct {
	FILE *f;
	char *buf;
} open_files[MAX_OPEN];

FILE *tk_proc_fopen(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;

	if (!f)
		return NULL;
	for (int i = 0; i < MAX_OPEN; i++) {
		if (open_files[i].f)
			continue;
		if ((buf = malloc(PROC_BUF)) && !setvbuf(f, buf, _IOFBF, PROC_BUF)) {
			open_files[i].f = f;
			open_files[i].buf = buf;
		} else {
			free(buf);
		}
		break;
	}
	return f;
}

int tk_proc_fclose(FILE *f)
{
	int err = fclose(f);

	for (int i = 0; i < MAX_OPEN; i++)
		if (open_files[i].f == f) {
			free(open_files[i].buf);
			open_files[i].f = NULL;
			open_files[i].buf = NULL;
			break;
		}
	return err;
}
