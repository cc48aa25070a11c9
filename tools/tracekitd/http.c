/* The scrape endpoint, on libmicrohttpd's own thread (one thread, epoll:
 * the collectors drain on the main thread and never wait for a client):
 * GET /metrics renders the metrics under the state lock; / says where
 * they are; anything else is 404, other methods 405, a request with a
 * body 413. libmicrohttpd answers malformed requests itself (400) and
 * headers past the connection's memory limit (431).
 *
 * With a web config (webconfig.h): TLS through libmicrohttpd's GnuTLS,
 * client certificates checked here, basic auth (401 and no metric
 * without valid credentials). A reload starts a new daemon with the new
 * material and keeps the old one when the new one cannot start.
 *
 * Limits (scrape_limits.c): connections in all and per client address,
 * checked as they are accepted, and the idle timeout; each refusal is
 * counted by reason for tracekit_scrape_refused_total. */
#include "tracekitd.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "prom.h"
#include "scrapes.h"
#include "tracekit.h"
#include "webconfig.h"

#define REALM "tracekitd"

static struct MHD_Daemon *daemon_;
/* What the running daemon serves with; its own copy. */
static struct web_config web_;
static char listen_[128];

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status,
			    const char *msg)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)msg,
		     strlen(msg), MHD_RESPMEM_PERSISTENT);
}

/* client_auth_type, for the request on conn: did the client show the
 * certificate the policy wants? GnuTLS verifies it against client_ca_file
 * (libmicrohttpd asks for one, optionally, and leaves this to us). */
static bool client_cert_ok(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	unsigned n = 0, status = 0;

	if (!web_.tls || web_.client_auth == WEB_NO_CLIENT_CERT)
		return true;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	gnutls_certificate_get_peers(ci->tls_session, &n);
	switch (web_.client_auth) {
	case WEB_REQUEST_CLIENT_CERT:
		return true;
	case WEB_REQUIRE_ANY_CLIENT_CERT:
		return n > 0;
	case WEB_VERIFY_CLIENT_CERT_IF_GIVEN:
		if (!n)
			return true;
		/* fall through */
	default:
		return n > 0 && gnutls_certificate_verify_peers2(ci->tls_session, &status) == 0 &&
		       status == 0;
	}
}

static enum MHD_Result refuse_auth(struct MHD_Connection *conn)
{
	static const char msg[] = "401 unauthorized: basic auth credentials needed\n";
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(msg), (void *)msg, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	scrapes_refused(REFUSED_AUTH);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_basic_auth_fail_response(conn, REALM, r);
	MHD_destroy_response(r);
	return ret;
}

/* The web config's checks, once per request: true lets it in; false has
 * queued the response that refuses it (its result in *ret). */
static bool authorised(struct MHD_Connection *conn, enum MHD_Result *ret)
{
	char *user, *password = NULL;
	bool ok;

	if (!client_cert_ok(conn)) {
		scrapes_refused(REFUSED_CLIENT_CERT);
		*ret = text(conn, MHD_HTTP_FORBIDDEN,
			    "403 forbidden: a client certificate signed by the client CA is needed\n");
		return false;
	}
	if (!web_.n_users)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &password);
	ok = user && webconfig_check_user(&web_, user, password);
	if (password)
		explicit_bzero(password, strlen(password));
	MHD_free(user);
	MHD_free(password);
	if (!ok)
		*ret = refuse_auth(conn);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **req_ctx)
{
	enum MHD_Result ret;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)cls;
	(void)version;
	(void)upload;
	if (!*req_ctx) {
		scrapes_request(conn);
		*req_ctx = (void *)2;  /* seen */
		if (!authorised(conn, &ret))
			return ret;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "405 method not allowed: use GET\n");
	if (*upload_size) {
		*upload_size = 0;  /* a GET with a body: refuse it */
		*req_ctx = (void *)1;
		return MHD_YES;
	}
	if (*req_ctx == (void *)1)
		return text(conn, MHD_HTTP_CONTENT_TOO_LARGE,
			    "413 a scrape takes no request body\n");
	if (!strcmp(url, "/"))
		return text(conn, MHD_HTTP_OK,
			    "tracekitd: metrics at /metrics (Prometheus text format)\n");
	if (strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "404 not found: try /metrics\n");
	f = open_memstream(&body, &len);
	if (!f)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "500 out of memory\n");
	state_lock();
	metrics_write(f, current_config());
	state_unlock();
	scrapes_write(f);
	if (fclose(f)) {
		free(body);
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "500 out of memory\n");
	}
	return reply(conn, MHD_HTTP_OK, TK_PROM_CONTENT_TYPE, body, len,
		     MHD_RESPMEM_MUST_FREE);
}

