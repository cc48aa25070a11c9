/* User stacks unwound by the binaries' call frame information (.eh_frame,
 * .debug_frame through libdw's CFI API), from what BPF captured at the
 * event: the user registers (ip, sp, the frame pointer and arm64's link
 * register) and a copy of the top of the user stack, beside the kernel's
 * frame-pointer walk of the same stack.
 *
 * Mode TK_UNWIND_AUTO: unwind by CFI from the leaf until a frame whose
 * function keeps a frame pointer (its CFI saves the caller's frame
 * pointer and the return address as a frame record where the frame
 * pointer points) holds one that the frame-pointer walk went through,
 * then take the walk's frames from there: a libc wrapper that pushes no
 * frame no longer hides its caller, at the price of a small snapshot. Mode TK_UNWIND_CFI: by CFI all the way, as
 * far as the snapshot reaches (binaries without frame pointers).
 *
 * Where the unwind stops before the stack's end it says why (enum
 * tk_unwind_stop), and the caller ends the stack with a marker frame
 * (tk_unwind_marker); no frame is ever guessed. x86-64 and arm64 (where
 * the frame pointer is x29, and a leaf's return address may still be in
 * the link register, x30): elsewhere tk_unwind_user returns the
 * frame-pointer walk unchanged. */
#ifndef TK_UNWIND_H
#define TK_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tk_syms;

enum tk_unwind_mode {
	TK_UNWIND_FP,    /* the kernel's frame-pointer walk only */
	TK_UNWIND_AUTO,  /* CFI from the leaf, then the frame-pointer walk */
	TK_UNWIND_CFI,   /* CFI all the way */
};

enum tk_unwind_stop {
	TK_UNWIND_DONE,       /* complete: the outermost frame, or joined
			       * the frame-pointer walk */
	TK_UNWIND_FALLBACK,   /* the leaf could not be unwound by CFI: the
			       * frame-pointer walk as it was */
	TK_UNWIND_SNAPSHOT,   /* needed stack beyond the snapshot */
	TK_UNWIND_NO_CFI,     /* a frame in code without CFI (JIT, anon) */
	TK_UNWIND_REGISTER,   /* the CFI needs a register not captured */
	TK_UNWIND_BAD_CFI,    /* an expression the unwinder does not know,
			       * or a frame that does not move up */
	TK_UNWIND_STOP_MAX,
};

/* The registers captured at the event (tk_stack.h's uregs): bp is the
 * frame pointer (arm64's x29); lr arm64's link register (x30), 0 on
 * x86-64. */
struct tk_uregs {
	uint64_t ip, sp, bp, lr;
};

/* Unwind process pid's user stack into out[0..max): addresses as the
 * kernel's stack map holds them (the leaf's IP, then return addresses).
 * fp[0..nfp) is the kernel's frame-pointer walk of the same stack.
 * snap[0..len) is the user memory from r->sp. *stop says where it ended;
 * *module names the file of the frame where it stopped (or NULL).
 * Returns the number of addresses. */
size_t tk_unwind_user(struct tk_syms *s, pid_t pid, enum tk_unwind_mode mode,
		      const struct tk_uregs *r, const uint8_t *snap, size_t len,
		      const uint64_t *fp, size_t nfp, uint64_t *out, size_t max,
		      enum tk_unwind_stop *stop, const char **module);

/* The marker frame that ends a stack stopped early: "[unwind: ...]", or
 * NULL for TK_UNWIND_DONE and TK_UNWIND_FALLBACK. */
const char *tk_unwind_marker(enum tk_unwind_stop stop);

/* "fp", "auto", "cfi"; and back (-1: none of them). */
const char *tk_unwind_mode_name(enum tk_unwind_mode mode);
int tk_unwind_mode_parse(const char *name);

#endif
