/* The network benchmark's workload, over loopback, with a server of its
 * own (a forked child):
 *
 *   tcp_load conn N BURSTS     N connections one after another, each
 *                              connect, 100 bytes up, 100 down, close
 *                              (the client first); prints each burst's
 *                              wall-clock ns per connection
 *   tcp_load stream MB CHUNK BURSTS
 *                              one connection per burst, MB MiB sent up
 *                              in send() calls of CHUNK bytes; prints each
 *                              burst's wall-clock ns per MiB
 *
 * A tracer of state changes (tcplife) pays per connection, one of sends
 * and receives (tcptop) per call; the chunk size sets how many calls a
 * MiB takes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void full(int fd, char *buf, size_t n, int sending)
{
	while (n) {
		ssize_t r = sending ? send(fd, buf, n, 0) : recv(fd, buf, n, 0);

		if (r <= 0)
			die(sending ? "send" : "recv");
		buf += r;
		n -= r;
	}
}

/* The server: for each connection, conn mode answers 100 bytes for 100
 * and waits for the client's close; stream mode reads to the end. */
static void serve(int ls, int stream)
{
	static char buf[1 << 16];

	for (;;) {
		int fd = accept(ls, NULL, NULL);
		ssize_t r;

		if (fd < 0)
			die("accept");
		if (!stream) {
			full(fd, buf, 100, 0);
			full(fd, buf, 100, 1);
		}
		while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
			;
		close(fd);
	}
}

static int dial(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int stream, ls, bursts;
	long n, chunk = 0;
	static char buf[1 << 16];
	pid_t server;

	if (argc < 2 || !((!strcmp(argv[1], "conn") && argc == 4) ||
			  (!strcmp(argv[1], "stream") && argc == 5))) {
		fprintf(stderr, "usage: tcp_load conn N BURSTS | stream MB CHUNK BURSTS\n");
		return 2;
	}
	stream = !strcmp(argv[1], "stream");
	n = atol(argv[2]);
	if (stream)
		chunk = atol(argv[3]);
	bursts = atoi(argv[argc - 1]);
	if (n <= 0 || bursts <= 0 || (stream && (chunk <= 0 || chunk > (long)sizeof(buf)))) {
		fprintf(stderr, "tcp_load: bad numbers\n");
		return 2;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 128) ||
	    getsockname(ls, (struct sockaddr *)&sa, &len))
		die("listen");
	server = fork();
	if (server < 0)
		die("fork");
	if (!server)
		serve(ls, stream);
	close(ls);
	memset(buf, 'x', sizeof(buf));
	for (int b = 0; b < bursts; b++) {
		uint64_t t0 = now_ns();

		if (stream) {
			int fd = dial(&sa);

			for (long sent = 0; sent < n << 20; sent += chunk)
				full(fd, buf, chunk, 1);
			shutdown(fd, SHUT_WR);
			while (recv(fd, buf, sizeof(buf), 0) > 0)
				;
			close(fd);
			printf("%.1f\n", (double)(now_ns() - t0) / n);
		} else {
			for (long i = 0; i < n; i++) {
				int fd = dial(&sa);

				full(fd, buf, 100, 1);
				full(fd, buf, 100, 0);
				close(fd);
			}
			printf("%.1f\n", (double)(now_ns() - t0) / n);
		}
	}
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	return 0;
}
