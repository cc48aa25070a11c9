/* tracekitd.conf: an INI file read with inih.
 *
 *   [tracekitd]
 *   listen = 127.0.0.1:9949
 *   max_series = 1000
 *   strict = no
 *   web_config = /etc/tracekit/web.yml
 *
 *   [collectors]
 *   syscalls = yes
 *   execs = yes
 *   ...
 *
 * Unknown sections, keys and values are errors, so a typo is never
 * silently ignored. */
#include "tracekitd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

struct parse {
	struct config *c;
	char err[256];
};

static int parse_bool(const char *v, bool *out)
{
	static const char *yes[] = { "yes", "true", "on", "1" };
	static const char *no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(v, no[i]))
			return *out = false, 0;
	}
	return -1;
}

int config_parse_listen(const char *s, struct sockaddr_storage *ss,
			char *err, size_t errlen)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *orig = s, *colon, *port_s;
	char host[128];
	unsigned long port;
	char *end;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			goto bad;
		hlen = (size_t)(close - s - 1);
		port_s = close + 2;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			goto bad;
		hlen = (size_t)(colon - s);
		port_s = colon + 1;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, s, hlen);
	host[hlen] = 0;
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (!*port_s || *end || errno || port == 0 || port > 65535)
		goto bad;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((unsigned short)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((unsigned short)port);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "listen address '%s' is not ADDRESS:PORT (e.g. 127.0.0.1:9949, [::1]:9949, 0.0.0.0:9949)",
		 orig);
	return -1;
}

static int collector_index(const char *name)
{
	int i;

	for (i = 0; i < N_COLLECTORS; i++)
		if (!strcmp(collectors[i]->name, name))
			return i;
	return -1;
}

/* fs_types: known names (libtrace/fstypes.c's, which config.c does not
 * link: the fuzzer builds it alone), space-separated, each once at most. */
static int check_fs_types(const char *v, char *err, size_t errlen)
{
	static const char *const known[] = { "ext4", "xfs", "btrfs", "nfs" };
	char copy[64], *tok, *save = NULL;
	unsigned seen = 0, i;

	if (strlen(v) >= sizeof(copy)) {
		snprintf(err, errlen, "fs_types: bad value '%s' (too long)", v);
		return -1;
	}
	strcpy(copy, v);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		for (i = 0; i < 4 && strcmp(tok, known[i]); i++)
			;
		if (i == 4 || seen & 1u << i) {
			snprintf(err, errlen, "fs_types: %s '%s' (ext4, xfs, btrfs, nfs, "
				 "space-separated)", i == 4 ? "unknown file system" : "repeated", tok);
			return -1;
		}
		seen |= 1u << i;
	}
	return 0;
}

/* inih calls this per key; 0 stops the parse at this line. */
static int on_key(void *user, const char *section, const char *key,
		  const char *value)
{
	struct parse *p = user;
	struct config *c = p->c;
	struct sockaddr_storage ss;
	char *end;
	int i;

	if (!strcmp(section, "tracekitd")) {
		if (!strcmp(key, "listen")) {
			if (config_parse_listen(value, &ss, p->err, sizeof(p->err)))
				return 0;
			if (strlen(value) >= sizeof(c->listen))
				goto bad_value;
			strcpy(c->listen, value);
			return 1;
		}
		if (!strcmp(key, "max_series")) {
			errno = 0;
			c->max_series = strtoul(value, &end, 10);
			if (!*value || *end || errno || *value == '-' ||
			    c->max_series < 1 || c->max_series > 1000000)
				goto bad_value;
			return 1;
		}
		if (!strcmp(key, "strict")) {
			if (parse_bool(value, &c->strict))
				goto bad_value;
			return 1;
		}
		if (!strcmp(key, "web_config")) {
			if (strlen(value) >= sizeof(c->web_config))
				goto bad_value;
			strcpy(c->web_config, value);
			return 1;
		}
		snprintf(p->err, sizeof(p->err),
			 "unknown key '%s' in [tracekitd] (listen, max_series, strict, web_config)", key);
		return 0;
	}
	if (!strcmp(section, "collectors")) {
		if (!strcmp(key, "fs_types")) {
			if (check_fs_types(value, p->err, sizeof(p->err)))
				return 0;
			strcpy(c->fs_types, value);
			return 1;
		}
		if ((i = collector_index(key)) < 0) {
			snprintf(p->err, sizeof(p->err),
				 "unknown collector '%s' (syscalls, execs, runqlat, tcpconnect, vfsstat, block, fs, "
				 "tcpstates, netdev, drops, retrans, hardirqs, softirqs, cpudist, runqlen; fs_types)",
				 key);
			return 0;
		}
		if (parse_bool(value, &c->enabled[i]))
			goto bad_value;
		return 1;
	}
	snprintf(p->err, sizeof(p->err), "unknown section [%s] ([tracekitd], [collectors])",
		 section);
	return 0;

bad_value:
	snprintf(p->err, sizeof(p->err), "%s: bad value '%s'%s", key, value,
		 !strcmp(key, "max_series") ? " (a number from 1 to 1000000)" :
		 !strcmp(key, "listen") || !strcmp(key, "web_config") ? " (too long)" : " (yes or no)");
	return 0;
}

static void defaults(struct config *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	strcpy(c->listen, TRACEKITD_DEFAULT_LISTEN);
	c->max_series = TRACEKITD_DEFAULT_MAX_SERIES;
	for (i = 0; i < N_COLLECTORS; i++)
		c->enabled[i] = !collectors[i]->off_by_default;
}

int config_load(struct config *c, const char *path, bool path_given,
		char *err, size_t errlen)
{
	struct parse p = { .c = c };
	FILE *f;
	int line;

	defaults(c);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !path_given)
			return 0;  /* no config: the defaults */
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	line = ini_parse_file(f, on_key, &p);
	fclose(f);
	if (line == 0)
		return 0;
	if (line < 0)
		snprintf(err, errlen, "%s: cannot read it", path);
	else if (p.err[0])
		snprintf(err, errlen, "%s:%d: %s", path, line, p.err);
	else
		snprintf(err, errlen, "%s:%d: not 'key = value' or '[section]'", path, line);
	return -1;
}
