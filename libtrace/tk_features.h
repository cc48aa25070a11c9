/* What this kernel and this process can do for tracing, found by trying:
 * each probe loads and attaches a trivial BPF program (or creates a map,
 * or reads the setting) and reports ok and one line of detail: what it
 * saw and, when not ok, what would fix it. Kernel versions are never
 * consulted; the kernel's build configuration (/proc/config.gz or
 * /boot/config-RELEASE), when present, only sharpens the explanation.
 *
 * Probes leave the system as they found it: filesystems they need
 * (tracefs for tracepoint ids, securityfs for the lockdown mode) are
 * mounted in a private mount namespace of a short-lived child process.
 *
 * Also here: running a tool's --dry-run with a time limit and reading
 * what it reports (tracekit-doctor; tracekitd can ask the same). */
#ifndef TK_FEATURES_H
#define TK_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum tk_feature_id {
	/* What programs and maps the kernel takes. */
	TK_FEAT_BTF,
	TK_FEAT_RINGBUF,
	TK_FEAT_PERF_BUFFER,
	TK_FEAT_TRACEPOINTS,
	TK_FEAT_RAW_TP,
	TK_FEAT_TP_BTF,
	TK_FEAT_FENTRY,
	TK_FEAT_KPROBES,
	TK_FEAT_UPROBES,
	TK_FEAT_TRACEFS,
	/* Kernel settings: ok means they do not stop this process. */
	TK_FEAT_LOCKDOWN,
	TK_FEAT_PERF_EVENT_PARANOID,
	TK_FEAT_UNPRIVILEGED_BPF,
	TK_FEAT_BPF_STATS,
	/* This process. */
	TK_FEAT_CAPABILITIES,
	TK_FEAT_MEMLOCK,
	TK_FEAT_COUNT
};

enum tk_feature_group { TK_FGROUP_ATTACH, TK_FGROUP_KERNEL, TK_FGROUP_PROCESS };

enum tk_value_kind { TK_VALUE_NONE, TK_VALUE_INT, TK_VALUE_NULL };

struct tk_feature {
	bool ok;
	char detail[512];          /* one line */
	char mode[24];             /* lockdown: none, integrity, confidentiality */
	enum tk_value_kind value_kind;
	long long value;           /* perf_event_paranoid, unprivileged_bpf,
				    * bpf_stats: the sysctl; memlock: the soft
				    * RLIMIT_MEMLOCK in bytes (NULL: unlimited) */
};

/* The JSON key ("btf", "perf_event_paranoid", ...) and the group. */
const char *tk_feature_name(enum tk_feature_id id);
enum tk_feature_group tk_feature_group(enum tk_feature_id id);
/* The id of a JSON key, or -1. */
int tk_feature_by_name(const char *name);

/* Probe one feature. Safe to call in any order and more than once; the
 * memlock probe reports the limit the process started with (libbpf
 * raises it on kernels that need it). */
void tk_feature_probe(enum tk_feature_id id, struct tk_feature *out);

/* Does the kernel take BPF's atomic compare-and-swap (Linux 5.12)?
 * Probed once by loading a program that uses it. */
bool tk_bpf_has_atomics(void);

/* True when this process may load tracing programs: CAP_SYS_ADMIN, or
 * CAP_BPF and CAP_PERFMON. */
bool tk_privileged(void);

/* --- Kernel build configuration --- */

/* Read the configuration from path (plain text or gzip); 0 or -errno.
 * tk_kconfig() calls it with /proc/config.gz, then /boot/config-RELEASE. */
int tk_kconfig_load(const char *path);
/* The file the configuration came from, or NULL when there is none. */
const char *tk_kconfig_source(void);
/* 'y', 'm', or 'n' (for "# CONFIG_X is not set" and for an option
 * missing from a configuration that was found); 0 when there is no
 * configuration. option includes "CONFIG_". */
char tk_kconfig(const char *option);
/* What one line of a configuration says about option: 'y', 'm', 'n',
 * or 0 when the line is not about it. */
char tk_kconfig_parse_line(const char *line, const char *option);

/* --- Parsers, exposed for the unit tests --- */

/* The selected mode of /sys/kernel/security/lockdown's text
 * ("none [integrity] confidentiality") into mode; 0, or -EINVAL. */
int tk_lockdown_parse(const char *text, char *mode, size_t size);

/* The file offset and path of the mapping that holds addr, read from
 * /proc/PID/maps text; 0, or -ENOENT. */
int tk_maps_file_offset(FILE *maps, unsigned long addr, unsigned long *offset,
			char *path, size_t size);

/* --- Tools: what `TOOL --dry-run` reports --- */

struct tk_dry_probe {
	char probe[64];
	char method[16];
	char target[256];
};

struct tk_tool_check {
	bool ok;                   /* exited 0 */
	struct tk_dry_probe *probes;
	int n_probes;
	char transport[16];        /* "ringbuf", "perf", or "" (no events) */
	char error[512];           /* when not ok: the tool's stderr line */
};

/* True when path is an executable regular file built with libtrace (it
 * names TRACEKIT_READY_FD, which every tool reads): only those are run,
 * so that a doctor installed among other programs runs none of them. */
bool tk_is_tracekit_tool(const char *path);

/* Run `path --dry-run args...` (args NULL-terminated, may be NULL) with
 * stdin from /dev/null; kill it (its process group) after timeout_s.
 * Fills *out; returns 0, or -errno when it could not be started. */
int tk_tool_check_run(const char *path, const char *const *args,
		      double timeout_s, struct tk_tool_check *out);

/* Fill out from a dry run's stdout ("probe NAME METHOD TARGET",
 * "transport ID"); other lines are ignored. 0 or -ENOMEM. */
int tk_tool_check_parse(const char *text, struct tk_tool_check *out);

void tk_tool_check_free(struct tk_tool_check *c);

#endif
