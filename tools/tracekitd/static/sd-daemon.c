// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sd_notify() and sd_watchdog_enabled() for the static tracekitd.
 *
 * Debian ships libsystemd only as a shared library, so `make STATIC=1`
 * links these two instead. They speak the protocol sd_notify(3) documents
 * as stable for exactly this purpose ("the protocol may be reimplemented"):
 * one datagram of NEWLINE-separated assignments to the AF_UNIX socket
 * named by $NOTIFY_SOCKET (a path, or @name for the abstract namespace),
 * and $WATCHDOG_USEC / $WATCHDOG_PID for the watchdog. The vsock:
 * addresses of systemd 253 and later (notify from a VM to its host) are
 * not supported: tracekitd is notified by the systemd of its own machine.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int sd_notify(int unset_environment, const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;
	socklen_t salen;
	int fd, r = 0;

	if (!path || !*path)
		goto out; /* not started by systemd with Type=notify */
	if (!state) {
		r = -EINVAL;
		goto out;
	}
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len < 2 || len >= sizeof(sa.sun_path)) {
		r = -EAFNOSUPPORT;
		goto out;
	}
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	/* An abstract name's length is the address's: no trailing NUL. */
	salen = offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/');

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
		r = -errno;
	else
		r = 1;
	close(fd);
out:
	if (unset_environment)
		unsetenv("NOTIFY_SOCKET");
	return r;
}

int sd_watchdog_enabled(int unset_environment, uint64_t *usec)
{
	const char *us = getenv("WATCHDOG_USEC"), *ps = getenv("WATCHDOG_PID");
	uint64_t u, pid;
	int r = 0;

	if (!us)
		goto out;
	if (parse_u64(us, &u) < 0 || u == 0) {
		r = -EINVAL;
		goto out;
	}
	if (ps) {
		if (parse_u64(ps, &pid) < 0 || pid == 0) {
			r = -EINVAL;
			goto out;
		}
		if (pid != (uint64_t)getpid())
			goto out; /* meant for another process */
	}
	if (usec)
		*usec = u;
	r = 1;
out:
	if (unset_environment) {
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
	}
	return r;
}
