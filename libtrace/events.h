/* Events from BPF to userspace: a ring buffer, or per-CPU perf buffers on
 * kernels without one (before 5.8), behind one interface; and the loss
 * report every tool prints at exit. */
#ifndef TK_EVENTS_H
#define TK_EVENTS_H

#include <bpf/libbpf.h>
#include <stddef.h>

/* Handle one event; return non-zero to stop polling. */
typedef int (*tk_event_fn)(void *ctx, const void *data, size_t size);

/* Before load: pick the transport (TRACEKIT_TRANSPORT=perf forces the perf
 * buffer) and size the tk_events map from --buffer-kb. */
int tk_events_prepare(struct bpf_object *obj);

/* "ring buffer" or "perf buffer", for people; "ringbuf" or "perf", for
 * scripts (as TRACEKIT_TRANSPORT takes it). */
const char *tk_events_transport_name(void);
const char *tk_events_transport_id(void);

/* Set the default buffer size of a tool (KiB) before tk_load. */
void tk_events_default_kb(unsigned long kb);

/* Start reading tk_events; exits 1 with the cause on failure. */
void tk_events_open(struct bpf_object *obj, tk_event_fn fn, void *ctx);

/* An fd that polls readable when events are waiting (an epoll fd), for
 * a program that waits on other things too; -1 when none is open. */
int tk_events_fd(void);

/* Stop reading tk_events (before its object is destroyed), so that
 * another object's can be opened. */
void tk_events_close(void);

/* Wait up to timeout_ms and handle what came. Returns events handled, 0 on
 * timeout or signal, or negative when fn asked to stop. */
int tk_events_poll(int timeout_ms);

/* Run the poll loop until tk_exiting(). */
void tk_events_loop(void);

/* Losses counted so far: events not submitted (BPF side and perf buffer
 * overwrites), failed map inserts, and runs of the object's programs the
 * kernel skipped (runs_missed: bpf_prog_info.recursion_misses, Linux
 * 5.12+; 0 before). A run is skipped when the program is already running
 * on that CPU and an interrupt fires its hook again (a block completion
 * or a wakeup in a hard irq that came during one in task context): the
 * kernel's recursion guard drops it without a word to the program. */
struct tk_losses {
	unsigned long long events;
	unsigned long long map_full;
	unsigned long long unseen;   /* TK_LOSS_UNSEEN */
	unsigned long long runs_missed;
};
void tk_losses_read(struct bpf_object *obj, struct tk_losses *out);

/* At exit: a stderr line in text mode when anything was lost; a
 * {"type":"loss",...} record in JSON mode, always. */
void tk_losses_report(struct bpf_object *obj);

/* The stderr lines of tk_losses_report for events lost and for failed
 * map inserts (nothing when none). */
void tk_losses_warn_events(const struct tk_losses *l);

/* The stderr line for skipped runs (nothing when none). */
void tk_losses_warn_missed(const struct tk_losses *l);

#endif