static void on_mhd_error(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	/* Refusals are counted (tracekit_scrape_refused_total): a flood of
	 * them must not flood the log too. */
	if (tk_opts.verbose)
		tk_info("http: %s", msg);
}

/* GnuTLS priorities for min_version..max_version. */
static void priorities(const struct web_config *w, char *buf, size_t size)
{
	snprintf(buf, size, "NORMAL:-VERS-ALL%s%s",
		 w->max_version >= 13 ? ":+VERS-TLS1.3" : "",
		 w->min_version <= 12 ? ":+VERS-TLS1.2" : "");
}

static struct MHD_Daemon *start(const char *listen, const struct web_config *w,
				char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 MHD_USE_EPOLL;
	struct MHD_OptionItem tls[5] = { { MHD_OPTION_END, 0, NULL } };
	char prio[96];
	struct MHD_Daemon *d;
	int n = 0;

	if (config_parse_listen(listen, &ss, err, errlen))
		return NULL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (w->tls) {
		flags |= MHD_USE_TLS;
		priorities(w, prio, sizeof(prio));
		tls[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert };
		tls[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, w->key };
		tls[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, prio };
		if (w->client_ca)
			tls[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
							    w->client_ca };
		tls[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	}
	scrapes_reset(w->tls);
	errno = 0;
	d = MHD_start_daemon(
		flags, 0, scrapes_accept, NULL, on_request, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, NULL,  /* first */
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		/* scrapes_accept holds them to SCRAPE_CONNECTIONS and
		 * SCRAPE_PER_CLIENT; these are a backstop. */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)SCRAPE_CONNECTIONS * 2,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SCRAPE_TIMEOUT_S,
		/* Request line and headers must fit in this: 16 KiB. */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
		MHD_OPTION_NOTIFY_CONNECTION, scrapes_connection, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, scrapes_completed, NULL,
		MHD_OPTION_ARRAY, tls,
		MHD_OPTION_END);
	if (!d)
		snprintf(err, errlen, "cannot listen on %s%s: %s", listen,
			 w->tls ? " with TLS" : "",
			 errno ? strerror(errno) : "libmicrohttpd refused to start");
	return d;
}

int http_start(const char *listen, struct web_config *w, char *err, size_t errlen)
{
	daemon_ = start(listen, w, err, errlen);
	if (!daemon_)
		return -1;
	webconfig_free(&web_);
	web_ = *w;
	memset(w, 0, sizeof(*w));
	snprintf(listen_, sizeof(listen_), "%s", listen);
	return 0;
}

int http_restart(const char *listen, struct web_config *w, char *err, size_t errlen)
{
	char again[256];

	http_stop();
	if (http_start(listen, w, err, errlen) == 0)
		return 0;
	webconfig_free(w);
	daemon_ = start(listen_, &web_, again, sizeof(again));
	if (!daemon_)
		tk_fail("cannot listen on %s again: %s", listen_, again);
	return -1;
}

void http_stop(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}

const char *http_scheme(void)
{
	return web_.tls ? "https" : "http";
}
