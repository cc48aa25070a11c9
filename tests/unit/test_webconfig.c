/* tracekitd's web config (tools/tracekitd/webconfig.c): the YAML parse,
 * its defaults and errors, and basic auth against bcrypt hashes made by
 * htpasswd ($2y$) and by libxcrypt ($2b$, $2a$). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "webconfig.h"

/* htpasswd -nbBC 4 alice 'pa:ss word' */
#define ALICE "$2y$04$H9Whm.Q8WACU9UGuHMWo4es3ANb.RqqUQ0Y3zixa4Pxo3ABQVGham"
/* crypt(3) with crypt_gensalt's $2b$ and an $2a$ salt: pw2, pw3 */
#define BOB "$2b$04$yvZv..Y02yLL3R8DNtWTbuH3TQSWZhbF74xb8VMN7.LJeV1Jemnfu"
#define CAROL "$2a$04$W4sQenFvAdsLqczIh8W2ZOR.fVfomSuzj43lzO4r0fneGLgmE8KES"

static int parse(const char *text, struct web_config *w, char *err)
{
	return webconfig_parse(text, strlen(text), w, err, 256);
}

static void test_full_config(void **state)
{
	struct web_config w;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse("tls_server_config:\n"
			       "  cert_file: a.crt\n  key_file: \"a.key\"\n"
			       "  client_ca_file: ca.crt\n"
			       "  client_auth_type: RequireAndVerifyClientCert\n"
			       "  min_version: TLS13\n"
			       "basic_auth_users:\n"
			       "  alice: " ALICE "\n"
			       "  bob: '" BOB "'\n", &w, err), 0);
	assert_true(w.tls);
	assert_string_equal(w.cert_file, "a.crt");
	assert_string_equal(w.key_file, "a.key");
	assert_string_equal(w.client_ca_file, "ca.crt");
	assert_int_equal(w.client_auth, WEB_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_int_equal(w.min_version, 13);
	assert_int_equal(w.max_version, 13);
	assert_int_equal(w.n_users, 2);
	assert_string_equal(w.users[0].name, "alice");
	assert_string_equal(w.users[1].hash, BOB);
	assert_null(w.cert);  /* parse reads no file */
	webconfig_free(&w);
}

static void test_empty_and_defaults(void **state)
{
	struct web_config w;
	char err[256];

	(void)state;
	assert_int_equal(parse("", &w, err), 0);
	assert_false(w.tls);
	assert_int_equal(w.n_users, 0);
	webconfig_free(&w);
	assert_int_equal(parse("# nothing\nbasic_auth_users:\n", &w, err), 0);
	assert_int_equal(w.n_users, 0);
	webconfig_free(&w);
	assert_int_equal(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n", &w, err), 0);
	assert_int_equal(w.min_version, 12);
	assert_int_equal(w.max_version, 13);
	assert_int_equal(w.client_auth, WEB_NO_CLIENT_CERT);
	webconfig_free(&w);
}

static void test_errors_are_one_line_with_the_line(void **state)
{
	static const struct { const char *text, *err; } cases[] = {
		{ "basic_auth_users:\n  alice: " ALICE "\n  alice: " ALICE "\n",
		  "3: basic_auth_users: user 'alice' given twice" },
		{ "basic_auth_users:\n  alice: $1$abc$defghijk\n",
		  "2: basic_auth_users: alice: not a bcrypt hash (make one with htpasswd -nBC 10 alice)" },
		{ "basic_auth_users:\n  'a:b': " ALICE "\n",
		  "2: basic_auth_users: a user name must be a string without ':'" },
		{ "tls_server_config:\n  key_file: k\n",
		  "2: tls_server_config: cert_file is missing" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  cipher_suites: [x]\n",
		  "4: 'cipher_suites' in tls_server_config is not supported by tracekitd" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n  max_version: TLS12\n",
		  "2: tls_server_config: min_version is above max_version" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
		  "2: tls_server_config: client_ca_file without a client_auth_type" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Maybe\n",
		  "4: client_auth_type: bad value 'Maybe'" },
		{ "tls_server_config: x\n", "1: tls_server_config: not a mapping of keys" },
		{ "- a\n- b\n", "1: not a mapping of keys" },
		{ "a: 1\n---\nb: 2\n", "1: unknown key 'a'" },
		{ "{}\n---\nb: 2\n", "more than one YAML document" },
		{ "basic_auth_users: {\n", "2: not YAML: " },
		/* A plain scalar key folds its lines (found by fuzz_config). */
		{ "{series =0\nyt\n\nma}", "1: unknown key 'series =0 yt\\nma' (" },
		{ "\"a\\tb\": 1\n", "1: unknown key 'a\\x09b' (" },
	};
	struct web_config w;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		err[0] = 0;
		assert_int_equal(parse(cases[i].text, &w, err), -1);
		if (strncmp(err, cases[i].err, strlen(cases[i].err)))
			fail_msg("case %zu: '%s', not '%s'", i, err, cases[i].err);
		assert_null(strchr(err, '\n'));
		webconfig_free(&w);
	}
}

static void test_check_user(void **state)
{
	struct web_config w;
	char err[256];

	(void)state;
	assert_int_equal(parse("basic_auth_users:\n  alice: " ALICE "\n  bob: " BOB "\n"
			       "  carol: " CAROL "\n", &w, err), 0);
	assert_true(webconfig_check_user(&w, "alice", "pa:ss word"));
	assert_true(webconfig_check_user(&w, "bob", "pw2"));
	assert_true(webconfig_check_user(&w, "carol", "pw3"));
	assert_false(webconfig_check_user(&w, "alice", "pa:ss wor"));
	assert_false(webconfig_check_user(&w, "alice", "pw2"));
	assert_false(webconfig_check_user(&w, "bob", "pa:ss word"));
	assert_false(webconfig_check_user(&w, "alice", ""));
	assert_false(webconfig_check_user(&w, "alice", NULL));
	assert_false(webconfig_check_user(&w, "dave", "pw2"));
	assert_false(webconfig_check_user(&w, NULL, "pw2"));
	assert_false(webconfig_check_user(&w, "Alice", "pa:ss word"));
	webconfig_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_empty_and_defaults),
		cmocka_unit_test(test_errors_are_one_line_with_the_line),
		cmocka_unit_test(test_check_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
