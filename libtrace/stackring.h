/* Stacks that reached userspace by their frames on tk_events, not in a
 * stack map (TK_STACK_RING_ID in bpf/tk_stack.h): both of BPF's stack
 * maps were full, or the stack's place in each was another's. Kept by
 * id for the whole run: BPF sends a stack again only once its record
 * of having sent it is evicted. */
#ifndef TK_STACKRING_H
#define TK_STACKRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One event (struct tk_stack_ring_head, then depth frames, zeros after
 * the last). A second stack under an id already held makes the id a
 * conflict: neither is given out. */
void tk_stack_ring_add(const void *data, size_t size, unsigned depth);

/* Frames of stack id into ips[0..depth) (zeros after the last); false
 * when it has not arrived or its id is a conflict. */
bool tk_stack_ring_get(int id, uint64_t *ips, unsigned depth);

/* Distinct stacks received (an id shared taken as two), and ids that
 * two or more stacks shared. */
void tk_stack_ring_stats(unsigned long long *stacks, unsigned long long *conflicts);

#endif
