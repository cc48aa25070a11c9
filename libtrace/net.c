#include "net.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpf.h"
#include "opts.h"

const char *tk_addr_str(int ip, const unsigned char *addr, char *buf, size_t len)
{
	if (!inet_ntop(ip == 4 ? AF_INET : AF_INET6, addr, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* include/net/tcp_states.h, in bcc's spelling. */
static const char *const tcp_states[] = {
	[1] = "ESTABLISHED", [2] = "SYN_SENT", [3] = "SYN_RECV",
	[4] = "FIN_WAIT1", [5] = "FIN_WAIT2", [6] = "TIME_WAIT",
	[7] = "CLOSE", [8] = "CLOSE_WAIT", [9] = "LAST_ACK",
	[10] = "LISTEN", [11] = "CLOSING", [12] = "NEW_SYN_RECV",
	[13] = "BOUND_INACTIVE",
};

const char *tk_tcp_state_name(int state, char *buf, size_t len)
{
	if (state > 0 && state < (int)(sizeof(tcp_states) / sizeof(*tcp_states)))
		return tcp_states[state];
	snprintf(buf, len, "%d", state);
	return buf;
}

int tk_ports_arg(const char *option, const char *arg, unsigned short *ports, int max)
{
	const char *p = arg;
	char *end = (char *)arg;
	long port;
	int n = 0;

	do {
		if (*p < '0' || *p > '9')  /* no sign, blank or empty item */
			port = 0;
		else
			port = strtol(p, &end, 10);
		if (port < 1 || port > 65535 || (*end && *end != ','))
			tk_usage_error("invalid %s value '%s': expected ports from 1 to 65535, comma-separated (e.g. 80,443)",
				       option, arg);
		if (n == max)
			tk_usage_error("invalid %s value '%s': at most %d ports",
				       option, arg, max);
		ports[n++] = port;
		p = end + 1;
	} while (*end);
	return n;
}

void tk_ip_arg(int *ip, int key)
{
	if (*ip && *ip != key - '0')
		tk_usage_error("--ipv4 and --ipv6 exclude each other; give neither for both");
	*ip = key - '0';
}

bool tk_sock_opts_parse(struct tk_sock_opts *o, int key, const char *arg)
{
	switch (key) {
	case 'L':
		o->n_lports = tk_ports_arg("--localport", arg, o->lports, TK_SOCK_MAX_PORTS);
		return true;
	case 'D':
		o->n_dports = tk_ports_arg("--remoteport", arg, o->dports, TK_SOCK_MAX_PORTS);
		return true;
	case '4':
	case '6':
		tk_ip_arg(&o->ip, key);
		return true;
	}
	return false;
}

int tk_sock_opts_apply(const struct tk_sock_opts *o, struct bpf_object *obj)
{
	int err;

	if ((err = tk_set_rodata(obj, "tk_sock_ip", &o->ip, sizeof(o->ip))) ||
	    (err = tk_set_rodata(obj, "tk_sock_n_lports", &o->n_lports, sizeof(o->n_lports))) ||
	    (err = tk_set_rodata(obj, "tk_sock_lports", o->lports, sizeof(o->lports))) ||
	    (err = tk_set_rodata(obj, "tk_sock_n_dports", &o->n_dports, sizeof(o->n_dports))) ||
	    (err = tk_set_rodata(obj, "tk_sock_dports", o->dports, sizeof(o->dports))))
		return err;
	return 0;
}
