/* Drop reasons by name, from the kernel's BTF (dropreason.h). */
#include <bpf/btf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropreason.h"
#include "kbtf.h"
#include "setup.h"

static char **reasons;
static int n_reasons;
static int reason_consumed = -1, reason_unspecified = -1;

static void read_reasons(void)
{
	static bool done;
	const struct btf *btf;
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	if (done)
		return;
	done = true;
	btf = tk_kernel_btf();
	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id <= 0)
		return;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, e[i].name_off);
		int v = e[i].val;

		if (v < 0 || v > 65535 || !name)
			continue;
		if (v >= n_reasons) {
			char **r = realloc(reasons, (v + 1) * sizeof(*r));

			if (!r)
				tk_fail("out of memory");
			memset(r + n_reasons, 0, (v + 1 - n_reasons) * sizeof(*r));
			reasons = r;
			n_reasons = v + 1;
		}
		if (!strcmp(name, "SKB_CONSUMED"))
			reason_consumed = v;
		else if (!strcmp(name, "SKB_DROP_REASON_NOT_SPECIFIED"))
			reason_unspecified = v;
		if (!strncmp(name, "SKB_DROP_REASON_", 16))
			name += 16;
		if (!(reasons[v] = strdup(name)))
			tk_fail("out of memory");
	}
}

const char *tk_drop_reason_name(int r, char *buf, size_t len)
{
	if (r < 0)
		return "-";
	read_reasons();
	if (r < n_reasons && reasons[r])
		return reasons[r];
	snprintf(buf, len, "UNKNOWN");
	return buf;
}

int tk_drop_reason_consumed(void)
{
	read_reasons();
	return reason_consumed;
}

int tk_drop_reason_unspecified(void)
{
	read_reasons();
	return reason_unspecified;
}

int tk_kfree_skb_nargs(void)
{
	return tk_tp_nargs("kfree_skb");
}

const char *tk_ip_proto_name(int p, char *buf, size_t len)
{
	switch (p) {
	case 6: return "tcp";
	case 17: return "udp";
	case 1: return "icmp";
	case 58: return "icmp6";
	case 132: return "sctp";
	}
	snprintf(buf, len, "%d", p);
	return buf;
}
