/* Unit tests that need files: a temporary directory for the group
 * (tmpdir_setup / tmpdir_teardown as cmocka's group fixtures) and the
 * path of the test binary itself (an ELF file to read). The including
 * file defines TMPDIR_TEMPLATE ("/tmp/tk-NAME-XXXXXX") first. */
#ifndef TK_TESTS_TMPDIR_H
#define TK_TESTS_TMPDIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char self[PATH_MAX];
static char tmpdir[] = TMPDIR_TEMPLATE;

static int tmpdir_setup(void **state)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (n <= 0 || !mkdtemp(tmpdir))
		return -1;
	self[n] = 0;
	return 0;
}

static int tmpdir_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

#endif
