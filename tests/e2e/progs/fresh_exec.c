/* Exec argv[1] with one more argument, MARKER, whose bytes sit in a page
 * of this binary that nothing has touched before the exec: 4 MiB of
 * padding on each side keeps it beyond the kernel's fault-around window.
 * A tracer that reads argv from the caller at sys_enter_execve cannot
 * read that page (BPF cannot fault it in); execsnoop must still show it. */
#include <stdio.h>
#include <unistd.h>

#ifndef MARKER
#error "build with -DMARKER='\"...\"'"
#endif

static const struct {
	char pad_before[4 << 20];
	char marker[128];
	char pad_after[4 << 20];
} blob = { .pad_before = { 1 }, .marker = MARKER, .pad_after = { 1 } };

int main(int argc, char **argv)
{
	char *const args[] = { argv[1], (char *)blob.marker, NULL };

	if (argc < 2)
		return 2;
	execv(argv[1], args);
	perror("execv");
	return 1;
}
