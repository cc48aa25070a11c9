/* Symbolization (see symbolize.h): processes, their mappings and JIT
 * maps, and the per-file caches; the kernel side is ksyms.c, one ELF
 * file's symbols usyms.c, the text parsers symparse.c.
 *
 * A process is a sorted array of its executable mappings, each pointing
 * at a file shared by every process that maps the same (dev, ino). Files
 * are opened when the process is noted (through /proc/PID/map_files,
 * which names the very file mapped, in whatever mount namespace), and the
 * descriptor kept, so the process may exit before its stacks are printed.
 * Not thread-safe: one tk_syms per thread. */
#include "symbolize.h"
#include "symbolize_int.h"
#include "ksymbpf.h"
#include "symparse.h"
#include "setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* Processes kept before the least recently used are forgotten. */
#define MAX_PROCS 8192
/* How often a process is re-read when an address misses its mappings
 * (it dlopen'ed or its JIT wrote code since): a garbage address must not
 * cost a read of /proc/PID/maps each time. */
#define RENOTE_NS 100000000LL

struct file {
	unsigned long long dev, ino;
	struct tk_elf *e;
	size_t refs;
	struct file *next;
};

struct map {
	unsigned long long start, end, pgoff;
	struct file *f;       /* NULL: anonymous or a pseudo mapping */
	const char *pseudo;   /* "[vdso]", "[heap]"...: interned; or NULL */
};

struct jsym {
	unsigned long long start, size;
	size_t name;          /* offset in jit_names */
};

struct proc {
	pid_t pid;
	unsigned long long starttime;
	struct map *maps;
	size_t nmaps;
	struct jsym *jit;
	size_t njit;
	char *jit_names;
	char **old_names;     /* names of earlier reads: tk_sym strings
			       * handed out must outlive a re-read */
	size_t nold_names;
	char *jit_path;       /* /proc/PID/root/tmp/perf-NSPID.map */
	long long jit_size;   /* its size when read; -1: not read */
	long long last_note;  /* monotonic ns */
	unsigned long long last_use;
	struct proc *next;
};

