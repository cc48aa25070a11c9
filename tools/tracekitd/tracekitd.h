/* tracekitd: always-on counting with the tools' BPF programs, served to
 * Prometheus. main.c runs the lifecycle (config, signals, systemd,
 * capabilities), http.c the scrape endpoint, metrics.c the exposition;
 * each collector_*.c wraps one tool's BPF object. */
#ifndef TRACEKITD_H
#define TRACEKITD_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TRACEKITD_DEFAULT_CONFIG "/etc/tracekit/tracekitd.conf"
#define TRACEKITD_DEFAULT_LISTEN "127.0.0.1:9949"
#define TRACEKITD_DEFAULT_MAX_SERIES 1000

/* The label value of the series that holds what the cap turned away. */
#define TRACEKITD_OVERFLOW_LABEL "__overflow__"

enum collector_id {
	COLLECT_SYSCALLS,
	COLLECT_EXECS,
	COLLECT_RUNQLAT,
	COLLECT_TCPCONNECT,
	COLLECT_VFSSTAT,
	COLLECT_BLOCK,
	COLLECT_FS,
	COLLECT_TCPSTATES,
	COLLECT_NETDEV,
	COLLECT_DROPS,
	COLLECT_RETRANS,
	COLLECT_HARDIRQS,
	COLLECT_SOFTIRQS,
	COLLECT_CPUDIST,
	COLLECT_RUNQLEN,
	N_COLLECTORS,
};

struct config {
	char listen[128];         /* ADDR:PORT, [ADDR6]:PORT */
	unsigned long max_series; /* per labelled metric */
	bool strict;              /* a collector that cannot start is fatal */
	bool enabled[N_COLLECTORS];
	/* fs_types: the fs collector's file systems, space-separated names
	 * of libtrace/fstypes.c's; empty: those in /proc/filesystems. */
	char fs_types[64];
	/* web_config: the exporters' web config file (webconfig.h): TLS,
	 * basic auth. Empty: plain HTTP, no auth. */
	char web_config[512];
};

/* Defaults, then the file (a missing default file is no error, a missing
 * --config file is). 0, or -1 with one line in err ("FILE:LINE: ..."). */
int config_load(struct config *c, const char *path, bool path_given,
		char *err, size_t errlen);
/* Is ADDR:PORT well-formed? Fills the socket address. */
struct sockaddr_storage;
int config_parse_listen(const char *s, struct sockaddr_storage *ss,
			char *err, size_t errlen);

/* One collector: a tool's BPF object, loaded by start. */
struct collector {
	const char *name;   /* its key in [collectors] */
	const char *help;   /* what it counts, for --help and the README */
	/* Load and attach; 0, or -1 with the cause in err. */
	int (*start)(const struct config *c, char *err, size_t errlen);
	/* Drain events, if it has any (called often from the main loop). */
	void (*poll)(void);
	/* Its own metrics (HELP/TYPE included). */
	void (*write)(FILE *f);
	/* Detach and unload. */
	void (*stop)(void);
	/* The loaded object, for the health metrics; NULL when stopped. */
	struct bpf_object *(*object)(void);
	/* Not run unless the configuration enables it. */
	bool off_by_default;
};

extern const struct collector collector_syscalls, collector_execs,
	collector_runqlat, collector_tcpconnect, collector_vfsstat, collector_block,
	collector_fs, collector_tcpstates, collector_netdev, collector_drops,
	collector_retrans;
extern const struct collector collector_hardirqs, collector_softirqs,
	collector_cpudist, collector_runqlen;
extern const struct collector *const collectors[N_COLLECTORS];

/* A collector's skeleton NAME (bpftool's NAME, NAME__destroy): defines
 * skel, load_skel (tk_try_load with CONFIGURE, which may be NULL),
 * unload_skel (detach, destroy) and object, the collector's .object. */
#define COLLECTOR_SKELETON(NAME, CONFIGURE)                                  \
	TK_SKEL_OPS(NAME);                                                   \
	static struct NAME *skel;                                            \
	static int load_skel(char *err, size_t errlen)                       \
	{                                                                    \
		skel = tk_try_load(&NAME##_ops, CONFIGURE, NULL, err, errlen); \
		return skel ? 0 : -1;                                        \
	}                                                                    \
	static void unload_skel(void)                                        \
	{                                                                    \
		if (!skel)                                                   \
			return;                                              \
		tk_detach_object(skel->obj);                                 \
		NAME##__destroy(skel);                                       \
		skel = NULL;                                                 \
	}                                                                    \
	static struct bpf_object *object(void)                               \
	{                                                                    \
		return skel ? skel->obj : NULL;                              \
	}

/* metrics.c: what each started collector attached, for the health
 * metrics; recorded right after its load. */
void health_record(enum collector_id id, struct bpf_object *obj);
void health_failed(enum collector_id id, const char *why);
void health_stopped(enum collector_id id);
/* Everything /metrics serves. */
void metrics_write(FILE *f, const struct config *c);
/* Series the caps turned away, by metric (for the health metrics). */
void metrics_note_dropped(const char *metric, unsigned long long n);

/* A labelled counter family under the series cap (max_series): samples
 * past the cap are summed, then written as one series whose labels are
 * all TRACEKITD_OVERFLOW_LABEL and counted in
 * tracekit_series_dropped_total. Zero it, set metric, call capped_sample
 * per sample (labels as in tk_prom_sample_v), then capped_end with the
 * label names (at most 8). */
struct capped {
	const char *metric;
	unsigned long long series, overflow;
};
void capped_sample(FILE *f, struct capped *c, unsigned long long n,
		   const char *const *labels, int nlabels);
void capped_end(FILE *f, struct capped *c, const char *const *names, int nlabels);

/* collect_irqs.c: hardirqs' or softirqs' map irqs (keys: action
 * addresses, named by the map names; or, names NULL, softirq vector
 * numbers) as the counter families seconds (time) and runs, labelled
 * label, one sample per name; tool names a read error. */
void irqs_write(FILE *f, struct bpf_map *map, struct bpf_map *names, const char *tool,
		const char *label, const char *seconds, const char *seconds_help,
		const char *runs, const char *runs_help);

/* http.c: serve on listen with the web config w (read by webconfig_load;
 * http.c takes it over on success). http_restart: a new daemon in place
 * of the running one; when it cannot start, the old one again (and -1). */
struct web_config;
int http_start(const char *listen, struct web_config *w, char *err, size_t errlen);
int http_restart(const char *listen, struct web_config *w, char *err, size_t errlen);
void http_stop(void);
const char *http_scheme(void);  /* "https" when serving TLS */
/* scrapes.c: tracekit_scrape_* (refusals by reason, open connections). */
void scrapes_write(FILE *f);

/* main.c: held while collectors change or metrics are written. */
void state_lock(void);
void state_unlock(void);
const struct config *current_config(void);

#endif
