/* Unit tests of libtrace's symbolization (symbolize.c, ksyms.c, usyms.c,
 * symparse.c), run as root: programs are built with cc at test time
 * (sources in symprog.h), run, and their functions symbolized by the
 * addresses they print, exactly: name, module, offset. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize.h"
#include "symbolize_int.h"
#include "symparse.h"
#include "symprog.h"
#include "stacks.h"

static char tmpdir[] = "/tmp/tk-syms-XXXXXX";
static char emptydir[PATH_MAX];   /* a debug dir with nothing in it */

/* ---- helpers ---- */

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc) {
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
		fail();
	}
}

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(tpath(name), "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

struct child {
	pid_t pid;
	int in;          /* its stdin */
	FILE *out;       /* its stdout */
	int n;
	char name[16][64];
	unsigned long long addr[16];
};

/* Read "NAME 0xADDR" lines up to "ready" (or one reply line). */
static void read_lines(struct child *c, bool until_ready)
{
	char line[256], name[48];
	unsigned long long a;

	while (fgets(line, sizeof(line), c->out)) {
		if (!strcmp(line, "ready\n") || !strcmp(line, "jit2 ok\n"))
			return;
		if (sscanf(line, "%47s %llx", name, &a) == 2 && c->n < 16) {
			snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
			c->addr[c->n++] = a;
		}
		if (!until_ready)
			return;
	}
	fail_msg("child %d ended early", (int)c->pid);
}

static unsigned long long addr_of(const struct child *c, const char *name)
{
	int i;

	for (i = c->n; i-- > 0;)
		if (!strcmp(c->name[i], name))
			return c->addr[i];
	fail_msg("child did not print %s", name);
	return 0;
}

/* Start prog (argv[1] = arg, may be NULL); with ns_dir, the child first
 * enters a mount namespace of its own, mounts a tmpfs on ns_dir, copies
 * prog there as ns_dir/nsprog and runs that copy. */
static void spawn(struct child *c, const char *prog, const char *arg,
		  const char *ns_dir)
{
	int in[2], out[2];

	memset(c, 0, sizeof(*c));
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		char copy[PATH_MAX], cmd[2 * PATH_MAX + 16];

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (ns_dir) {
			if (unshare(CLONE_NEWNS) ||
			    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", ns_dir, "tmpfs", 0, NULL))
				_exit(120);
			snprintf(copy, sizeof(copy), "%s/nsprog", ns_dir);
			snprintf(cmd, sizeof(cmd), "cp %s %s", prog, copy);
			if (system(cmd))
				_exit(121);
			prog = copy;
		}
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = fdopen(out[0], "r");
	assert_non_null(c->out);
	read_lines(c, true);
}

static void tell(struct child *c, const char *cmd)
{
	assert_int_equal(write(c->in, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	assert_int_equal(write(c->in, "\n", 1), 1);
}

static void reap(struct child *c)
{
	int st;

	if (c->pid <= 0)
		return;
	close(c->in);
	fclose(c->out);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	c->pid = 0;
}

static void expect_user(struct tk_syms *s, pid_t pid, unsigned long long addr,
			const char *name, const char *module,
			unsigned long long offset)
{
	struct tk_sym f[8];
	char buf[256];
	int n = tk_syms_user(s, pid, addr, f, 8);

	assert_true(n >= 1);
	tk_sym_format(&f[n - 1], buf, sizeof(buf));
	if ((name && (!f[n - 1].name || strcmp(f[n - 1].name, name))) ||
	    (!name && f[n - 1].name) ||
	    (module && (!f[n - 1].module || strcmp(f[n - 1].module, module))) ||
	    (!module && f[n - 1].module) || (name && f[n - 1].offset != offset))
		fail_msg("pid %d 0x%llx: got \"%s\" module %s +0x%llx, want %s (%s) +0x%llx",
			 (int)pid, addr, buf, f[n - 1].module ? f[n - 1].module : "NULL",
			 f[n - 1].offset, name ? name : "NULL",
			 module ? module : "NULL", offset);
}

/* ---- build the programs once ---- */

static int setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	if (geteuid()) {
		fprintf(stderr, "test_symbolize: needs root (/proc/PID/map_files, mount namespaces)\n");
		return -1;
	}
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(emptydir, sizeof(emptydir), "%s/nodebug", tmpdir);
	snprintf(path, sizeof(path), "%s/ns", tmpdir);
	if (mkdir(emptydir, 0755) || mkdir(path, 0755))
		return -1;
	write_file("symprog.c", symprog_src);
	write_file("symlib.c", symlib_src);
	write_file("minidebug.sh", minidebug_sh);
	write_file("buildid.sh", buildid_sh);
	run("cd %s && cc -O0 -g -fPIC -shared -o libtksym.so symlib.c", tmpdir);
	run("cd %s && cc -O0 -g -fPIE -pie -DWITH_LIB -o pie symprog.c -L. -ltksym -Wl,-rpath,%s", tmpdir, tmpdir);
	run("cd %s && cc -O0 -g -fno-pie -no-pie -o nopie symprog.c", tmpdir);
	run("cd %s && cc -O0 -g -fPIE -pie -o mini symprog.c && sh minidebug.sh mini", tmpdir);
	run("cd %s && cc -O0 -g -fPIE -pie -Wl,--build-id -o stripped symprog.c && sh buildid.sh stripped debug", tmpdir);
	run("cd %s && cc -O2 -g -fPIE -pie -o inl symprog.c", tmpdir);
	run("cd %s && cp pie shortlived", tmpdir);
	/* What the namespace test's path is in *our* namespace: another
	 * program, so that opening the bare path would give wrong names. */
	run("cd %s && cp nopie ns/nsprog", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

/* ---- parsers ---- */

static void test_parse_kallsyms(void **state)
{
	struct tk_ksym_line l;
	const char *a = "ffffffff821f94a0 T schedule\n";
	const char *b = "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n";

	(void)state;
	assert_int_equal(tk_parse_kallsyms_line(a, strlen(a), &l), 0);
	assert_true(l.addr == 0xffffffff821f94a0ULL);
	assert_int_equal(l.type, 'T');
	assert_int_equal(l.name_len, 8);
	assert_memory_equal(l.name, "schedule", 8);
	assert_null(l.mod);
	assert_int_equal(tk_parse_kallsyms_line(b, strlen(b), &l), 0);
	assert_int_equal(l.type, 't');
	assert_int_equal(l.mod_len, 4);
	assert_memory_equal(l.mod, "ext4", 4);
	assert_int_equal(l.name_len, strlen("ext4_fill_super"));
	assert_int_equal(tk_parse_kallsyms_line("", 0, &l), -1);
	assert_int_equal(tk_parse_kallsyms_line("xyz T a\n", 8, &l), -1);
	assert_int_equal(tk_parse_kallsyms_line("1234 T\n", 7, &l), -1);
	assert_int_equal(tk_parse_kallsyms_line("1 T a [m\n", 9, &l), -1);
	assert_int_equal(tk_parse_kallsyms_line("11111111111111111 T a", 21, &l), -1);
}

static void test_parse_maps(void **state)
{
	struct tk_maps_line l;
	const char *a = "55d0c3a00000-55d0c3a21000 r-xp 00002000 fd:01 1835094                    /usr/bin/my prog (deleted)\n";
	const char *b = "7ffd5b9e2000-7ffd5b9e4000 r-xp 00000000 00:00 0                          [vdso]\n";
	const char *c = "7f0000000000-7f0000001000 rwxp 00000000 00:00 0\n";

	(void)state;
	assert_int_equal(tk_parse_maps_line(a, strlen(a), &l), 0);
	assert_true(l.start == 0x55d0c3a00000ULL && l.end == 0x55d0c3a21000ULL);
	assert_memory_equal(l.perms, "r-xp", 4);
	assert_true(l.pgoff == 0x2000);
	assert_int_equal(l.dev_major, 0xfd);
	assert_int_equal(l.dev_minor, 1);
	assert_true(l.ino == 1835094);
	assert_int_equal(l.path_len, strlen("/usr/bin/my prog"));
	assert_memory_equal(l.path, "/usr/bin/my prog", l.path_len);
	assert_true(l.deleted);
	assert_int_equal(tk_parse_maps_line(b, strlen(b), &l), 0);
	assert_int_equal(l.path_len, 6);
	assert_memory_equal(l.path, "[vdso]", 6);
	assert_false(l.deleted);
	assert_int_equal(tk_parse_maps_line(c, strlen(c), &l), 0);
	assert_null(l.path);
	assert_int_equal(l.path_len, 0);
	assert_int_equal(tk_parse_maps_line("2000-1000 r-xp 0 0:0 0\n", 23, &l), -1);
	assert_int_equal(tk_parse_maps_line("1000-2000 r-x", 13, &l), -1);
	assert_int_equal(tk_parse_maps_line("1000-2000 r-xp 0 0:0 x\n", 23, &l), -1);
}

static void test_parse_perfmap(void **state)
{
	struct tk_perfmap_line l;
	const char *a = "7f12a4000040 10 LazyCompile:~run /app/x.js:3\n";

	(void)state;
	assert_int_equal(tk_parse_perfmap_line(a, strlen(a), &l), 0);
	assert_true(l.start == 0x7f12a4000040ULL && l.size == 0x10);
	assert_int_equal(l.name_len, strlen("LazyCompile:~run /app/x.js:3"));
	assert_memory_equal(l.name, "LazyCompile:~run /app/x.js:3", l.name_len);
	assert_int_equal(tk_parse_perfmap_line("0x1000 0x20 f", 13, &l), 0);
	assert_true(l.start == 0x1000 && l.size == 0x20);
	assert_int_equal(tk_parse_perfmap_line("1000 20\n", 8, &l), -1);
	assert_int_equal(tk_parse_perfmap_line("1000 0 f\n", 9, &l), -1);
	assert_int_equal(tk_parse_perfmap_line("ffffffffffffffff 2 f", 20, &l), -1);
	assert_int_equal(tk_parse_perfmap_line("zz 2 f", 6, &l), -1);
}

/* ---- kernel ---- */

static void test_kernel_real(void **state)
{
	unsigned long long sched = 0, a;
	char line[512], name[256], mod[256], t, buf[256];
	struct tk_sym sym;
	struct tk_syms *s;
	bool have_mod = false;
	unsigned long long maddr = 0;
	char mname[256] = "", msym[256] = "";
	FILE *f = fopen("/proc/kallsyms", "r");

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%llx %c %255s %255s", &a, &t, name, mod);

		if (n == 3 && !strcmp(name, "schedule") && (t == 'T' || t == 't'))
			sched = a;
		if (n == 4 && !have_mod && (t == 'T' || t == 't') && a &&
		    mod[0] == '[' && strcmp(mod, "[bpf]") && strcmp(mod, "[__builtin__ftrace]")) {
			have_mod = true;
			maddr = a;
			snprintf(msym, sizeof(msym), "%s", name);
			snprintf(mname, sizeof(mname), "%.*s", (int)strlen(mod) - 2, mod + 1);
		}
	}
	fclose(f);
	assert_true(sched != 0);
	assert_non_null(s = tk_syms_new(NULL));
	assert_int_equal(tk_syms_kernel(s, sched + 4, &sym), 1);
	assert_non_null(sym.name);
	assert_string_equal(sym.name, "schedule");
	assert_string_equal(sym.module, "kernel");
	assert_true(sym.offset == 4);
	assert_false(sym.inlined);
	/* Garbage: below every symbol, and far above the last. */
	tk_syms_kernel(s, 0x1000, &sym);
	assert_null(sym.name);
	assert_string_equal(tk_sym_format(&sym, buf, sizeof(buf)), "[unknown]");
	tk_syms_kernel(s, 0xfffffffffffff000ULL, &sym);
	assert_null(sym.name);
	if (have_mod) {
		tk_syms_kernel(s, maddr + 1, &sym);
		/* Another symbol may share the address: the module is what
		 * must match, and the name must be one at that address. */
		assert_non_null(sym.name);
		assert_string_equal(sym.module, mname);
		assert_true(sym.offset == 1);
	} else {
		fprintf(stderr, "test_kernel_real: no kernel module loaded on this "
			"host: module symbols tested on a kallsyms file only\n");
	}
	tk_syms_free(s);
}

static void test_kernel_file(void **state)
{
	struct tk_syms *s;
	struct tk_sym sym;
	char buf[128];

	(void)state;
	write_file("kallsyms",
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81000100 t helper\n"
		   "ffffffff81000100 W helper_alias\n"   /* T/W win over t */
		   "ffffffff81000200 T big_func\n"
		   "ffffffff81001000 D some_data\n"
		   "ffffffff81002000 T after_data\n"
		   "0000000000000000 A fixed_percpu_data\n"
		   "garbage line\n"
		   "ffffffffc0001000 t ext4_fill_super\t[ext4]\n"
		   "ffffffffc0000f00 T ext4_init\t[ext4]\n"
		   "ffffffffc0002000 d ext4_data\t[ext4]\n"
		   "ffffffffc0003000 T nf_hook\t[nf_tables]\n"
		   /* Out of order, merged into the sorted kernel part. */
		   "ffffffff81000200 t big_func_local\n"
		   "ffffffff81000180 T late_func\n");
	assert_non_null(s = tk_syms_new(NULL));
	tk_syms_set_kallsyms_path(s, tpath("kallsyms"));
	tk_syms_kernel(s, 0xffffffff81000104ULL, &sym);
	assert_string_equal(sym.name, "helper_alias");
	assert_string_equal(sym.module, "kernel");
	assert_true(sym.offset == 4);
	tk_syms_kernel(s, 0xffffffff81000190ULL, &sym);
	assert_string_equal(sym.name, "late_func");
	assert_true(sym.offset == 0x10);
	tk_syms_kernel(s, 0xffffffff81000fffULL, &sym);
	assert_string_equal(sym.name, "big_func");
	assert_true(sym.offset == 0xdff);
	/* In data: unknown, but known to be the kernel's. */
	tk_syms_kernel(s, 0xffffffff81001010ULL, &sym);
	assert_null(sym.name);
	assert_string_equal(tk_sym_format(&sym, buf, sizeof(buf)), "[unknown] (kernel)");
	tk_syms_kernel(s, 0xffffffffc0001234ULL, &sym);
	assert_string_equal(sym.name, "ext4_fill_super");
	assert_string_equal(sym.module, "ext4");
	assert_true(sym.offset == 0x234);
	tk_syms_kernel(s, 0xffffffffc0000f01ULL, &sym);
	assert_string_equal(sym.name, "ext4_init");
	tk_syms_kernel(s, 0xffffffffc0002001ULL, &sym);
	assert_null(sym.name);
	assert_string_equal(tk_sym_format(&sym, buf, sizeof(buf)), "[unknown] (ext4)");
	tk_syms_kernel(s, 0xffffffffc0003010ULL, &sym);
	assert_string_equal(sym.name, "nf_hook");
	assert_string_equal(sym.module, "nf_tables");
	tk_syms_kernel(s, 0x10, &sym);
	assert_null(sym.name);
	assert_null(sym.module);
	tk_syms_free(s);

	/* kptr_restrict: every address 0. */
	write_file("kallsyms0",
		   "0000000000000000 T _stext\n"
		   "0000000000000000 T schedule\n");
	assert_non_null(s = tk_syms_new(NULL));
	tk_syms_set_kallsyms_path(s, tpath("kallsyms0"));
	tk_syms_kernel(s, 0xffffffff81000104ULL, &sym);
	assert_null(sym.name);
	assert_string_equal(tk_sym_format(&sym, buf, sizeof(buf)), "[unknown]");
	tk_syms_kernel(s, 0, &sym);
	assert_null(sym.name);
	tk_syms_free(s);

	/* No file at all. */
	assert_non_null(s = tk_syms_new(NULL));
	tk_syms_set_kallsyms_path(s, tpath("no-such-file"));
	tk_syms_kernel(s, 0xffffffff81000104ULL, &sym);
	assert_null(sym.name);
	tk_syms_free(s);
}

/* ---- user space ---- */

static struct tk_syms *new_syms(bool inl, const char *debug_dirs)
{
	struct tk_syms_opts o = { .inline_frames = inl,
				  .debug_dirs = debug_dirs ? debug_dirs : emptydir };
	struct tk_syms *s = tk_syms_new(&o);

	assert_non_null(s);
	return s;
}

static void test_pie_and_shared_lib(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;
	struct tk_sym f[4];
	char buf[128];
	int pass;

	(void)state;
	spawn(&c, tpath("pie"), NULL, NULL);
	for (pass = 0; pass < 2; pass++) {   /* second pass: from the cache */
		expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "pie", 1);
		expect_user(s, c.pid, addr_of(&c, "tk_local_func") + 4, "tk_local_func", "pie", 4);
		expect_user(s, c.pid, addr_of(&c, "tk_outer"), "tk_outer", "pie", 0);
		expect_user(s, c.pid, addr_of(&c, "tksym_lib_func") + 3, "tksym_lib_func",
			    "libtksym.so", 3);
	}
	/* Garbage: no mapping at all. */
	assert_int_equal(tk_syms_user(s, c.pid, 0x10, f, 4), 1);
	assert_null(f[0].name);
	assert_null(f[0].module);
	assert_string_equal(tk_sym_format(&f[0], buf, sizeof(buf)), "[unknown]");
	/* The same with the cache off. */
	tk_syms_set_cache(s, false);
	expect_user(s, c.pid, addr_of(&c, "tksym_lib_func") + 3, "tksym_lib_func",
		    "libtksym.so", 3);
	/* A pid that does not exist. */
	assert_int_equal(tk_syms_user(s, 0x3ffffff0, 0x401000, f, 4), 1);
	assert_null(f[0].name);
	assert_int_equal(tk_syms_note_pid(s, 0x3ffffff0), -ESRCH);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(s);
}

static void test_non_pie(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;

	(void)state;
	spawn(&c, tpath("nopie"), NULL, NULL);
	/* Non-PIE: the address is the ELF address itself. */
	assert_true(addr_of(&c, "tk_global_func") < 0x1000000);
	expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 2, "tk_global_func", "nopie", 2);
	expect_user(s, c.pid, addr_of(&c, "tk_local_func"), "tk_local_func", "nopie", 0);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(s);
}

static void test_minidebuginfo(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;

	(void)state;
	/* Neither function is in .dynsym, and there is no .symtab: only
	 * .gnu_debugdata names them. */
	run("! readelf -S %s | grep -q '\\.symtab'", tpath("mini"));
	run("readelf -S %s | grep -q '\\.gnu_debugdata'", tpath("mini"));
	spawn(&c, tpath("mini"), NULL, NULL);
	expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "mini", 1);
	expect_user(s, c.pid, addr_of(&c, "tk_local_func") + 2, "tk_local_func", "mini", 2);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(s);
}

static void test_build_id_debug_dir(void **state)
{
	char dbg[2 * PATH_MAX + 2];
	struct tk_syms *s, *nodbg;
	struct child c;

	(void)state;
	snprintf(dbg, sizeof(dbg), "%s:%s", emptydir, tpath("debug"));
	s = new_syms(false, dbg);
	nodbg = new_syms(false, NULL);
	spawn(&c, tpath("stripped"), NULL, NULL);
	expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "stripped", 1);
	expect_user(s, c.pid, addr_of(&c, "tk_local_func") + 3, "tk_local_func", "stripped", 3);
	/* Without the debug file: the file is known, the function not. */
	expect_user(nodbg, c.pid, addr_of(&c, "tk_local_func") + 3, NULL, "stripped", 0);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(nodbg);
	tk_syms_free(s);
}