struct tk_syms {
	struct tk_syms_opts opts;
	char *debug_dirs;
	char *debuginfo_path;       /* libdwfl's search path */
	char *kallsyms_path;
	struct tk_ksyms *k;
	bool k_warned;
	struct tk_ksym_bpf *kb;     /* the kernel names addresses */
	bool kb_tried;
	bool cache;
	struct proc **procs;        /* hash by pid */
	size_t nprocs, procs_cap;
	struct file **files;        /* hash by (dev, ino) */
	size_t nfiles, files_cap;
	size_t nfds, max_fds;       /* descriptors files hold */
	unsigned long long tick;
	char **pseudo;              /* interned pseudo mapping names */
	size_t npseudo;
	struct tk_elf *vdso;        /* our own vDSO's image, in a memfd */
	size_t vdso_size;
	bool vdso_tried;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t mix(unsigned long long a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

struct tk_syms *tk_syms_new(const struct tk_syms_opts *opts)
{
	struct tk_syms *s = calloc(1, sizeof(*s));
	const char *dirs;
	struct rlimit rl;

	if (!s)
		return NULL;
	if (opts)
		s->opts = *opts;
	dirs = s->opts.debug_dirs ? s->opts.debug_dirs : "/usr/lib/debug";
	/* libdwfl's path: "" is the file's own directory and ".debug" a
	 * subdirectory of it (for .gnu_debuglink), then the absolute
	 * directories, searched by build-id and by debuglink. */
	if (!(s->debug_dirs = strdup(dirs)) ||
	    asprintf(&s->debuginfo_path, ":.debug:%s", dirs) < 0) {
		s->debuginfo_path = NULL;
		goto oom;
	}
	s->opts.debug_dirs = s->debug_dirs;
	s->cache = true;
	s->procs_cap = 256;
	s->files_cap = 256;
	s->procs = calloc(s->procs_cap, sizeof(*s->procs));
	s->files = calloc(s->files_cap, sizeof(*s->files));
	if (!s->procs || !s->files)
		goto oom;
	/* Keep at most half the descriptors we may open for files of
	 * exited processes; past that, files are opened when needed and
	 * only while their process lives. */
	s->max_fds = 512;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		s->max_fds = rl.rlim_cur / 2 > 16 ? rl.rlim_cur / 2 : 16;
	return s;
oom:
	tk_syms_free(s);
	errno = ENOMEM;
	return NULL;
}

static void file_unref(struct tk_syms *s, struct file *f)
{
	struct file **pp;

	if (--f->refs)
		return;
	for (pp = &s->files[mix(f->dev * 31 + f->ino) & (s->files_cap - 1)];
	     *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	if (!tk_elf_needs_fd(f->e))
		s->nfds--;
	tk_elf_free(f->e);
	free(f);
	s->nfiles--;
}

static void proc_clear(struct tk_syms *s, struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].f)
			file_unref(s, p->maps[i].f);
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
	free(p->jit);
	p->jit = NULL;
	p->njit = 0;
	free(p->jit_names);
	p->jit_names = NULL;
	for (size_t k = 0; k < p->nold_names; k++)
		free(p->old_names[k]);
	free(p->old_names);
	p->old_names = NULL;
	p->nold_names = 0;
	free(p->jit_path);
	p->jit_path = NULL;
	p->jit_size = -1;
}

void tk_syms_free(struct tk_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; s->procs && i < s->procs_cap; i++) {
		struct proc *p = s->procs[i], *n;

		for (; p; p = n) {
			n = p->next;
			proc_clear(s, p);
			free(p);
		}
	}
	free(s->procs);
	free(s->files);
	for (i = 0; i < s->npseudo; i++)
		free(s->pseudo[i]);
	free(s->pseudo);
	tk_ksyms_free(s->k);
	tk_ksym_bpf_free(s->kb);
	tk_elf_free(s->vdso);
	free(s->kallsyms_path);
	free(s->debuginfo_path);
	free(s->debug_dirs);
	free(s);
}

void tk_syms_set_cache(struct tk_syms *s, bool on)
{
	s->cache = on;
}

void tk_syms_set_kallsyms_path(struct tk_syms *s, const char *path)
{
	free(s->kallsyms_path);
	s->kallsyms_path = path ? strdup(path) : NULL;
}

/* ---- kernel ---- */

int tk_syms_kernel(struct tk_syms *s, unsigned long long addr,
		   struct tk_sym *out)
{
	*out = (struct tk_sym){ NULL, NULL, addr, false };
	/* The kernel names the few addresses a tool shows in a fraction of
	 * the time /proc/kallsyms takes to read whole; where it cannot,
	 * or a name does not parse, the file. */
	if (!s->k && !s->kallsyms_path && !s->kb_tried) {
		s->kb_tried = true;
		s->kb = tk_ksym_bpf_open();
		tk_info("kernel symbols: %s", s->kb ? "named by the kernel (bpf_snprintf's %pB)"
						    : "from /proc/kallsyms");
	}
	if (s->kb) {
		if (tk_ksym_bpf_lookup(s->kb, addr, out))
			return 1;
		tk_info("kernel symbols: the kernel gave no name for 0x%llx: from /proc/kallsyms now",
			addr);
		tk_ksym_bpf_free(s->kb);
		s->kb = NULL;
		*out = (struct tk_sym){ NULL, NULL, addr, false };
	}
	if (!s->k) {
		/* Loaded on the first kernel address: tools that only
		 * print user stacks never pay for it. */
		s->k = tk_ksyms_load(s->kallsyms_path ? s->kallsyms_path
						      : "/proc/kallsyms");
		if (!s->k)
			return 1;
		if (tk_ksyms_restricted(s->k) && !s->k_warned) {
			s->k_warned = true;
			tk_warn("kernel symbols unavailable: /proc/kallsyms shows "
				"only zero addresses (kernel.kptr_restrict; run as root)");
		}
	}
	tk_ksyms_lookup(s->k, addr, out);
	return 1;
}

