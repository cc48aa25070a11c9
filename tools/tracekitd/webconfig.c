/* webconfig.h: the exporters' web config, parsed with libyaml's document
 * loader; bcrypt by libxcrypt; certificates checked by GnuTLS. Unknown
 * keys, keys of exporter-toolkit that tracekitd does not implement, bad
 * values and bad hashes are one-line errors naming the key. */
#include "webconfig.h"

#include <crypt.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct walk {
	yaml_document_t *doc;
	struct web_config *w;
	char *err;
	size_t errlen;
};

static int fail(struct walk *k, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct walk *k, const yaml_node_t *at, const char *fmt, ...)
{
	char raw[384], msg[384];
	size_t i, o = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* One line whatever the file holds: a YAML key or value may span
	 * lines (a plain scalar folds them) or hold control characters. */
	for (i = 0; raw[i] && o + 5 < sizeof(msg); i++) {
		unsigned char c = raw[i];

		if (c == '\n')
			o += snprintf(msg + o, sizeof(msg) - o, "\\n");
		else if (c < 0x20 || c == 0x7f)
			o += snprintf(msg + o, sizeof(msg) - o, "\\x%02x", c);
		else
			msg[o++] = c;
	}
	msg[o] = 0;
	if (at)
		snprintf(k->err, k->errlen, "%lu: %s",
			 (unsigned long)at->start_mark.line + 1, msg);
	else
		snprintf(k->err, k->errlen, "%s", msg);
	return -1;
}

/* A scalar's text (NUL-terminated by libyaml), or NULL. */
static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* YAML's null ("", ~, null) as exporter-toolkit's empty string. */
static const char *value_of(const yaml_node_t *n)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return s;
	return !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL") ? "" : s;
}

static bool is_null(const yaml_node_t *n)
{
	const char *s = value_of(n);

	return s && !*s;
}

static int set_string(struct walk *k, const yaml_node_t *key, const yaml_node_t *v,
		      char **out)
{
	const char *s = value_of(v);

	if (!s)
		return fail(k, v, "%s: not a string", scalar(key));
	if (*out)
		return fail(k, key, "%s: given twice", scalar(key));
	if (!(*out = strdup(s)))
		return fail(k, v, "out of memory");
	return 0;
}

static int parse_version(struct walk *k, const yaml_node_t *key, const yaml_node_t *v,
			 int *out)
{
	const char *s = value_of(v);

	if (s && !strcmp(s, "TLS12"))
		return *out = 12, 0;
	if (s && !strcmp(s, "TLS13"))
		return *out = 13, 0;
	if (s && (!strcmp(s, "TLS10") || !strcmp(s, "TLS11")))
		return fail(k, v, "%s: %s is not allowed: tracekitd speaks TLS 1.2 and 1.3 only",
			    scalar(key), s);
	return fail(k, v, "%s: bad value '%s' (TLS12 or TLS13)", scalar(key), s ? s : "?");
}