static void test_inline_frames(void **state)
{
	struct tk_syms *s = new_syms(true, NULL), *flat = new_syms(false, NULL);
	struct tk_sym f[8];
	struct child c;
	unsigned long long ra;
	int n;

	(void)state;
	spawn(&c, tpath("inl"), NULL, NULL);
	/* The return address of tk_probe's call, minus one: inside the call
	 * instruction, in tk_inner inlined in tk_mid inlined in tk_outer. */
	ra = addr_of(&c, "tk_ra") - 1;
	n = tk_syms_user(s, c.pid, ra, f, 8);
	assert_int_equal(n, 3);
	assert_string_equal(f[0].name, "tk_inner");
	assert_true(f[0].inlined);
	assert_string_equal(f[1].name, "tk_mid");
	assert_true(f[1].inlined);
	assert_string_equal(f[2].name, "tk_outer");
	assert_false(f[2].inlined);
	assert_true(f[2].offset == ra - addr_of(&c, "tk_outer"));
	assert_string_equal(f[0].module, "inl");
	assert_string_equal(f[2].module, "inl");
	/* Cached: the same again; and max 2 keeps innermost and function. */
	n = tk_syms_user(s, c.pid, ra, f, 8);
	assert_int_equal(n, 3);
	assert_string_equal(f[0].name, "tk_inner");
	n = tk_syms_user(s, c.pid, ra, f, 2);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].name, "tk_inner");
	assert_string_equal(f[1].name, "tk_outer");
	n = tk_syms_user(s, c.pid, ra, f, 1);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "tk_outer");
	/* Without the option: exactly one frame. */
	n = tk_syms_user(flat, c.pid, ra, f, 8);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "tk_outer");
	assert_false(f[0].inlined);
	/* A function with nothing inlined at that address: one frame. */
	n = tk_syms_user(s, c.pid, addr_of(&c, "tk_global_func"), f, 8);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "tk_global_func");
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(flat);
	tk_syms_free(s);
}

