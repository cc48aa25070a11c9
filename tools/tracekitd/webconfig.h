/* The web configuration file of the Prometheus exporters
 * (exporter-toolkit's --web.config.file), as tracekitd reads it:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     client_ca_file: clients-ca.crt          # optional: mutual TLS
 *     client_auth_type: RequireAndVerifyClientCert
 *     min_version: TLS12                      # TLS12 (default) or TLS13
 *     max_version: TLS13
 *   basic_auth_users:
 *     prometheus: $2y$10$...                  # bcrypt (htpasswd -nBC 10)
 *
 * Relative file names are relative to the web config's directory. */
#ifndef TRACEKITD_WEBCONFIG_H
#define TRACEKITD_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType). */
enum web_client_auth {
	WEB_NO_CLIENT_CERT,
	WEB_REQUEST_CLIENT_CERT,
	WEB_REQUIRE_ANY_CLIENT_CERT,
	WEB_VERIFY_CLIENT_CERT_IF_GIVEN,
	WEB_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

#define WEB_MAX_USERS 64
#define WEB_HASH_LEN 60  /* a bcrypt hash: $2y$NN$ + 53 characters */

struct web_user {
	char *name;
	char hash[WEB_HASH_LEN + 1];
};

struct web_config {
	bool tls;
	/* File names as written; then, after webconfig_load, their PEM. */
	char *cert_file, *key_file, *client_ca_file;
	char *cert, *key, *client_ca;
	enum web_client_auth client_auth;
	int min_version, max_version;  /* 12 or 13 */
	struct web_user users[WEB_MAX_USERS];
	size_t n_users;
};

/* The YAML text alone (no file is read): 0, or -1 with one line in err
 * ("LINE: ..."). Frees nothing of *w on entry; webconfig_free after. */
int webconfig_parse(const char *text, size_t len, struct web_config *w,
		    char *err, size_t errlen);
/* The file, then the certificate, key and CA files it names, checked with
 * GnuTLS (the key matches the certificate): 0, or -1 with one line
 * ("PATH: ..." or "PATH:LINE: ..."). */
int webconfig_load(const char *path, struct web_config *w, char *err, size_t errlen);
void webconfig_free(struct web_config *w);

/* Is user:password one of basic_auth_users? bcrypt (libxcrypt's
 * crypt_rn) always runs once, on a dummy hash for an unknown user, and
 * the hashes are compared in constant time. */
bool webconfig_check_user(const struct web_config *w, const char *user,
			  const char *password);

#endif