/* ---- files ---- */

static struct file *file_find(struct tk_syms *s, unsigned long long dev,
			      unsigned long long ino)
{
	struct file *f = s->files[mix(dev * 31 + ino) & (s->files_cap - 1)];

	while (f && (f->dev != dev || f->ino != ino))
		f = f->next;
	return f;
}

static void files_grow(struct tk_syms *s)
{
	size_t ncap = s->files_cap * 2, i;
	struct file **nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return;   /* longer chains; still correct */
	for (i = 0; i < s->files_cap; i++) {
		struct file *f = s->files[i], *n;

		for (; f; f = n) {
			size_t h = mix(f->dev * 31 + f->ino) & (ncap - 1);

			n = f->next;
			f->next = nt[h];
			nt[h] = f;
		}
	}
	free(s->files);
	s->files = nt;
	s->files_cap = ncap;
}

/* path, opened if it is still the file (dev, ino); else -1. */
static int open_same(const char *path, unsigned long long dev, unsigned long long ino,
		     bool check_dev)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != ino ||
			(check_dev && st.st_dev != dev))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Open the file of mapping [start, end) of pid: map_files names the very
 * file mapped, in whatever mount namespace, even deleted; the path
 * under /proc/PID/root is the fallback (checked to be the same inode).
 * Both are gone once the process has exited, which can come while its
 * mappings are being noted (a short-lived process, or one that exits
 * just after its first event): then the path in the tool's own mount
 * namespace, if it is the same file by device and inode. */
static int open_mapped(pid_t pid, unsigned long long start, unsigned long long end,
		       const char *path, bool deleted, unsigned long long dev,
		       unsigned long long ino)
{
	char buf[PATH_MAX + 64];
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)pid, start, end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || deleted || !path)
		return fd;
	if ((size_t)snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path) >= sizeof(buf))
		return -1;
	fd = open_same(buf, dev, ino, false);
	if (fd < 0 && errno == ENOENT && kill(pid, 0) && errno == ESRCH)
		fd = open_same(path, dev, ino, true);
	return fd;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The file for a mapping line, found or created (with one more ref).
 * NULL when out of memory. */