static void test_jit_perf_map(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct tk_sym f[4];
	struct child c;
	unsigned long long jit;
	char buf[128];
	pid_t pid;

	(void)state;
	spawn(&c, tpath("pie"), "jit", NULL);
	jit = addr_of(&c, "jit");
	assert_int_equal(tk_syms_note_pid(s, c.pid), 0);
	expect_user(s, c.pid, jit + 0x45, "jit: hot loop [tier 2]", "[jit]", 5);
	/* Before the entry exists: unknown, in no file. */
	assert_int_equal(tk_syms_user(s, c.pid, jit + 0x801, f, 4), 1);
	assert_null(f[0].name);
	assert_string_equal(tk_sym_format(&f[0], buf, sizeof(buf)), "[unknown]");
	/* The JIT map grows while the process runs: re-read on a miss. */
	tell(&c, "jit2");
	read_lines(&c, true);
	usleep(150 * 1000);
	expect_user(s, c.pid, jit + 0x801, "jit_second", "[jit]", 1);
	expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "pie", 1);
	pid = c.pid;
	tell(&c, "exit");
	reap(&c);
	/* Gone: the snapshot still has both. */
	expect_user(s, pid, jit + 0x40, "jit: hot loop [tier 2]", "[jit]", 0);
	expect_user(s, pid, jit + 0x80f, "jit_second", "[jit]", 0xf);
	tk_syms_free(s);
}

