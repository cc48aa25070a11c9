/* scrapes.c: what keeps scrapes from hurting the daemon, and counts
 * what it turned away: the connection limits, checked as libmicrohttpd
 * accepts, and the bookkeeping of each connection that tells a timeout
 * or a failed TLS handshake when it closes. All of it runs on
 * libmicrohttpd's one thread. */
#ifndef TRACEKITD_SCRAPES_H
#define TRACEKITD_SCRAPES_H

#include <microhttpd.h>
#include <stdbool.h>
#include <sys/socket.h>

#define SCRAPE_CONNECTIONS 32  /* open at once, in all */
#define SCRAPE_PER_CLIENT 16   /* open at once, from one address */
#define SCRAPE_TIMEOUT_S 10    /* idle: no byte in or out */

enum scrape_refusal {
	REFUSED_AUTH,        /* 401: no or wrong basic auth credentials */
	REFUSED_CLIENT_CERT, /* 403: no client certificate, or not one the CA signed */
	REFUSED_TLS,         /* closed before its TLS handshake completed */
	REFUSED_LIMIT,       /* over SCRAPE_CONNECTIONS or SCRAPE_PER_CLIENT */
	REFUSED_TIMEOUT,     /* idle SCRAPE_TIMEOUT_S before a request was whole or answered */
	N_REFUSED,
};

void scrapes_reset(bool tls);
void scrapes_refused(enum scrape_refusal why);
/* MHD_OPTION_ACCEPT_POLICY (as the apc of MHD_start_daemon),
 * MHD_OPTION_NOTIFY_CONNECTION and MHD_OPTION_NOTIFY_COMPLETED. */
enum MHD_Result scrapes_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void scrapes_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			enum MHD_ConnectionNotificationCode code);
void scrapes_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
		       enum MHD_RequestTerminationCode toe);
/* The access handler's first call for a request. */
void scrapes_request(struct MHD_Connection *conn);

#endif