static struct file *file_get(struct tk_syms *s, pid_t pid, const struct tk_maps_line *l,
			     const char *path)
{
	unsigned long long dev = makedev(l->dev_major, l->dev_minor);
	struct file *f = file_find(s, dev, l->ino);
	char dir_path[PATH_MAX + 64];
	int fd = -1;

	if (f) {
		if (tk_elf_needs_fd(f->e) && s->nfds < s->max_fds &&
		    (fd = open_mapped(pid, l->start, l->end, path, l->deleted, dev, l->ino)) >= 0) {
			tk_elf_set_fd(f->e, fd);
			s->nfds++;
		}
		f->refs++;
		return f;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return NULL;
	if (s->nfds < s->max_fds)
		fd = open_mapped(pid, l->start, l->end, path, l->deleted, dev, l->ino);
	snprintf(dir_path, sizeof(dir_path), "/proc/%d/root%s", (int)pid, path);
	if (!(f->e = tk_elf_new(fd, base_name(path), dir_path, &s->debuginfo_path))) {
		free(f);
		return NULL;
	}
	if (fd >= 0)
		s->nfds++;
	f->dev = dev;
	f->ino = l->ino;
	f->refs = 1;
	if (s->nfiles * 2 >= s->files_cap)
		files_grow(s);
	f->next = s->files[mix(dev * 31 + l->ino) & (s->files_cap - 1)];
	s->files[mix(dev * 31 + l->ino) & (s->files_cap - 1)] = f;
	s->nfiles++;
	return f;
}

static const char *intern_pseudo(struct tk_syms *s, const char *name, size_t len)
{
	size_t i;
	char **np;

	for (i = 0; i < s->npseudo; i++)
		if (!strncmp(s->pseudo[i], name, len) && !s->pseudo[i][len])
			return s->pseudo[i];
	if (s->npseudo >= 64)   /* "[anon:NAME]" could be many: cap */
		return NULL;
	if (!(np = realloc(s->pseudo, (s->npseudo + 1) * sizeof(*np))))
		return NULL;
	s->pseudo = np;
	if (!(np[s->npseudo] = strndup(name, len)))
		return NULL;
	return np[s->npseudo++];
}

/* ---- processes ---- */

static struct proc *proc_find(struct tk_syms *s, pid_t pid)
{
	struct proc *p = s->procs[mix((unsigned)pid) & (s->procs_cap - 1)];

	while (p && p->pid != pid)
		p = p->next;
	return p;
}

static void proc_unlink(struct tk_syms *s, struct proc *victim)
{
	struct proc **pp = &s->procs[mix((unsigned)victim->pid) & (s->procs_cap - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == victim) {
			*pp = victim->next;
			s->nprocs--;
			return;
		}
	}
}

static int cmp_use(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

/* Forget the least recently used quarter of the processes (their files
 * go with their last mapping): bounds memory on a busy machine. */
static void procs_evict(struct tk_syms *s)
{
	struct proc **all = malloc(s->nprocs * sizeof(*all));
	size_t i, n = 0, drop;

	if (!all)
		return;
	for (i = 0; i < s->procs_cap; i++)
		for (struct proc *p = s->procs[i]; p; p = p->next)
			all[n++] = p;
	qsort(all, n, sizeof(*all), cmp_use);
	drop = n / 4;
	for (i = 0; i < drop; i++) {
		proc_unlink(s, all[i]);
		proc_clear(s, all[i]);
		free(all[i]);
	}
	free(all);
}

static void procs_grow(struct tk_syms *s)
{
	size_t ncap = s->procs_cap * 2, i;
	struct proc **nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i < s->procs_cap; i++) {
		struct proc *p = s->procs[i], *n;

		for (; p; p = n) {
			size_t h = mix((unsigned)p->pid) & (ncap - 1);

			n = p->next;
			p->next = nt[h];
			nt[h] = p;
		}
	}
	free(s->procs);
	s->procs = nt;
	s->procs_cap = ncap;
}

/* Field 22 of /proc/PID/stat: tells a reused pid from the process noted
 * before. 0 when it cannot be read. */
static unsigned long long read_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: start after the last ')'. */
	if (!(p = strrchr(buf, ')')))
		return 0;
	/* After ")": field 3 (state) ... field 22 (starttime). */
	for (i = 3; i <= 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st;
}

/* The pid the process has in its own (innermost) pid namespace: the last
 * field of "NSpid:"; pid itself when the kernel does not say. */
static pid_t read_nspid(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	pid_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return pid;
	while (getline(&line, &cap, f) > 0) {
		char *last;

		if (strncmp(line, "NSpid:", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		if (!last)
			last = strrchr(line, ' ');
		if (last && atoi(last + 1) > 0)
			ns = atoi(last + 1);
		break;
	}
	free(line);
	fclose(f);
	return ns;
}

static int cmp_jsym(const void *a, const void *b)
{
	const struct jsym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* (Re-)read the process's perf map. Later lines win over earlier ones
 * for the same start (a JIT that recompiled). */
static void jit_read(struct proc *p)
{
	struct jsym *v = NULL;
	size_t n = 0, cap = 0, nlen = 0, ncap = 0, lcap = 0, i, j;
	char *names = NULL, *line = NULL;
	struct stat st;
	ssize_t len;
	FILE *f;

	if (!p->jit_path || !(f = fopen(p->jit_path, "re")))
		return;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return;
	}
	while ((len = getline(&line, &lcap, f)) > 0) {
		struct tk_perfmap_line l;

		if (tk_parse_perfmap_line(line, (size_t)len, &l))
			continue;
		if (n == cap) {
			struct jsym *nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!nv)
				goto out;
			v = nv;
		}
		if (nlen + l.name_len + 1 > ncap) {
			char *nn;

			ncap = ncap ? ncap * 2 : 4096;
			while (ncap < nlen + l.name_len + 1)
				ncap *= 2;
			if (!(nn = realloc(names, ncap)))
				goto out;
			names = nn;
		}
		v[n++] = (struct jsym){ l.start, l.size, nlen };
		memcpy(names + nlen, l.name, l.name_len);
		nlen += l.name_len;
		names[nlen++] = '\0';
	}
	/* Stable order for equal starts: by line (name offsets grow). */
	qsort(v, n, sizeof(*v), cmp_jsym);
	for (i = j = 0; i < n; i++) {
		if (j && v[j - 1].start == v[i].start) {
			if (v[i].name > v[j - 1].name)
				v[j - 1] = v[i];
			continue;
		}
		v[j++] = v[i];
	}
	if (p->jit_names) {
		char **on = realloc(p->old_names, (p->nold_names + 1) * sizeof(*on));

		if (!on)
			goto out;
		p->old_names = on;
		on[p->nold_names++] = p->jit_names;
	}
	free(p->jit);
	p->jit = v;
	p->njit = j;
	p->jit_names = names;
	p->jit_size = st.st_size;
	v = NULL;
	names = NULL;
out:
	free(line);
	free(v);
	free(names);
	fclose(f);
}

static const struct jsym *jit_find(const struct proc *p, unsigned long long addr)
{
	size_t lo = 0, hi = p->njit, j, steps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->jit[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries may overlap (regions reused); look back a little. */
	for (j = lo, steps = 0; j-- > 0 && steps < 16; steps++)
		if (addr - p->jit[j].start < p->jit[j].size)
			return &p->jit[j];
	return NULL;
}

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* old minus the ranges of nw (both sorted, nw non-overlapping) appended
 * to out: what is left of the old mappings that new ones did not
 * replace. Each piece keeps its file offset. Returns the count, or -1. */
static int subtract_maps(struct tk_syms *s, const struct map *old, size_t nold,
			 const struct map *nw, size_t nnew, struct map **out, size_t *nout,
			 size_t *cap)
{
	size_t i, k = 0;

	for (i = 0; i < nold; i++) {
		unsigned long long a = old[i].start, b = old[i].end;

		while (k < nnew && nw[k].end <= a)
			k++;
		for (size_t j = k; a < b; j++) {
			unsigned long long pe = b;

			if (j < nnew && nw[j].start < b)
				pe = nw[j].start > a ? nw[j].start : a;
			if (pe > a) {
				struct map m = old[i];

				if (*nout == *cap) {
					struct map *nm = realloc(*out, (*cap = *cap * 2 + 16) * sizeof(*nm));

					if (!nm)
						return -1;
					*out = nm;
				}
				m.pgoff += a - m.start;
				m.start = a;
				m.end = pe;
				if (m.f)
					m.f->refs++;
				(*out)[(*nout)++] = m;
			}
			if (j >= nnew || nw[j].start >= b)
				break;
			a = nw[j].end;
		}
	}
	(void)s;
	return 0;
}

/* A new, empty entry for pid. */
static struct proc *proc_new(struct tk_syms *s, pid_t pid)
{
	struct proc *p;

	if (s->nprocs >= MAX_PROCS)
		procs_evict(s);
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->jit_size = -1;
	if (s->nprocs * 2 >= s->procs_cap)
		procs_grow(s);
	p->next = s->procs[mix((unsigned)pid) & (s->procs_cap - 1)];
	s->procs[mix((unsigned)pid) & (s->procs_cap - 1)] = p;
	s->nprocs++;
	return p;
}

int tk_syms_note_pid(struct tk_syms *s, pid_t pid)
{
	char path[64], *line = NULL;
	struct map *nw = NULL, *all = NULL;
	size_t nnew = 0, cap = 0, lcap = 0, nall, acap, i;
	unsigned long long st;
	struct proc *p;
	ssize_t len;
	int err = 0;
	FILE *f;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? -ESRCH : -errno;
	st = read_starttime(pid);
	if (!st) {
		/* Gone since fopen (its parent reaped it in between: a
		 * traced COMMAND's is the tool's SIGCHLD handler). Not a new
		 * process: keep what was noted of it. Before, this cleared its
		 * mappings, and all of a short COMMAND's frames printed
		 * [unknown] (seen in the kernel matrix). */
		fclose(f);
		return -ESRCH;
	}
	p = proc_find(s, pid);
	if (p && p->starttime != st) {
		/* The pid was reused: the process noted before is gone. */
		proc_clear(s, p);
	} else if (!p && !(p = proc_new(s, pid))) {
		fclose(f);
		return -ENOMEM;
	}
	p->starttime = st;
	p->last_note = now_ns();
	p->last_use = ++s->tick;
	while ((len = getline(&line, &lcap, f)) > 0) {
		struct tk_maps_line l;
		struct map m = { 0 };
		char *mpath = NULL;

		if (tk_parse_maps_line(line, (size_t)len, &l))
			continue;
		/* Only code matters, plus [vdso] whose code we name too. */
		if (l.perms[2] != 'x')
			continue;
		m.start = l.start;
		m.end = l.end;
		m.pgoff = l.pgoff;
		if (l.path_len && l.path[0] == '/' && l.ino) {
			if (!(mpath = strndup(l.path, l.path_len))) {
				err = -ENOMEM;
				break;
			}
			m.f = file_get(s, pid, &l, mpath);
			free(mpath);
			if (!m.f) {
				err = -ENOMEM;
				break;
			}
		} else if (l.path_len && l.path[0] == '[') {
			m.pseudo = intern_pseudo(s, l.path, l.path_len);
		}
		if (nnew == cap) {
			struct map *nm = realloc(nw, (cap = cap * 2 + 32) * sizeof(*nm));

			if (!nm) {
				if (m.f)
					file_unref(s, m.f);
				err = -ENOMEM;
				break;
			}
			nw = nm;
		}
		nw[nnew++] = m;
	}
	free(line);
	fclose(f);
	if (!err) {
		qsort(nw, nnew, sizeof(*nw), cmp_map);
		/* Merge: the new mappings, and what the new ones leave of
		 * the old (a library since unmapped still symbolizes the
		 * stacks taken while it was there). */
		nall = 0;
		acap = nnew + p->nmaps + 16;
		all = malloc(acap * sizeof(*all));
		if (!all || subtract_maps(s, p->maps, p->nmaps, nw, nnew, &all, &nall, &acap))
			err = -ENOMEM;
		if (!err && nall + nnew > acap) {
			struct map *na = realloc(all, (nall + nnew) * sizeof(*all));

			if (na)
				all = na;
			else
				err = -ENOMEM;
		}
		if (!err) {
			memcpy(all + nall, nw, nnew * sizeof(*nw));
			nall += nnew;
			qsort(all, nall, sizeof(*all), cmp_map);
			for (i = 0; i < p->nmaps; i++)
				if (p->maps[i].f)
					file_unref(s, p->maps[i].f);
			free(p->maps);
			p->maps = all;
			p->nmaps = nall;
			all = NULL;
			nall = 0;
			nnew = 0;
		}
		for (i = 0; i < nall; i++)
			if (all[i].f)
				file_unref(s, all[i].f);
	}
	for (i = 0; i < nnew; i++)
		if (nw[i].f)
			file_unref(s, nw[i].f);
	free(nw);
	free(all);
	if (err)
		return err;
	if (!p->jit_path) {
		if (asprintf(&p->jit_path, "/proc/%d/root/tmp/perf-%d.map", (int)pid,
			     (int)read_nspid(pid)) < 0)
			p->jit_path = NULL;
	}
	jit_read(p);
	return 0;
}

static const struct map *map_find(const struct proc *p, unsigned long long addr)
{
	size_t lo = 0, hi = p->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

static bool alive(const struct proc *p)
{
	return read_starttime(p->pid) == p->starttime && p->starttime;
}

/* The vDSO has no file to open: its image is the kernel's, the same in
 * every process of our architecture, so ours (copied into a memfd for
 * libdwfl) names __vdso_clock_gettime and friends in any process whose
 * [vdso] mapping has our size (a 32-bit process's does not). */
static struct tk_elf *vdso_elf(struct tk_syms *s, size_t size)
{
	const unsigned char *img;
	char *line = NULL;
	size_t cap = 0, len = 0;
	FILE *f;
	int fd;

	if (s->vdso_tried)
		return s->vdso && s->vdso_size == size ? s->vdso : NULL;
	s->vdso_tried = true;
	img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!img || !(f = fopen("/proc/self/maps", "re")))
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		struct tk_maps_line l;

		if (!tk_parse_maps_line(line, strlen(line), &l) && l.path_len == 6 &&
		    !memcmp(l.path, "[vdso]", 6) && l.start == (uintptr_t)img) {
			len = l.end - l.start;
			break;
		}
	}
	free(line);
	fclose(f);
	if (!len || (fd = memfd_create("tk-vdso", MFD_CLOEXEC)) < 0)
		return NULL;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	s->vdso = tk_elf_new(fd, "[vdso]", NULL, &s->debuginfo_path);
	s->vdso_size = len;
	return s->vdso && len == size ? s->vdso : NULL;
}

static int user_file(struct tk_syms *s, const struct proc *p, const struct map *m,
		     unsigned long long addr, struct tk_sym *out, int max)
{
	unsigned long long off = addr - m->start + m->pgoff, vaddr;
	struct tk_elf *e = m->f->e;

	if (tk_elf_needs_fd(e)) {
		/* Not opened at note time (too many descriptors kept):
		 * only a live process still shows the file. */
		int fd = open_mapped(p->pid, m->start, m->end, NULL, true, 0, 0);

		if (fd >= 0) {
			tk_elf_set_fd(e, fd);
			s->nfds++;
		}
	}
	if (!tk_elf_off2vaddr(e, off, &vaddr)) {
		out[0] = (struct tk_sym){ NULL, tk_elf_name(e), off, false };
		return 1;
	}
	return tk_elf_lookup(e, vaddr, s->opts.inline_frames, s->cache, out, max);
}

int tk_syms_note_fork(struct tk_syms *s, pid_t pid, pid_t parent)
{
	int err = tk_syms_note_pid(s, pid);
	struct proc *p = proc_find(s, pid), *pp;

	/* A zombie's maps read empty: as good as gone. */
	if (parent <= 0 || (p && p->nmaps))
		return err;
	if (!(pp = proc_find(s, parent)) &&
	    (tk_syms_note_pid(s, parent) || !(pp = proc_find(s, parent))))
		return err;
	if (!p && !(p = proc_new(s, pid)))
		return -ENOMEM;
	if (pp->nmaps && !(p->maps = malloc(pp->nmaps * sizeof(*p->maps))))
		return -ENOMEM;
	memcpy(p->maps, pp->maps, pp->nmaps * sizeof(*p->maps));
	p->nmaps = pp->nmaps;
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].f)
			p->maps[i].f->refs++;
	if (!p->starttime)
		p->starttime = 1;  /* not the process's: a pid reused
				    * later is read anew */
	p->last_note = now_ns();
	p->last_use = ++s->tick;
	return 0;
}