/* tk_syms_note_jit: the stack tools' cheap renotice. Whole for a
 * process not noted yet; after that the JIT map only, so entries written
 * since name the process's code after it is gone. */
static void test_note_jit(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;
	unsigned long long jit, global;
	pid_t pid;

	(void)state;
	spawn(&c, tpath("pie"), "jit", NULL);
	jit = addr_of(&c, "jit");
	global = addr_of(&c, "tk_global_func");
	assert_int_equal(tk_syms_note_jit(s, c.pid), 0);
	tell(&c, "jit2");
	read_lines(&c, true);
	assert_int_equal(tk_syms_note_jit(s, c.pid), 0);
	pid = c.pid;
	tell(&c, "exit");
	reap(&c);
	expect_user(s, pid, global + 1, "tk_global_func", "pie", 1);
	expect_user(s, pid, jit + 0x40, "jit: hot loop [tier 2]", "[jit]", 0);
	expect_user(s, pid, jit + 0x80f, "jit_second", "[jit]", 0xf);
	assert_int_equal(tk_syms_note_jit(s, pid), 0);   /* known: no /proc read */
	tk_syms_free(s);
}

static void test_mount_namespace(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c, local;
	pid_t pid;

	(void)state;
	spawn(&c, tpath("pie"), NULL, tpath("ns"));
	/* In our namespace that path is another program (nopie): its
	 * addresses differ, so only the right file gives these names. */
	expect_user(s, c.pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "nsprog", 1);
	expect_user(s, c.pid, addr_of(&c, "tk_local_func") + 1, "tk_local_func", "nsprog", 1);
	expect_user(s, c.pid, addr_of(&c, "tksym_lib_func"), "tksym_lib_func", "libtksym.so", 0);
	/* The same file symbolizes after the process exited. */
	pid = c.pid;
	tell(&c, "exit");
	reap(&c);
	expect_user(s, pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "nsprog", 1);
	/* And our namespace's nsprog is another file with its own names. */
	spawn(&local, tpath("ns/nsprog"), NULL, NULL);
	expect_user(s, local.pid, addr_of(&local, "tk_global_func") + 1, "tk_global_func", "nsprog", 1);
	tell(&local, "exit");
	reap(&local);
	tk_syms_free(s);
}

