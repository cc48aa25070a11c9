/* Where to put an entry uprobe so that the kernel emulates the probed
 * instruction instead of single-stepping it.
 *
 * A uprobe replaces an instruction with int3; after the BPF program the
 * kernel must execute the original. x86 emulates jumps, calls, nops and
 * (from 6.10) pushes in the trap; anything else is copied to a page of
 * its own and single-stepped, a second trap. glibc's free begins with
 * `test %rdi,%rdi; je`, so each probed free cost two traps where malloc
 * (`push %r12`) cost one: 17 us against 1.9 us, measured. */
#ifndef TK_UPROBE_ENTRY_H
#define TK_UPROBE_ENTRY_H

#include <stdbool.h>

/* The file offset to probe for an entry probe of the function at file
 * offset off in binary: off itself, or the offset of the conditional
 * jump when the function begins with a test of a register against itself
 * followed by one. The test writes only the flags, which no entry probe
 * reads, so the arguments and the stack pointer there are the entry's.
 * Off whenever the file cannot be read or on other architectures. */
unsigned long long tk_uprobe_entry_offset(const char *binary, unsigned long long off);

/* The loaded code segment around file offset off of binary: *below
 * bytes of it before off, *above from off to its end. A probe at off
 * sees its own address in the instruction pointer, so a return address
 * in [ip - below, ip + above) is a call from the same object's code,
 * whatever its load address. False (both 0) when off is in no
 * executable segment or the file cannot be read. */
bool tk_uprobe_code_span(const char *binary, unsigned long long off,
			 unsigned long long *below, unsigned long long *above);

#endif