int tk_syms_note_jit(struct tk_syms *s, pid_t pid)
{
	struct proc *p = proc_find(s, pid);
	struct stat st;

	if (!p)
		return tk_syms_note_pid(s, pid);
	if (p->jit_path && !stat(p->jit_path, &st) && st.st_size != p->jit_size)
		jit_read(p);
	return 0;
}

int tk_syms_user(struct tk_syms *s, pid_t pid, unsigned long long addr,
		 struct tk_sym *out, int max)
{
	const struct map *m;
	const struct jsym *j;
	struct proc *p;

	out[0] = (struct tk_sym){ NULL, NULL, addr, false };
	if (max < 1)
		return 0;
	p = proc_find(s, pid);
	if (!p) {
		if (tk_syms_note_pid(s, pid) || !(p = proc_find(s, pid)))
			return 1;
	}
	p->last_use = ++s->tick;
	m = map_find(p, addr);
	if (!m || (!m->f && !jit_find(p, addr))) {
		/* Code mapped (or JIT-compiled) since the process was
		 * noted: read it again, if it still lives. */
		long long t = now_ns();

		if (t - p->last_note >= RENOTE_NS && alive(p)) {
			if (!m)
				tk_syms_note_pid(s, pid);
			else if (p->jit_path) {
				struct stat st;

				if (!stat(p->jit_path, &st) && st.st_size != p->jit_size)
					jit_read(p);
			}
			p->last_note = t;
			m = map_find(p, addr);
		}
	}
	if (m && m->f)
		return user_file(s, p, m, addr, out, max);
	if (m && m->pseudo && !strcmp(m->pseudo, "[vdso]")) {
		struct tk_elf *e = vdso_elf(s, m->end - m->start);
		unsigned long long vaddr;

		if (e && tk_elf_off2vaddr(e, addr - m->start + m->pgoff, &vaddr))
			return tk_elf_lookup(e, vaddr, false, s->cache, out, max);
	}
	if ((j = jit_find(p, addr))) {
		out[0].name = p->jit_names + j->name;
		out[0].module = "[jit]";
		out[0].offset = addr - j->start;
		return 1;
	}
	if (m && m->pseudo)
		out[0].module = m->pseudo;
	return 1;
}