static void test_short_lived(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;
	pid_t pid;

	(void)state;
	spawn(&c, tpath("shortlived"), NULL, NULL);
	pid = c.pid;
	assert_int_equal(tk_syms_note_pid(s, pid), 0);
	/* The program file goes too: the descriptor kept still reads it. */
	assert_int_equal(unlink(tpath("shortlived")), 0);
	tell(&c, "exit");
	reap(&c);
	assert_int_equal(kill(pid, 0), -1);
	expect_user(s, pid, addr_of(&c, "tk_global_func") + 1, "tk_global_func", "shortlived", 1);
	expect_user(s, pid, addr_of(&c, "tk_local_func"), "tk_local_func", "shortlived", 0);
	expect_user(s, pid, addr_of(&c, "tksym_lib_func") + 2, "tksym_lib_func", "libtksym.so", 2);
	/* Noting a gone process: -ESRCH, and the snapshot stays. */
	assert_int_equal(tk_syms_note_pid(s, pid), -ESRCH);
	expect_user(s, pid, addr_of(&c, "tk_outer"), "tk_outer", "shortlived", 0);
	tk_syms_free(s);
	run("cp %s %s", tpath("pie"), tpath("shortlived"));
}

static void test_dlopen_renote(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct child c;
	char cmd[PATH_MAX + 64];
	unsigned long long dl;

	(void)state;
	spawn(&c, tpath("nopie"), NULL, NULL);
	assert_int_equal(tk_syms_note_pid(s, c.pid), 0);
	snprintf(cmd, sizeof(cmd), "dlopen %s", tpath("libtksym.so"));
	tell(&c, cmd);
	read_lines(&c, false);
	dl = addr_of(&c, "tksym_dl_func");
	assert_true(dl != 0);
	/* Noted before the dlopen: a miss reads the mappings again. */
	usleep(150 * 1000);
	expect_user(s, c.pid, dl + 1, "tksym_dl_func", "libtksym.so", 1);
	/* Noting again merges: old mappings stay. */
	assert_int_equal(tk_syms_note_pid(s, c.pid), 0);
	expect_user(s, c.pid, addr_of(&c, "tk_global_func"), "tk_global_func", "nopie", 0);
	expect_user(s, c.pid, dl, "tksym_dl_func", "libtksym.so", 0);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(s);
}