static int parse_client_auth(struct walk *k, const yaml_node_t *v)
{
	static const char *const names[] = {
		[WEB_NO_CLIENT_CERT] = "NoClientCert",
		[WEB_REQUEST_CLIENT_CERT] = "RequestClientCert",
		[WEB_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
		[WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
		[WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
	};
	const char *s = value_of(v);
	size_t i;

	for (i = 0; s && i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(s, names[i]))
			return k->w->client_auth = i, 0;
	return fail(k, v, "client_auth_type: bad value '%s' (NoClientCert, RequestClientCert, "
		    "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert)",
		    s ? s : "?");
}

/* Keys of exporter-toolkit's format that tracekitd does not implement:
 * an error that says so, not "unknown". */
static bool toolkit_only(const char *key)
{
	static const char *const keys[] = {
		"cert", "key", "client_ca", "cipher_suites", "curve_preferences",
		"prefer_server_cipher_suites", "client_allowed_sans", "http_server_config",
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

static int unknown(struct walk *k, const yaml_node_t *key, const char *where,
		   const char *known)
{
	const char *s = scalar(key);

	if (toolkit_only(s))
		return fail(k, key, "'%s'%s is not supported by tracekitd (%s)", s, where, known);
	return fail(k, key, "unknown key '%s'%s (%s)", s, where, known);
}

#define FOR_PAIRS(doc, map, p)                                                 \
	for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;            \
	     p < (map)->data.mapping.pairs.top; p++)

static int walk_tls(struct walk *k, const yaml_node_t *map)
{
	struct web_config *w = k->w;
	bool seen_auth = false, seen_min = false, seen_max = false;

	if (is_null(map))
		return fail(k, map, "tls_server_config: empty (cert_file and key_file are needed)");
	if (map->type != YAML_MAPPING_NODE)
		return fail(k, map, "tls_server_config: not a mapping of keys");
	w->tls = true;
	FOR_PAIRS(k->doc, map, p) {
		yaml_node_t *key = yaml_document_get_node(k->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(k->doc, p->value);
		const char *name = scalar(key);
		bool *seen = NULL;
		int rc;

		if (!name)
			return fail(k, key, "tls_server_config: a key that is not a string");
		if (!strcmp(name, "cert_file"))
			rc = set_string(k, key, v, &w->cert_file);
		else if (!strcmp(name, "key_file"))
			rc = set_string(k, key, v, &w->key_file);
		else if (!strcmp(name, "client_ca_file"))
			rc = set_string(k, key, v, &w->client_ca_file);
		else if (!strcmp(name, "client_auth_type"))
			seen = &seen_auth, rc = parse_client_auth(k, v);
		else if (!strcmp(name, "min_version"))
			seen = &seen_min, rc = parse_version(k, key, v, &w->min_version);
		else if (!strcmp(name, "max_version"))
			seen = &seen_max, rc = parse_version(k, key, v, &w->max_version);
		else
			return unknown(k, key, " in tls_server_config",
				       "cert_file, key_file, client_ca_file, client_auth_type, "
				       "min_version, max_version");
		if (rc)
			return rc;
		if (seen && *seen)
			return fail(k, key, "%s: given twice", name);
		if (seen)
			*seen = true;
	}
	if (!w->cert_file || !*w->cert_file)
		return fail(k, map, "tls_server_config: cert_file is missing");
	if (!w->key_file || !*w->key_file)
		return fail(k, map, "tls_server_config: key_file is missing");
	if (w->min_version > w->max_version)
		return fail(k, map, "tls_server_config: min_version is above max_version");
	if (w->client_ca_file && *w->client_ca_file && w->client_auth == WEB_NO_CLIENT_CERT)
		return fail(k, map, "tls_server_config: client_ca_file without a client_auth_type "
			    "(RequireAndVerifyClientCert verifies client certificates)");
	/* libmicrohttpd asks for a client certificate only with a CA. */
	if (w->client_auth != WEB_NO_CLIENT_CERT && (!w->client_ca_file || !*w->client_ca_file))
		return fail(k, map, "tls_server_config: client_auth_type %s client "
			    "certificates: client_ca_file is needed",
			    w->client_auth >= WEB_VERIFY_CLIENT_CERT_IF_GIVEN ? "verifies" : "asks for");
	return 0;
}

/* A bcrypt hash libxcrypt takes: $2a$, $2b$ or $2y$, cost, salt, hash. */
static bool bcrypt_hash(const char *h)
{
	return strlen(h) == WEB_HASH_LEN && h[0] == '$' && h[1] == '2' &&
	       strchr("aby", h[2]) && h[3] == '$' && crypt_checksalt(h) == CRYPT_SALT_OK;
}

static int walk_users(struct walk *k, const yaml_node_t *map)
{
	struct web_config *w = k->w;
	size_t i;

	if (is_null(map))
		return 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail(k, map, "basic_auth_users: not a mapping of user: bcrypt hash");
	FOR_PAIRS(k->doc, map, p) {
		yaml_node_t *key = yaml_document_get_node(k->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(k->doc, p->value);
		const char *user = scalar(key), *hash = value_of(v);

		if (!user || !*user || strchr(user, ':'))
			return fail(k, key, "basic_auth_users: a user name must be a string without ':'");
		for (i = 0; i < w->n_users; i++)
			if (!strcmp(w->users[i].name, user))
				return fail(k, key, "basic_auth_users: user '%s' given twice", user);
		if (w->n_users == WEB_MAX_USERS)
			return fail(k, key, "basic_auth_users: more than %d users", WEB_MAX_USERS);
		if (!hash || !bcrypt_hash(hash))
			return fail(k, v, "basic_auth_users: %s: not a bcrypt hash "
				    "(make one with htpasswd -nBC 10 %s)", user, user);
		if (!(w->users[w->n_users].name = strdup(user)))
			return fail(k, key, "out of memory");
		strcpy(w->users[w->n_users++].hash, hash);
	}
	return 0;
}

static int walk(struct walk *k, const yaml_node_t *root)
{
	bool seen_tls = false, seen_users = false;

	if (!root || is_null(root))
		return 0;  /* an empty file: plain HTTP, no auth, as exporters do */
	if (root->type != YAML_MAPPING_NODE)
		return fail(k, root, "not a mapping of keys (tls_server_config, basic_auth_users)");
	FOR_PAIRS(k->doc, root, p) {
		yaml_node_t *key = yaml_document_get_node(k->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(k->doc, p->value);
		const char *name = scalar(key);
		int rc;

		if (!name)
			return fail(k, key, "a key that is not a string");
		if (!strcmp(name, "tls_server_config") && !seen_tls)
			seen_tls = true, rc = walk_tls(k, v);
		else if (!strcmp(name, "basic_auth_users") && !seen_users)
			seen_users = true, rc = walk_users(k, v);
		else if (!strcmp(name, "tls_server_config") || !strcmp(name, "basic_auth_users"))
			rc = fail(k, key, "%s: given twice", name);
		else
			rc = unknown(k, key, "", "tls_server_config, basic_auth_users");
		if (rc)
			return rc;
	}
	return 0;
}

int webconfig_parse(const char *text, size_t len, struct web_config *w,
		    char *err, size_t errlen)
{
	struct walk k = { .w = w, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc;

	memset(w, 0, sizeof(*w));
	w->min_version = 12;
	w->max_version = 13;
	if (!yaml_parser_initialize(&parser))
		return fail(&k, NULL, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%lu: not YAML: %s",
			 (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "cannot parse it");
		yaml_parser_delete(&parser);
		return -1;
	}
	k.doc = &doc;
	rc = walk(&k, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	/* One document: a second one is an error, not ignored. */
	if (!rc && yaml_parser_load(&parser, &doc)) {
		if (yaml_document_get_root_node(&doc))
			rc = fail(&k, NULL, "more than one YAML document");
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* A whole small file (certificates, keys, the config): NULL and errno. */
static char *slurp(const char *path, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	errno = 0;
	do {
		if (cap - len < 4096) {
			char *b;

			if (cap >= (1u << 20) || !(b = realloc(buf, cap += 65536))) {
				free(buf);
				fclose(f);
				errno = cap >= (1u << 20) ? EFBIG : ENOMEM;
				return NULL;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		free(buf);
		fclose(f);
		errno = e;
		return NULL;
	}
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

/* name relative to the directory of the config at path. */
static int read_named(const char *path, const char *name, char **out,
		      const char *key, char *err, size_t errlen)
{
	char full[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (name[0] == '/' || !slash)
		snprintf(full, sizeof(full), "%s", name);
	else
		snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - path), path, name);
	*out = slurp(full, NULL);
	if (!*out) {
		snprintf(err, errlen, "%s: %s %s: %s", path, key, full, strerror(errno));
		return -1;
	}
	return 0;
}

static int check_tls(const char *path, struct web_config *w, char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = { (unsigned char *)w->cert, strlen(w->cert) };
	gnutls_datum_t key = { (unsigned char *)w->key, strlen(w->key) };
	int rc;

	if (gnutls_certificate_allocate_credentials(&cred) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	rc = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM,
						  NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cert_file %s and key_file %s: %s", path,
			 w->cert_file, w->key_file, gnutls_strerror(rc));
	} else if (w->client_ca) {
		gnutls_datum_t ca = { (unsigned char *)w->client_ca, strlen(w->client_ca) };

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (rc <= 0)
			snprintf(err, errlen, "%s: client_ca_file %s: %s", path, w->client_ca_file,
				 rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
		rc = rc <= 0 ? -1 : 0;
	}
	gnutls_certificate_free_credentials(cred);
	return rc < 0 ? -1 : 0;
}

/* File names from the config may hold anything: one line still. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int webconfig_load(const char *path, struct web_config *w, char *err, size_t errlen)
{
	char msg[448];
	size_t len;
	char *text = slurp(path, &len);
	int rc;

	if (!text) {
		memset(w, 0, sizeof(*w));
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		one_line(err);
		return -1;
	}
	rc = webconfig_parse(text, len, w, msg, sizeof(msg));
	free(text);
	if (rc) {
		snprintf(err, errlen, "%s:%s", path, msg);
		goto bad;
	}
	if (!w->tls)
		return 0;
	if (read_named(path, w->cert_file, &w->cert, "cert_file", err, errlen) ||
	    read_named(path, w->key_file, &w->key, "key_file", err, errlen) ||
	    (w->client_ca_file &&
	     read_named(path, w->client_ca_file, &w->client_ca, "client_ca_file", err, errlen)) ||
	    check_tls(path, w, err, errlen))
		goto bad;
	return 0;
bad:
	one_line(err);
	webconfig_free(w);
	return -1;
}

void webconfig_free(struct web_config *w)
{
	size_t i;

	free(w->cert_file);
	free(w->key_file);
	free(w->client_ca_file);
	if (w->key)
		explicit_bzero(w->key, strlen(w->key));
	free(w->cert);
	free(w->key);
	free(w->client_ca);
	for (i = 0; i < w->n_users; i++)
		free(w->users[i].name);
	memset(w, 0, sizeof(*w));
}

bool webconfig_check_user(const struct web_config *w, const char *user,
			  const char *password)
{
	/* exporter-toolkit's dummy: an unknown user costs one bcrypt too. */
	static const char dummy[] = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";
	static __thread struct crypt_data data;
	const char *hash = dummy, *got;
	unsigned char diff = 0;
	bool known = false;
	size_t i;

	for (i = 0; i < w->n_users; i++)
		if (user && !strcmp(w->users[i].name, user)) {
			hash = w->users[i].hash;
			known = true;
		}
	got = crypt_rn(password ? password : "", hash, &data, sizeof(data));
	if (!got || strlen(got) != WEB_HASH_LEN)
		return false;
	for (i = 0; i < WEB_HASH_LEN; i++)
		diff |= (unsigned char)got[i] ^ (unsigned char)hash[i];
	return known & (diff == 0);
}
