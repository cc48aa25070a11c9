/* Stacks sent by their frames (stackring.h): a table by id, each
 * entry's frames copied as they came. */
#include "stackring.h"

#include <stdlib.h>
#include <string.h>

#include "setup.h"
#include "tk_stack.h"
#include "u64map.h"

struct ring_stack {
	bool conflict;
	uint64_t *ips;       /* depth frames */
};

static struct tk_u64map ring = TK_U64MAP_INIT(struct ring_stack);
static unsigned long long conflicts;

void tk_stack_ring_add(const void *data, size_t size, unsigned depth)
{
	const struct tk_stack_ring_head *head = data;
	size_t bytes = depth * sizeof(uint64_t);
	struct ring_stack *s;
	bool added;

	if (size < sizeof(*head) + bytes || !(head->id & TK_STACK_RING_ID))
		return;
	if (!(s = tk_u64map_put(&ring, (uint32_t)head->id, &added)))
		tk_fail("out of memory");
	if (!added) {
		/* Sent again (BPF's record of it evicted), or another stack
		 * whose hash met this one's. */
		if (!s->conflict && memcmp(s->ips, head + 1, bytes)) {
			s->conflict = true;
			conflicts++;
		}
		return;
	}
	if (!(s->ips = malloc(bytes)))
		tk_fail("out of memory");
	memcpy(s->ips, head + 1, bytes);
}

bool tk_stack_ring_get(int id, uint64_t *ips, unsigned depth)
{
	const struct ring_stack *s = tk_u64map_get(&ring, (uint32_t)id);

	if (!s || s->conflict)
		return false;
	memcpy(ips, s->ips, depth * sizeof(uint64_t));
	return true;
}

void tk_stack_ring_stats(unsigned long long *stacks, unsigned long long *conflicts_out)
{
	/* An id shared is at least two stacks. */
	*stacks = tk_u64map_count(&ring) + conflicts;
	*conflicts_out = conflicts;
}