static void test_format(void **state)
{
	struct tk_sym a = { "main", "prog", 4, false };
	struct tk_sym b = { NULL, "libfoo.so", 0x1234, false };
	struct tk_sym c = { NULL, NULL, 0x10, false };
	struct tk_sym d = { "clock_gettime@@GLIBC_2.17", "libc.so.6", 0, false };
	char buf[64], small[8];

	(void)state;
	assert_string_equal(tk_sym_format(&a, buf, sizeof(buf)), "main");
	assert_string_equal(tk_sym_format(&b, buf, sizeof(buf)), "[unknown] (libfoo.so)");
	assert_string_equal(tk_sym_format(&c, buf, sizeof(buf)), "[unknown]");
	assert_string_equal(tk_sym_format(&d, buf, sizeof(buf)), "clock_gettime");
	assert_string_equal(tk_sym_format(&b, small, sizeof(small)), "[unknow");
}

/* Which innermost kernel frames the stack tools leave out, named as the
 * symbolizer names them (NULL: no name), against the frames a program at
 * a fentry takes on arm64: the program twice (the registers' pc and its
 * frame record), its trampoline, then the traced function. */
static unsigned kept_from(const char *const *names, unsigned n)
{
	struct tk_kstack_top t = TK_KSTACK_TOP_INIT;
	unsigned i = 0, first = n;

	for (i = 0; i < n; i++) {
		bool skip = tk_kstack_top_plumbing(&t, names[i]);

		if (!skip && first == n)
			first = i;
		/* Once one is kept, every one after it is. */
		if (first < n)
			assert_false(skip);
	}
	return first;
}

