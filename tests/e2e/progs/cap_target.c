/* capable's workload: names itself NAME, opens (creating) FILE, prints
 * "ready", then for each line of stdin answers "done" once it has made
 * that line's calls:
 *   chown N   N fchown() calls of FILE, each to another owner (65534 when
 *             root owns it, else 0): each is a CAP_CHOWN check, allowed
 *             for root, denied after drop
 *   drop      setresgid() and setresuid() to 65534: a CAP_SETGID and a
 *             CAP_SETUID check (allowed), and no capability after them
 *   seccomp   asks to install an allow-all seccomp filter without
 *             no_new_privs: a CAP_SYS_ADMIN check made not to be audited
 *             (ns_capable_noaudit), denied (EACCES) after drop
 * stdio works in static buffers: no allocation (no brk, no mmap: each a
 * check of its own) after "ready".
 * fchown is made by an instruction in chown_as_told(), so that the
 * function is the innermost frame of the check's user stack. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "raw_syscall.h"

#define NOBODY 65534

__attribute__((noinline)) long chown_as_told(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	return raw_syscall3(SYS_fchown, fd, st.st_uid == 0 ? NOBODY : 0, -1);
}

int main(int argc, char **argv)
{
	char line[64];
	int fd, n;

	if (argc != 3) {
		fprintf(stderr, "usage: cap_target NAME FILE\n");
		return 100;
	}
	static char inbuf[4096], outbuf[4096];

	setvbuf(stdin, inbuf, _IOFBF, sizeof(inbuf));
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	prctl(PR_SET_NAME, argv[1], 0, 0, 0);
	fd = open(argv[2], O_RDONLY | O_CREAT, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "chown %d", &n) == 1) {
			int denied = 0;

			for (int i = 0; i < n; i++)
				denied += chown_as_told(fd) != 0;
			printf("done %d\n", denied);
		} else if (!strcmp(line, "drop\n")) {
			if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY)) {
				perror("drop");
				return 1;
			}
			printf("done\n");
		} else if (!strcmp(line, "seccomp\n")) {
			struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			struct sock_fprog prog = { .len = 1, .filter = &allow };

			printf("done %ld\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ?
			       (long)errno : 0L);
		} else {
			fprintf(stderr, "cap_target: bad command %s", line);
			return 100;
		}
		fflush(stdout);
	}
	return 0;
}
