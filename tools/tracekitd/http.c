/* The scrape endpoint, on libmicrohttpd's own thread: GET /metrics
 * renders the metrics under the state lock; / says where they are;
 * anything else is 404, other methods 405, a request with a body 413.
 * libmicrohttpd answers malformed requests itself (400) and headers
 * past the connection's memory limit (431), and the connection limit
 * and timeout keep slow or many clients from holding the daemon. */
#include "tracekitd.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "prom.h"
#include "tracekit.h"

static struct MHD_Daemon *daemon_;

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **req_ctx)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)cls;
	(void)version;
	(void)upload;
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
	tk_info("http: %s", msg);
}

int http_start(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 MHD_USE_EPOLL;

	if (config_parse_listen(listen, &ss, err, errlen))
		return -1;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	daemon_ = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, NULL,  /* first */
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, 32u,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, 16u,
		MHD_OPTION_CONNECTION_TIMEOUT, 10u,
		/* Request line and headers must fit in this: 16 KiB. */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
		MHD_OPTION_END);
	if (!daemon_) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen,
			 errno ? strerror(errno) : "libmicrohttpd refused to start");
		return -1;
	}
	return 0;
}

void http_stop(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
