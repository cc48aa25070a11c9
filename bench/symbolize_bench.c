/* Symbolization benchmark (libtrace/symbolize.c): user stacks of a large
 * shared library mapped by a live process, resolved through the real
 * path a profiler takes (pid -> /proc/PID/maps -> file -> symbols).
 *
 *   symbolize_bench [LIB [STACKS [DEPTH]]]
 *
 * A child dlopen()s LIB (default libLLVM-14) and sleeps. Stacks of DEPTH
 * frames are drawn deterministically (an LCG) from a pool of addresses,
 * each a function symbol of LIB plus a small offset, as a profile's
 * addresses recur. Pass 1 (cold) includes reading the maps, opening the
 * file and loading its symbol table; pass 2 (warm) is the same frames
 * again; pass 3 the same with the result cache off. A subsample is then
 * resolved by eu-addr2line (and binutils addr2line when present) and by a
 * fresh tk_syms, each from nothing, and the names compared.
 * Prints a markdown table (bench/RESULTS.md). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize.h"
#include "symbolize_int.h"

#define POOL 20000
#define SUBSAMPLE 2000

struct func {
	unsigned long long value, size;
	char *name;
};

static struct func *funcs;
static size_t nfuncs;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t lcg_state;

static uint64_t lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return lcg_state >> 17;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Function symbols of the file, read with libelf (not the code under
 * test): .symtab when there is one, else .dynsym. */
static void read_funcs(const char *path, unsigned long long *load_vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL, *pick = NULL;
	Elf *elf;
	size_t phnum, i;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "symbolize_bench: cannot read %s\n", path);
		exit(1);
	}
	*load_vaddr = 0;
	if (!elf_getphdrnum(elf, &phnum)) {
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_offset == 0) {
				*load_vaddr = ph.p_vaddr;
				break;
			}
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !pick))
			pick = scn;
	}
	if (pick) {
		GElf_Shdr sh;
		Elf_Data *d = elf_getdata(pick, NULL);
		size_t n;

		gelf_getshdr(pick, &sh);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		funcs = calloc(n, sizeof(*funcs));
		for (i = 0; d && i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || sym.st_size < 4 || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			funcs[nfuncs].value = sym.st_value;
			funcs[nfuncs].size = sym.st_size;
			funcs[nfuncs].name = strdup(name);
			nfuncs++;
		}
	}
	elf_end(elf);
	close(fd);
	if (!nfuncs) {
		fprintf(stderr, "symbolize_bench: no function symbols in %s\n", path);
		exit(1);
	}
}

/* Where the child mapped the file: start of its mapping at offset 0. */
static unsigned long long find_base(pid_t pid, const char *real)
{
	char path[64], line[PATH_MAX + 128];
	unsigned long long start = 0, end, off;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (strcmp(p, real) || sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3)
			continue;
		if (!off)
			break;
		start = 0;
	}
	if (f)
		fclose(f);
	return start;
}

struct pooled {
	unsigned long long addr;
	size_t func;
};

/* Run an addr2line-like tool over the subsample's file addresses;
 * returns wall seconds and counts names equal to ours. */