bool tk_syms_user_cfi(struct tk_syms *s, pid_t pid, unsigned long long addr,
		      void **cfi, unsigned long long *cfi_addr, const char **module)
{
	unsigned long long vaddr, bias;
	struct tk_elf *e = NULL;
	const struct map *m;
	struct tk_sym sym;
	struct proc *p;

	*module = NULL;
	/* Notes the process and re-reads its mappings as a lookup would. */
	tk_syms_user(s, pid, addr, &sym, 1);
	p = proc_find(s, pid);
	m = p ? map_find(p, addr) : NULL;
	if (!m)
		return false;
	if (m->f)
		e = m->f->e;
	else if (m->pseudo && !strcmp(m->pseudo, "[vdso]"))
		e = vdso_elf(s, m->end - m->start);
	*module = e ? tk_elf_name(e) : m->pseudo;
	if (!e || !tk_elf_off2vaddr(e, addr - m->start + m->pgoff, &vaddr))
		return false;
	*cfi = tk_elf_cfi(e, &bias);
	*cfi_addr = vaddr - bias;
	return *cfi != NULL;
}

const char *tk_sym_format(const struct tk_sym *sym, char *buf, size_t size)
{
	if (!size)
		return buf;
	/* A .dynsym name may carry its version ("clock_gettime@@GLIBC_2.17"):
	 * people know the function by its name alone, as perf shows it. */
	if (sym->name)
		snprintf(buf, size, "%.*s", (int)strcspn(sym->name, "@"), sym->name);
	else if (sym->module)
		snprintf(buf, size, "[unknown] (%s)", sym->module);
	else
		snprintf(buf, size, "[unknown]");
	return buf;
}

const char *tk_syms_addr_text(struct tk_syms *s, unsigned long long addr, bool user, pid_t pid,
			      char *buf, size_t size)
{
	struct tk_sym sym[8];
	int n = !s ? 0 : user ? tk_syms_user(s, pid, addr, sym, 8) : tk_syms_kernel(s, addr, sym);

	if (n > 0 && sym[n - 1].name) {
		const struct tk_sym *t = &sym[n - 1];
		int len = snprintf(buf, size, "%.*s", (int)strcspn(t->name, "@"), t->name);

		if (t->offset && len >= 0 && (size_t)len < size)
			snprintf(buf + len, size - (size_t)len, "+0x%llx", t->offset);
	} else {
		snprintf(buf, size, "0x%llx", addr);
	}
	return buf;
}
