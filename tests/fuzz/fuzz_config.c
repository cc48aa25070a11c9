/* libFuzzer harness: tracekitd's config reader (inih and our value
 * checks), its listen-address parser and its web config parser (libyaml
 * and our checks of keys, values and bcrypt hashes), on arbitrary bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tracekitd.h"
#include "webconfig.h"

/* The collectors' names are all config.c needs of them. */
#define STUB(n) const struct collector collector_##n = { .name = #n };
STUB(syscalls) STUB(execs) STUB(runqlat) STUB(tcpconnect) STUB(vfsstat) STUB(block) STUB(fs)
STUB(tcpstates) STUB(netdev) STUB(drops) STUB(retrans)
STUB(hardirqs) STUB(softirqs) STUB(cpudist) STUB(runqlen)
const struct collector *const collectors[N_COLLECTORS] = {
	&collector_syscalls, &collector_execs, &collector_runqlat,
	&collector_tcpconnect, &collector_vfsstat, &collector_block, &collector_fs,
	&collector_tcpstates, &collector_netdev, &collector_drops,
	&collector_retrans,
	&collector_hardirqs, &collector_softirqs, &collector_cpudist, &collector_runqlen,
};

/* The web config: what parses is consistent; what does not says why on
 * one line. */
static void check_webconfig(const uint8_t *data, size_t size)
{
	struct web_config w;
	char err[512];
	size_t i;

	if (webconfig_parse((const char *)data, size, &w, err, sizeof(err)) == 0) {
		if (w.tls && (!w.cert_file || !*w.cert_file || !w.key_file || !*w.key_file))
			abort();
		if (w.min_version < 12 || w.max_version > 13 || w.min_version > w.max_version)
			abort();
		if (w.client_auth != WEB_NO_CLIENT_CERT && !w.client_ca_file)
			abort();
		if (w.n_users > WEB_MAX_USERS)
			abort();
		for (i = 0; i < w.n_users; i++)
			if (!w.users[i].name[0] || strchr(w.users[i].name, ':') ||
			    strlen(w.users[i].hash) != WEB_HASH_LEN)
				abort();
	} else if (!memchr(err, 0, sizeof(err)) || !err[0] || strchr(err, '\n')) {
		abort();
	}
	webconfig_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct sockaddr_storage ss;
	struct config c;
	char err[512], *s;

	if (fd < 0) {
		fd = memfd_create("conf", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (config_load(&c, path, true, err, sizeof(err)) == 0) {
		/* What loads must be a listen address that parses. */
		if (config_parse_listen(c.listen, &ss, err, sizeof(err)))
			abort();
		if (c.max_series < 1 || c.max_series > 1000000)
			abort();
	} else if (!memchr(err, 0, sizeof(err)) || !err[0]) {
		abort();
	}
	s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = 0;
	config_parse_listen(s, &ss, err, sizeof(err));
	free(s);
	check_webconfig(data, size);
	return 0;
}