static void test_kstack_top(void **state)
{
	const char *live[] = { "bpf_prog_6f7b_kf_cap_entry", "bpf_prog_6f7b_kf_cap_entry",
			       "bpf_trampoline_6442", "cap_capable", "security_capable" };
	/* The trampoline freed before the stack was read (at exit, after
	 * the probes closed): no symbol names it. */
	const char *freed[] = { "bpf_prog_6f7b_kf_cap_entry", "bpf_prog_6f7b_kf_cap_entry",
				NULL, "cap_capable", "security_capable" };
	const char *tp[] = { "bpf_prog_1_handle", "bpf_trace_run2", "__bpf_trace_sched_switch",
			     "__schedule", "schedule" };
	/* Unnamed but not a program's caller: shown, as is all after it. */
	const char *top_unknown[] = { NULL, "cap_capable", "bpf_prog_1_x" };
	const char *after_trampoline[] = { "bpf_trampoline_1", NULL, "f" };
	const char *two_unknown[] = { "bpf_prog_1_x", NULL, NULL, "f" };
	const char *no_plumbing[] = { "vfs_read", "bpf_prog_1_x", NULL };

	(void)state;
	assert_int_equal(kept_from(live, 5), 3);
	assert_int_equal(kept_from(freed, 5), 3);
	assert_int_equal(kept_from(tp, 5), 3);
	assert_int_equal(kept_from(top_unknown, 3), 0);
	assert_int_equal(kept_from(after_trampoline, 3), 1);
	assert_int_equal(kept_from(two_unknown, 4), 2);
	assert_int_equal(kept_from(no_plumbing, 3), 0);
	assert_int_equal(kept_from(freed, 2), 2);   /* all left out */
}

