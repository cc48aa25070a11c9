/* Sources of the programs tests/unit/test_symbolize.c builds at run time
 * with cc and then symbolizes while they run (or after they exit).
 * Kept as strings so the test needs no path to the source tree.
 *
 * symprog prints "NAME 0xADDR" for each function the test looks up, then
 * "ready", then obeys commands on stdin (one per line):
 *   exit        exit 0
 *   jit2        add a second entry to its perf map ("jit2 ok")
 *   dlopen P    dlopen P and print "tksym_dl_func 0xADDR"
 * EOF on stdin also ends it: the test's death ends its children. */
#ifndef TK_TEST_SYMPROG_H
#define TK_TEST_SYMPROG_H

static const char symprog_src[] =
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <sys/mman.h>\n"
	"#include <unistd.h>\n"
	"#ifdef WITH_LIB\n"
	"extern int tksym_lib_func(int);\n"
	"#endif\n"
	"void *volatile tk_ra;\n"
	"__attribute__((noinline)) void tk_probe(void)\n"
	"{\n"
	"	tk_ra = __builtin_return_address(0);\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"static inline __attribute__((always_inline)) int tk_inner(int x)\n"
	"{\n"
	"	tk_probe();\n"
	"	return x * 7;\n"
	"}\n"
	"static inline __attribute__((always_inline)) int tk_mid(int x)\n"
	"{\n"
	"	return tk_inner(x + 1) + 3;\n"
	"}\n"
	"__attribute__((noinline)) int tk_outer(int x)\n"
	"{\n"
	"	return tk_mid(x) * 2;\n"
	"}\n"
	"__attribute__((noinline, used)) static int tk_local_func(int x)\n"
	"{\n"
	"	return x * 5 + 3;\n"
	"}\n"
	"__attribute__((noinline)) int tk_global_func(int x)\n"
	"{\n"
	"	return tk_local_func(x) + 11;\n"
	"}\n"
	"static char *jit;\n"
	"static void jit_entry(const char *path, int off, const char *name)\n"
	"{\n"
	"	FILE *f = fopen(path, \"a\");\n"
	"	if (!f) exit(3);\n"
	"	fprintf(f, \"%lx 10 %s\\n\", (unsigned long)(jit + off), name);\n"
	"	fclose(f);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	char line[4096], path[64];\n"
	"	volatile int v = tk_outer(argc) + tk_global_func(argc);\n"
	"	(void)v;\n"
	"	snprintf(path, sizeof(path), \"/tmp/perf-%d.map\", (int)getpid());\n"
	"	printf(\"tk_global_func %p\\n\", (void *)tk_global_func);\n"
	"	printf(\"tk_local_func %p\\n\", (void *)tk_local_func);\n"
	"	printf(\"tk_outer %p\\n\", (void *)tk_outer);\n"
	"	printf(\"tk_ra %p\\n\", tk_ra);\n"
	"#ifdef WITH_LIB\n"
	"	printf(\"tksym_lib_func %p\\n\", (void *)tksym_lib_func);\n"
	"	v = tksym_lib_func(1);\n"
	"#endif\n"
	"	if (argc > 1 && !strcmp(argv[1], \"jit\")) {\n"
	"		jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE,\n"
	"			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n"
	"		if (jit == MAP_FAILED) return 3;\n"
	"		memset(jit, 0xc3, 4096);\n"
	"		if (mprotect(jit, 4096, PROT_READ | PROT_EXEC)) return 3;\n"
	"		unlink(path);\n"
	"		jit_entry(path, 0x40, \"jit: hot loop [tier 2]\");\n"
	"		printf(\"jit %p\\n\", (void *)jit);\n"
	"	}\n"
	"	printf(\"ready\\n\");\n"
	"	fflush(stdout);\n"
	"	while (fgets(line, sizeof(line), stdin)) {\n"
	"		line[strcspn(line, \"\\n\")] = 0;\n"
	"		if (!strcmp(line, \"exit\"))\n"
	"			break;\n"
	"		if (!strcmp(line, \"jit2\") && jit) {\n"
	"			jit_entry(path, 0x800, \"jit_second\");\n"
	"			printf(\"jit2 ok\\n\");\n"
	"		} else if (!strncmp(line, \"dlopen \", 7)) {\n"
	"			void *h = dlopen(line + 7, RTLD_NOW);\n"
	"			printf(\"tksym_dl_func %p\\n\", h ? dlsym(h, \"tksym_dl_func\") : NULL);\n"
	"		}\n"
	"		fflush(stdout);\n"
	"	}\n"
	"	if (jit) unlink(path);\n"
	"	return 0;\n"
	"}\n";

static const char symlib_src[] =
	"__attribute__((noinline)) int tksym_lib_func(int x)\n"
	"{\n"
	"	return x * 13 + 1;\n"
	"}\n"
	"__attribute__((noinline)) int tksym_dl_func(int x)\n"
	"{\n"
	"	return x * 17 + 1;\n"
	"}\n";

/* MiniDebugInfo, the recipe of gdb's manual ("MiniDebugInfo"): the
 * function symbols not in .dynsym, in an xz-compressed ELF in section
 * .gnu_debugdata of the fully stripped program. $1: the program. */
static const char minidebug_sh[] =
	"set -e\n"
	"p=$1\n"
	"nm -D \"$p\" --format=posix --defined-only | awk '{ print $1 }' | sort > \"$p.dynsyms\"\n"
	"nm \"$p\" --format=posix --defined-only | awk '{ if ($2 == \"T\" || $2 == \"t\") print $1 }' | sort > \"$p.funcsyms\"\n"
	"comm -13 \"$p.dynsyms\" \"$p.funcsyms\" > \"$p.keep\"\n"
	"objcopy --only-keep-debug \"$p\" \"$p.mini\"\n"
	"objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=\"$p.keep\" \"$p.mini\" \"$p.mini2\"\n"
	"strip --strip-all --remove-section=.gnu_debuglink --remove-section=.comment \"$p\"\n"
	"xz -c \"$p.mini2\" > \"$p.mini.xz\"\n"
	"objcopy --add-section .gnu_debugdata=\"$p.mini.xz\" \"$p\"\n";

/* Separate debug info under $2/.build-id/xx/yyyy.debug; $1 stripped. */
static const char buildid_sh[] =
	"set -e\n"
	"p=$1; d=$2\n"
	"id=$(readelf -n \"$p\" | sed -n 's/.*Build ID: *//p')\n"
	"test -n \"$id\"\n"
	"mkdir -p \"$d/.build-id/$(echo $id | cut -c1-2)\"\n"
	"objcopy --only-keep-debug \"$p\" \"$d/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug\"\n"
	"strip --strip-all --remove-section=.gnu_debuglink \"$p\"\n";

#endif
