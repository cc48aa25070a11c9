/* Stacks sent by their frames (stackring.h): an open-addressing table by
 * id, each entry's frames copied as they came. */
#include "stackring.h"

#include <stdlib.h>
#include <string.h>

#include "setup.h"
#include "tk_stack.h"

struct ring_stack {
	int id;              /* 0: an empty slot (ring ids are never 0) */
	bool conflict;
	uint64_t *ips;       /* depth frames */
};

static struct {
	struct ring_stack *slots;
	size_t cap, used;
	unsigned long long conflicts;
} ring;

static struct ring_stack *slot_of(int id)
{
	size_t i = ((uint32_t)id * 2654435761u) & (ring.cap - 1);

	while (ring.slots[i].id && ring.slots[i].id != id)
		i = (i + 1) & (ring.cap - 1);
	return &ring.slots[i];
}

static void grow(void)
{
	struct ring_stack *old = ring.slots;
	size_t oldcap = ring.cap;

	ring.cap = oldcap ? oldcap * 2 : 256;
	if (!(ring.slots = calloc(ring.cap, sizeof(*ring.slots))))
		tk_fail("out of memory");
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].id)
			*slot_of(old[i].id) = old[i];
	free(old);
}

void tk_stack_ring_add(const void *data, size_t size, unsigned depth)
{
	const struct tk_stack_ring_head *head = data;
	size_t bytes = depth * sizeof(uint64_t);
	struct ring_stack *s;

	if (size < sizeof(*head) + bytes || !(head->id & TK_STACK_RING_ID))
		return;
	if (ring.used * 2 >= ring.cap)
		grow();
	s = slot_of(head->id);
	if (s->id) {
		/* Sent again (BPF's record of it evicted), or another stack
		 * whose hash met this one's. */
		if (!s->conflict && memcmp(s->ips, head + 1, bytes)) {
			s->conflict = true;
			ring.conflicts++;
		}
		return;
	}
	if (!(s->ips = malloc(bytes)))
		tk_fail("out of memory");
	memcpy(s->ips, head + 1, bytes);
	s->id = head->id;
	ring.used++;
}

bool tk_stack_ring_get(int id, uint64_t *ips, unsigned depth)
{
	struct ring_stack *s;

	if (!ring.cap)
		return false;
	s = slot_of(id);
	if (!s->id || s->conflict)
		return false;
	memcpy(ips, s->ips, depth * sizeof(uint64_t));
	return true;
}

void tk_stack_ring_stats(unsigned long long *stacks, unsigned long long *conflicts)
{
	/* An id shared is at least two stacks. */
	*stacks = ring.used + ring.conflicts;
	*conflicts = ring.conflicts;
}