static void test_self_libc(void **state)
{
	struct tk_syms *s = new_syms(false, NULL);
	struct tk_sym f[4];

	(void)state;
	/* Our own libc, opened through /proc/self's map_files. */
	assert_int_equal(tk_syms_user(s, getpid(), (unsigned long long)(uintptr_t)&kill + 1, f, 4), 1);
	assert_string_equal(f[0].name, "kill");
	assert_string_equal(f[0].module, "libc.so.6");
	assert_true(f[0].offset == 1);
	tk_syms_free(s);
}

/* st_value of a vDSO symbol, from our own vDSO image (libelf). */
static unsigned long long vdso_sym(const char *want)
{
	char *img = (char *)getauxval(AT_SYSINFO_EHDR);
	Elf_Scn *scn = NULL;
	unsigned long long v = 0;
	Elf *elf;

	assert_non_null(img);
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_memory(img, 8192));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) && !strcmp(n, want))
				v = sym.st_value;
		}
	}
	elf_end(elf);
	return v;
}

static void test_vdso(void **state)
{
	struct tk_syms *s;
	unsigned long long start = 0, end, off;
	char path[64], line[512];
	struct child c;
	FILE *f;

	(void)state;
	if (getenv("TK_UNIT_EMULATED")) {
		/* qemu-user gives an arm64 program no vDSO, and a child's
		 * /proc/PID/maps are the emulator's own. */
		print_message("test_vdso: skipped under qemu-user (no vDSO)\n");
		skip();
	}
	s = new_syms(false, NULL);
	off = vdso_sym("__vdso_clock_gettime");
	if (!off) {
		tk_syms_free(s);
		skip();
	}
	spawn(&c, tpath("nopie"), NULL, NULL);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c.pid);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &start, &end);
	fclose(f);
	assert_true(start != 0);
	/* The vDSO is linked at 0 (x86_64, arm64): address = start + st_value. */
	expect_user(s, c.pid, start + off + 2, "__vdso_clock_gettime", "[vdso]", 2);
	tell(&c, "exit");
	reap(&c);
	tk_syms_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kallsyms),
		cmocka_unit_test(test_parse_maps),
		cmocka_unit_test(test_parse_perfmap),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_kstack_top),
		cmocka_unit_test(test_kernel_real),
		cmocka_unit_test(test_kernel_file),
		cmocka_unit_test(test_self_libc),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_pie_and_shared_lib),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_minidebuginfo),
		cmocka_unit_test(test_build_id_debug_dir),
		cmocka_unit_test(test_inline_frames),
		cmocka_unit_test(test_jit_perf_map),
		cmocka_unit_test(test_note_jit),
		cmocka_unit_test(test_mount_namespace),
		cmocka_unit_test(test_short_lived),
		cmocka_unit_test(test_dlopen_renote),
	};

	/* A child's stdin is a pipe from us: never die of its closing. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
