/* scrapes.h. A connection's slot says when it opened, whether a request
 * is under way and how many were answered; when libmicrohttpd closes it:
 *
 * - a request under way that reached the timeout: libmicrohttpd says so
 *   (MHD_REQUEST_TERMINATED_TIMEOUT_REACHED);
 * - no request ever, open SCRAPE_TIMEOUT_S or more: closed at the
 *   timeout (a client that connects and sends nothing);
 * - no request ever, TLS, handshake not finished, sooner: the handshake
 *   failed (plain HTTP to the TLS port, no common protocol version), or
 *   the client left in the middle of it.
 *
 * An idle keep-alive connection closed after its requests were answered
 * is the normal end of a scrape, not a refusal. */
#include "scrapes.h"
#include "tracekitd.h"

#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "prom.h"

struct slot {
	bool used, in_request, handshake_done;
	gnutls_session_t session;
	unsigned long requests;
	struct sockaddr_storage addr;
	struct timespec opened;
};

static struct slot slots[SCRAPE_CONNECTIONS];
static bool tls_;
/* Counted since start; a reload keeps them. */
static unsigned long long refused[N_REFUSED];

static const char *const reasons[N_REFUSED] = {
	[REFUSED_AUTH] = "auth",
	[REFUSED_CLIENT_CERT] = "client_cert",
	[REFUSED_TLS] = "tls",
	[REFUSED_LIMIT] = "limit",
	[REFUSED_TIMEOUT] = "timeout",
};

void scrapes_reset(bool tls)
{
	memset(slots, 0, sizeof(slots));
	tls_ = tls;
}

void scrapes_refused(enum scrape_refusal why)
{
	__atomic_add_fetch(&refused[why], 1, __ATOMIC_RELAXED);
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

enum MHD_Result scrapes_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	unsigned all = 0, same = 0, i;

	(void)cls;
	(void)len;
	for (i = 0; i < SCRAPE_CONNECTIONS; i++)
		if (slots[i].used) {
			all++;
			same += same_host(&slots[i].addr, addr);
		}
	if (all >= SCRAPE_CONNECTIONS || same >= SCRAPE_PER_CLIENT) {
		scrapes_refused(REFUSED_LIMIT);
		return MHD_NO;
	}
	return MHD_YES;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

/* GnuTLS calls this once the client's Finished is in: the handshake is
 * done (TLS 1.2 and 1.3 alike; the server receives the last Finished). */
static int on_finished(gnutls_session_t session, unsigned type, unsigned when,
		       unsigned incoming, const gnutls_datum_t *msg)
{
	unsigned i;

	(void)type;
	(void)when;
	(void)msg;
	if (incoming)
		for (i = 0; i < SCRAPE_CONNECTIONS; i++)
			if (slots[i].used && slots[i].session == session)
				slots[i].handshake_done = true;
	return 0;
}

void scrapes_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct slot *s = *socket_ctx;
	unsigned i;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		for (i = 0; i < SCRAPE_CONNECTIONS && slots[i].used; i++)
			;
		if (i == SCRAPE_CONNECTIONS)
			return;  /* scrapes_accept let no more in */
		s = &slots[i];
		memset(s, 0, sizeof(*s));
		s->used = true;
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci && ci->client_addr)
			memcpy(&s->addr, ci->client_addr,
			       ci->client_addr->sa_family == AF_INET6 ?
			       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
		clock_gettime(CLOCK_MONOTONIC, &s->opened);
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		if (tls_ && ci && ci->tls_session) {
			s->session = ci->tls_session;
			gnutls_handshake_set_hook_function(s->session, GNUTLS_HANDSHAKE_FINISHED,
							   GNUTLS_HOOK_POST, on_finished);
		}
		*socket_ctx = s;
		return;
	}
	if (!s)
		return;
	if (!s->requests && !s->in_request) {
		if (since(&s->opened) >= SCRAPE_TIMEOUT_S)
			scrapes_refused(REFUSED_TIMEOUT);
		else if (tls_ && !s->handshake_done)
			scrapes_refused(REFUSED_TLS);
	}
	s->used = false;
	*socket_ctx = NULL;
}

void scrapes_request(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct slot *s = ci ? ci->socket_context : NULL;

	if (s)
		s->in_request = true;
}

void scrapes_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
		       enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct slot *s = ci ? ci->socket_context : NULL;

	(void)cls;
	(void)req_ctx;
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		scrapes_refused(REFUSED_TIMEOUT);
	if (s) {
		s->in_request = false;
		s->requests++;
	}
}

void scrapes_write(FILE *f)
{
	unsigned i, open = 0;

	tk_prom_family(f, "tracekit_scrape_refused_total", "counter",
		       "Scrape connections and requests tracekitd turned away, by reason: "
		       "auth (401, no or wrong credentials), client_cert (403, no client "
		       "certificate or one the client CA did not sign), tls (closed before "
		       "the TLS handshake finished), limit (over 32 connections, or 16 from "
		       "one address), timeout (idle 10 s before the request was whole or answered)");
	for (i = 0; i < N_REFUSED; i++)
		tk_prom_sample(f, "tracekit_scrape_refused_total",
			       __atomic_load_n(&refused[i], __ATOMIC_RELAXED),
			       "reason", reasons[i], NULL);
	for (i = 0; i < SCRAPE_CONNECTIONS; i++)
		open += slots[i].used;
	tk_prom_family(f, "tracekit_scrape_connections", "gauge",
		       "Scrape connections open, this one included (at most 32)");
	tk_prom_sample(f, "tracekit_scrape_connections", open, NULL);
}
