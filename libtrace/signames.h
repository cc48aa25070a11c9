/* Signal names and lists of them (-s 9,TERM), as the signal tools
 * (killsnoop, sigsnoop, exitsnoop) print and take them. */
#ifndef TK_SIGNAMES_H
#define TK_SIGNAMES_H

/* The kernel's signal numbers: 1-64 (0: a kill() that only checks). */
#define TK_SIG_MAX 64

/* "KILL" for 9 (glibc's sigabbrev_np, without "SIG"); NULL for a number
 * glibc has no name of (the real-time ones, 32-64). */
const char *tk_signal_name(int sig);

/* A signal's number from "9", "KILL", "SIGKILL" or "sigkill" (0-64);
 * -1 when it is none. */
int tk_signal_parse(const char *s);

/* A comma-separated list of those (-s 9,TERM) into mask: bit n of
 * mask[n / 64]. 0, or -1 with *bad at the item that is no signal. */
int tk_signal_list_parse(const char *s, unsigned long long mask[2], const char **bad);

#endif