static double run_ref(const char *tool, const char *lib, const struct pooled *pool,
		      unsigned long long bias, char **ours, size_t n, size_t *agree,
		      size_t *resolved)
{
	char in[] = "/tmp/tk-symbench-in-XXXXXX", out[64], cmd[PATH_MAX * 2 + 256];
	char line[4096];
	FILE *f;
	double t;
	size_t i;
	int fd = mkstemp(in);

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(f, "0x%llx\n", pool[i].addr - bias);
	fclose(f);
	snprintf(out, sizeof(out), "%s.out", in);
	snprintf(cmd, sizeof(cmd), "%s -f -e %s < %s > %s 2>/dev/null", tool, lib, in, out);
	t = now();
	if (system(cmd)) {
		unlink(in);
		unlink(out);
		return -1;
	}
	t = now() - t;
	*agree = *resolved = 0;
	f = fopen(out, "r");
	for (i = 0; f && i < n && fgets(line, sizeof(line), f); i++) {
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, "??"))
			(*resolved)++;
		if (ours[i] && !strcmp(line, ours[i]))
			(*agree)++;
		if (!fgets(line, sizeof(line), f))   /* file:line */
			break;
	}
	if (f)
		fclose(f);
	unlink(in);
	unlink(out);
	return t;
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	long nstacks = argc > 2 ? atol(argv[2]) : 100000;
	int depth = argc > 3 ? atoi(argv[3]) : 20;
	char real[PATH_MAX], c;
	unsigned long long base, load_vaddr, bias, resolved[3] = { 0 }, exact = 0;
	struct pooled *pool;
	struct tk_syms *s;
	struct tk_sym sym;
	double t[3], ts, tk_load, tk_look;
	long rss0, rss1;
	int pfd[2], pass;
	char **ours;
	pid_t pid;
	size_t i, agree_eu = 0, res_eu = 0, agree_bu = 0, res_bu = 0;
	unsigned long long frames = (unsigned long long)nstacks * (unsigned)depth;

	if (!realpath(lib, real)) {
		fprintf(stderr, "symbolize_bench: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (!pid) {
		void *h = dlopen(real, RTLD_LAZY | RTLD_LOCAL);

		c = h ? 'y' : 'n';
		if (write(pfd[1], &c, 1) != 1 || !h)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(pfd[0], &c, 1) != 1 || c != 'y') {
		fprintf(stderr, "symbolize_bench: the child could not dlopen %s\n", real);
		return 1;
	}
	read_funcs(real, &load_vaddr);
	base = find_base(pid, real);
	if (!base) {
		fprintf(stderr, "symbolize_bench: %s not in the child's maps\n", real);
		kill(pid, SIGKILL);
		return 1;
	}
	bias = base - load_vaddr;

	lcg_state = 42;
	pool = malloc(POOL * sizeof(*pool));
	for (i = 0; i < POOL; i++) {
		size_t fi = lcg() % nfuncs;
		unsigned long long lim = funcs[fi].size < 64 ? funcs[fi].size : 64;

		pool[i].func = fi;
		pool[i].addr = bias + funcs[fi].value + lcg() % lim;
	}

	rss0 = peak_rss_kb();
	s = tk_syms_new(NULL);
	for (pass = 0; pass < 3; pass++) {
		if (pass == 2)
			tk_syms_set_cache(s, false);
		lcg_state = 7;
		t[pass] = now();
		for (long st = 0; st < nstacks; st++) {
			for (int d = 0; d < depth; d++) {
				const struct pooled *p = &pool[lcg() % POOL];

				tk_syms_user(s, pid, p->addr, &sym, 1);
				if (sym.name) {
					resolved[pass]++;
					if (pass == 0 && sym.offset == p->addr - bias - funcs[p->func].value)
						exact++;
				}
			}
		}
		t[pass] = now() - t[pass];
	}
	rss1 = peak_rss_kb();
	tk_syms_free(s);

	/* Subsample, from nothing: a fresh tk_syms vs the reference tools. */
	ours = calloc(SUBSAMPLE, sizeof(*ours));
	s = tk_syms_new(NULL);
	ts = now();
	for (i = 0; i < SUBSAMPLE; i++) {
		tk_syms_user(s, pid, pool[i].addr, &sym, 1);
		ours[i] = sym.name ? strdup(sym.name) : NULL;
	}
	ts = now() - ts;
	tk_syms_free(s);
	double teu = run_ref("eu-addr2line", real, pool, bias, ours, SUBSAMPLE, &agree_eu, &res_eu);
	double tbu = run_ref("addr2line", real, pool, bias, ours, SUBSAMPLE, &agree_bu, &res_bu);

	/* Kernel: load /proc/kallsyms, then lookups of its own addresses. */
	s = tk_syms_new(NULL);
	tk_load = now();
	tk_syms_kernel(s, 0, &sym);
	tk_load = now() - tk_load;
	{
		unsigned long long ka[4096];
		size_t nk = 0;
		char line[512];
		FILE *f = fopen("/proc/kallsyms", "r");

		while (f && nk < 4096 && fgets(line, sizeof(line), f)) {
			unsigned long long a;
			char ty;

			if (sscanf(line, "%llx %c", &a, &ty) == 2 && a && (ty == 't' || ty == 'T'))
				ka[nk++] = a + 3;
		}
		if (f)
			fclose(f);
		tk_look = now();
		for (i = 0; i < 1000000 && nk; i++)
			tk_syms_kernel(s, ka[(i * 2654435761u) % nk], &sym);
		tk_look = now() - tk_look;
	}
	tk_syms_free(s);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	printf("Symbolization: %s (%zu function symbols), %ld stacks x %d frames = %llu "
	       "frames, drawn from %d addresses\n\n", real, nfuncs, nstacks, depth, frames, POOL);
	printf("| measure | value |\n|---|---|\n");
	printf("| cold pass (maps, open, symbol table load, %llu frames) | %.3f s, %.0f ns/frame |\n",
	       frames, t[0], t[0] * 1e9 / frames);
	printf("| warm pass (result cache) | %.3f s, %.0f ns/frame |\n", t[1], t[1] * 1e9 / frames);
	printf("| warm pass, result cache off (binary search) | %.3f s, %.0f ns/frame |\n",
	       t[2], t[2] * 1e9 / frames);
	printf("| frames resolved (cold / warm / no cache) | %.2f%% / %.2f%% / %.2f%% |\n",
	       100.0 * resolved[0] / frames, 100.0 * resolved[1] / frames,
	       100.0 * resolved[2] / frames);
	printf("| frames with the exact expected offset | %.2f%% |\n", 100.0 * exact / frames);
	printf("| peak RSS (before -> after) | %ld -> %ld KiB |\n", rss0, rss1);
	printf("| %d addresses from nothing: tracekit | %.3f s (%.1f us/address) |\n",
	       SUBSAMPLE, ts, ts * 1e6 / SUBSAMPLE);
	if (teu >= 0)
		printf("| same, eu-addr2line -f | %.3f s (%.1f us/address), %.1fx tracekit's time; "
		       "names agree %.2f%% (it resolved %zu) |\n", teu, teu * 1e6 / SUBSAMPLE,
		       teu / ts, 100.0 * agree_eu / SUBSAMPLE, res_eu);
	else
		printf("| same, eu-addr2line | not run (apt-get install elfutils) |\n");
	if (tbu >= 0)
		printf("| same, binutils addr2line -f | %.3f s (%.1f us/address), %.1fx tracekit's time; "
		       "names agree %.2f%% (it resolved %zu) |\n", tbu, tbu * 1e6 / SUBSAMPLE,
		       tbu / ts, 100.0 * agree_bu / SUBSAMPLE, res_bu);
	printf("| kernel: load /proc/kallsyms | %.1f ms |\n", tk_load * 1e3);
	printf("| kernel: 1,000,000 lookups | %.0f ns/lookup |\n", tk_look * 1e9 / 1000000);
	printf("\nMade by `bench/symbolize_bench.sh` (libtrace's symbolizer, as the stack tools "
	       "use it), the library loaded with `dlopen` in a live child. The per-address result "
	       "cache makes warm lookups %.1fx faster than the binary search alone. libdwfl's "
	       "`dwfl_module_addrinfo` scans the whole symbol table on each call, so function "
	       "symbols are copied once into a sorted array. Cold times vary about 3x between "
	       "runs on this shared machine (49-166 ns/frame seen).\n", t[2] / t[1]);
	return 0;
}
