/* Unit tests of the probe planner (libtrace/probe/plan.c) against this
 * machine's kernel BTF: the fetches and bytecode a probe's text gives,
 * member offsets checked against BTF read here independently (named
 * members only, walked by hand), and every error with its place. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/argspec.h"
#include "probe/plan.h"

static struct btf *btf;

/* timer:hrtimer_expire_entry's fields, as its format file has them. */
static const struct tk_plan_field hrtimer_fields[] = {
	{ "hrtimer", "struct hrtimer *", 8, 8, 0, false, false },
	{ "now", "s64", 16, 8, 0, true, false },
	{ "function", "void *", 24, 8, 0, false, false },
};

/* sched:sched_process_exec's, with a __data_loc string and a char array
 * (the latter as sched_switch has it). */
static const struct tk_plan_field exec_fields[] = {
	{ "filename", "__data_loc char[]", 8, 4, 0, false, true },
	{ "pid", "pid_t", 12, 4, 0, true, false },
	{ "comm", "char", 16, 16, 16, false, false },
};

static unsigned long long fake_ksym(const char *name, void *arg)
{
	(void)arg;
	return !strcmp(name, "hrtimer_wakeup") ? 0xffffffff81234560ULL : 0;
}

/* The byte offset of a member, by hand: a named member of struct sname
 * or of an anonymous struct or union in it (struct file's f_path is). */
static long member_in(int id, const char *member)
{
	const struct btf_type *t = btf__type_by_id(btf, (__u32)id);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		long off;

		if (!strcmp(n, member))
			return btf_member_bit_offset(t, (__u32)i) / 8;
		if (!*n && btf_is_composite(btf__type_by_id(btf, m->type)) &&
		    (off = member_in((int)m->type, member)) >= 0)
			return btf_member_bit_offset(t, (__u32)i) / 8 + off;
	}
	return -1;
}

static long offset_of(const char *sname, const char *member)
{
	long off = member_in(btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT), member);

	if (off < 0)
		fail_msg("no %s in struct %s", member, sname);
	return off;
}

struct probe {
	struct tk_probe_spec spec;
	struct tk_plan plan;
	struct tk_perr err;
	int rc;
};

static void plan(struct probe *pr, const char *text, enum tk_probe_kind kind, const char *what,
		 const struct tk_plan_field *fields, int nfields, const char *func)
{
	struct tk_plan_ctx ctx = {
		.kind = kind, .what = what, .btf = btf, .fields = fields, .nfields = nfields,
		.ksym = fake_ksym,
	};

	if (func)
		ctx.func_id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	if (tk_probe_parse(text, &pr->spec, &pr->err))
		fail_msg("'%s' does not parse: %s", text, pr->err.msg);
	pr->rc = tk_plan_build(&ctx, &pr->spec, &pr->plan, &pr->err);
}

static void plan_ok(struct probe *pr, const char *text, enum tk_probe_kind kind,
		    const struct tk_plan_field *fields, int nfields, const char *func)
{
	plan(pr, text, kind, func ? func : "timer:hrtimer_expire_entry", fields, nfields, func);
	if (pr->rc)
		fail_msg("'%s': %s at %d", text, pr->err.msg, pr->err.pos);
}

static void plan_fails(const char *text, enum tk_probe_kind kind, const struct tk_plan_field *fields,
		       int nfields, const char *func, int pos, const char *msg)
{
	struct probe pr;

	plan(&pr, text, kind, func ? func : "timer:hrtimer_expire_entry", fields, nfields, func);
	if (!pr.rc)
		fail_msg("'%s' planned", text);
	if (!strstr(pr.err.msg, msg) || pr.err.pos != pos)
		fail_msg("'%s': '%s' at %d, not '%s' at %d", text, pr.err.msg, pr.err.pos, msg, pos);
	tk_probe_spec_free(&pr.spec);
}

static void test_member_chain_to_a_file_name(void **state)
{
	struct probe pr;
	const struct tk_fetch *f;

	(void)state;
	plan_ok(&pr, "k:vfs_read \"%s\", file->f_path.dentry->d_name.name", TK_PROBE_KPROBE,
		NULL, 0, "vfs_read");
	assert_int_equal(pr.plan.nvalues, 1);
	assert_int_equal(pr.plan.value[0].kind, TK_PV_STR);
	f = &pr.plan.fetch[pr.plan.value[0].fetch];
	assert_int_equal(f->base, TK_FB_ARG);
	assert_int_equal(f->arg, 1);
	assert_int_equal(f->user, 0);
	assert_int_equal(f->final, TK_FF_STR);
	assert_int_equal(f->nsteps, 2);
	assert_int_equal(f->step[0].off, offset_of("file", "f_path") + offset_of("path", "dentry"));
	assert_int_equal(f->step[0].size, 8);
	assert_int_equal(f->step[1].off, offset_of("dentry", "d_name") + offset_of("qstr", "name"));
	assert_int_equal(f->step[1].size, 8);
	tk_probe_spec_free(&pr.spec);
}

static void test_container_of_reaches_the_task(void **state)
{
	struct probe pr;
	const struct tk_fetch *f;

	(void)state;
	plan_ok(&pr, "k:dl_task_timer \"%d\", container_of(timer, struct sched_dl_entity, dl_timer)->runtime",
		TK_PROBE_KPROBE, NULL, 0, "dl_task_timer");
	f = &pr.plan.fetch[pr.plan.value[0].fetch];
	assert_int_equal(f->nsteps, 1);
	assert_int_equal(f->step[0].off, offset_of("sched_dl_entity", "runtime") -
					 offset_of("sched_dl_entity", "dl_timer"));
	assert_int_equal(f->step[0].size, 8);
	assert_true(f->step[0].is_signed);   /* s64 runtime */
	tk_probe_spec_free(&pr.spec);

	/* From the entity to the task that holds it, then its pid. */
	plan_ok(&pr, "u:c:f \"%d\", container_of(arg1, struct task_struct, dl)->pid",
		TK_PROBE_UPROBE, NULL, 0, NULL);
	f = &pr.plan.fetch[pr.plan.value[0].fetch];
	assert_int_equal(f->user, 1);
	assert_int_equal(f->nsteps, 1);
	assert_int_equal(f->step[0].off, offset_of("task_struct", "pid") - offset_of("task_struct", "dl"));
	assert_int_equal(f->step[0].size, 4);
	assert_int_equal(pr.plan.value[0].kind, TK_PV_INT);
	assert_true(pr.plan.value[0].is_signed);
	tk_probe_spec_free(&pr.spec);
}

/* A filter of one comparison of a fetch with a constant is BPF's quick
 * filter (no bytecode loop): the field's cast and the comparison's
 * signedness with it; any other filter is not. */
static void test_one_comparison_is_a_quick_filter(void **state)
{
	struct tk_plan_code c;
	struct probe pr;

	(void)state;
	plan_ok(&pr, "t:sched:sched_process_exec (pid < -3)", TK_PROBE_TRACEPOINT, exec_fields, 3,
		"sched:sched_process_exec");
	tk_plan_to_code(&pr.plan, 0, &c);
	assert_int_equal(c.quick.op, TK_I_LT);
	assert_int_equal(c.quick.fetch, pr.plan.insn[pr.plan.filter].a);
	assert_int_equal(c.quick.cast, 4);
	assert_int_equal(c.quick.flags, TK_IF_SIGNED << 4 | TK_IF_SIGNED);
	assert_int_equal(c.quick.imm, -3);
	tk_probe_spec_free(&pr.spec);

	plan_ok(&pr, "t:timer:hrtimer_expire_entry (function != hrtimer_wakeup)",
		TK_PROBE_TRACEPOINT, hrtimer_fields, 3, NULL);
	tk_plan_to_code(&pr.plan, 0, &c);
	assert_int_equal(c.quick.op, TK_I_NE);
	assert_int_equal(c.quick.cast, 0);
	assert_true((unsigned long long)c.quick.imm == 0xffffffff81234560ULL);
	tk_probe_spec_free(&pr.spec);

	static const char *const slow[] = {
		"t:sched:sched_process_exec (pid + 1 == 3)",
		"t:sched:sched_process_exec (pid == 3 && pid != 4)",
		"t:sched:sched_process_exec (3 == pid)",
		"t:sched:sched_process_exec (comm == \"sh\")",
		"t:sched:sched_process_exec",
	};
	for (size_t i = 0; i < sizeof(slow) / sizeof(*slow); i++) {
		plan_ok(&pr, slow[i], TK_PROBE_TRACEPOINT, exec_fields, 3, "sched:sched_process_exec");
		tk_plan_to_code(&pr.plan, 0, &c);
		assert_int_equal(c.quick.op, 0);
		tk_probe_spec_free(&pr.spec);
	}
}

static void test_tracepoint_fields_and_a_symbol_filter(void **state)
{
	struct probe pr;
	const struct tk_insn *in;
	const struct tk_fetch *f;

	(void)state;
	plan_ok(&pr, "t:timer:hrtimer_expire_entry (function != hrtimer_wakeup) \"%s %lld\", function, now",
		TK_PROBE_TRACEPOINT, hrtimer_fields, 3, NULL);
	assert_int_equal(pr.plan.filter, 0);
	in = pr.plan.insn;
	assert_int_equal(in[0].op, TK_I_FETCH);
	assert_int_equal(in[1].op, TK_I_CONST);
	assert_true((unsigned long long)in[1].imm == 0xffffffff81234560ULL);
	assert_int_equal(in[2].op, TK_I_NE);
	assert_int_equal(in[2].flags & TK_IF_SIGNED, 0);
	assert_int_equal(in[3].op, TK_I_END);
	f = &pr.plan.fetch[in[0].a];
	assert_int_equal(f->base, TK_FB_CTX);
	assert_int_equal(f->nsteps, 1);
	assert_int_equal(f->step[0].off, 24);
	assert_int_equal(f->step[0].size, 8);
	/* The same field as a value: the same fetch, printed as a symbol. */
	assert_int_equal(pr.plan.value[0].fetch, in[0].a);
	assert_int_equal(pr.plan.value[0].kind, TK_PV_PTR);
	assert_int_equal(pr.plan.value[1].kind, TK_PV_INT);
	assert_true(pr.plan.value[1].is_signed);
	assert_int_equal(pr.plan.nfetch, 2);
	/* BPF reads only the filter's fetch before the filter runs. */
	assert_int_equal(pr.plan.nfilter_fetch, 1);
	tk_probe_spec_free(&pr.spec);

	/* Without a filter, nothing is the filter's. */
	plan_ok(&pr, "t:timer:hrtimer_expire_entry \"%s\", function", TK_PROBE_TRACEPOINT,
		hrtimer_fields, 3, NULL);
	assert_int_equal(pr.plan.nfetch, 1);
	assert_int_equal(pr.plan.nfilter_fetch, 0);
	tk_probe_spec_free(&pr.spec);

	/* Through the record's pointer into the kernel's struct. */
	plan_ok(&pr, "t:timer:hrtimer_expire_entry \"%d\", hrtimer->state", TK_PROBE_TRACEPOINT,
		hrtimer_fields, 3, NULL);
	f = &pr.plan.fetch[pr.plan.value[0].fetch];
	assert_int_equal(f->nsteps, 2);
	assert_int_equal(f->step[0].off, 8);
	assert_int_equal(f->step[1].off, offset_of("hrtimer", "state"));
	assert_int_equal(f->step[1].size, 1);
	tk_probe_spec_free(&pr.spec);
}

static void test_strings_compare_and_print(void **state)
{
	struct probe pr;
	const struct tk_fetch *f;

	(void)state;
	plan_ok(&pr, "t:sched:sched_process_exec (comm == \"ba*\" && filename != \"/bin/true\") \"%s %s %d\", filename, comm, pid",
		TK_PROBE_TRACEPOINT, exec_fields, 3, NULL);
	/* STREQ comm prefix, STREQ filename, NOT, LAND, END */
	assert_int_equal(pr.plan.insn[0].op, TK_I_STREQ);
	assert_int_equal(pr.plan.insn[0].flags, TK_IF_PREFIX);
	assert_string_equal(pr.plan.str[pr.plan.insn[0].b], "ba");
	assert_int_equal(pr.plan.insn[1].op, TK_I_STREQ);
	assert_string_equal(pr.plan.str[pr.plan.insn[1].b], "/bin/true");
	assert_int_equal(pr.plan.insn[2].op, TK_I_NOT);
	assert_int_equal(pr.plan.insn[3].op, TK_I_LAND);
	f = &pr.plan.fetch[pr.plan.insn[1].a];
	assert_int_equal(f->final, TK_FF_DATA_LOC);
	assert_int_equal(f->step[0].off, 8);
	assert_int_equal(f->step[0].size, 4);
	f = &pr.plan.fetch[pr.plan.insn[0].a];
	assert_int_equal(f->final, TK_FF_STR);   /* the record's char array */
	assert_int_equal(f->step[0].off, 16);
	assert_int_equal(f->step[0].size, 0);
	assert_int_equal(pr.plan.value[0].kind, TK_PV_STR);
	assert_int_equal(pr.plan.value[1].kind, TK_PV_STR);
	assert_int_equal(pr.plan.value[2].kind, TK_PV_INT);
	assert_int_equal(pr.plan.value[2].size, 4);
	tk_probe_spec_free(&pr.spec);

	/* The builtin, and a user string through a cast. */
	plan_ok(&pr, "u:c:puts ($comm == \"x\") \"%s\", (char *)arg1", TK_PROBE_UPROBE, NULL, 0, NULL);
	assert_int_equal(pr.plan.fetch[pr.plan.insn[0].a].base, TK_FB_COMM);
	f = &pr.plan.fetch[pr.plan.value[0].fetch];
	assert_int_equal(f->base, TK_FB_ARG);
	assert_int_equal(f->final, TK_FF_STR);
	assert_int_equal(f->user, 1);
	tk_probe_spec_free(&pr.spec);
}

/* argdist's keys (conversion 0): each value takes its own kind, a
 * string (a field, a char *), an address (a void * field), an integer
 * with its size and sign, or a computed one. */
static void test_values_of_any_kind(void **state)
{
	struct tk_plan_ctx ctx = {
		.kind = TK_PROBE_TRACEPOINT, .what = "sched:sched_process_exec", .btf = btf,
		.fields = exec_fields, .nfields = 3, .ksym = fake_ksym,
	};
	struct tk_probe_spec spec;
	struct tk_plan plan;
	struct tk_perr err;

	(void)state;
	assert_int_equal(tk_argspec_parse("t:sched:sched_process_exec:filename,comm,pid,pid * 2:pid > 1",
					  &spec, &err), 0);
	assert_int_equal(tk_plan_build(&ctx, &spec, &plan, &err), 0);
	assert_int_equal(plan.nvalues, 4);
	assert_int_equal(plan.value[0].kind, TK_PV_STR);
	assert_int_equal(plan.value[1].kind, TK_PV_STR);
	assert_int_equal(plan.value[2].kind, TK_PV_INT);
	assert_int_equal(plan.value[2].size, 4);
	assert_true(plan.value[2].is_signed);
	assert_int_equal(plan.value[3].kind, TK_PV_INT);
	assert_true(plan.value[3].prog >= 0);
	assert_int_equal(tk_plan_value_src(&plan.value[3]), -(plan.value[3].prog + 1));
	assert_int_equal(tk_plan_value_src(&plan.value[2]), plan.value[2].fetch);
	assert_true(plan.filter >= 0);
	tk_probe_spec_free(&spec);

	ctx.what = "timer:hrtimer_expire_entry";
	ctx.fields = hrtimer_fields;
	assert_int_equal(tk_argspec_parse("t:timer:hrtimer_expire_entry:function,now", &spec, &err), 0);
	assert_int_equal(tk_plan_build(&ctx, &spec, &plan, &err), 0);
	assert_int_equal(plan.value[0].kind, TK_PV_PTR);
	assert_int_equal(plan.value[1].kind, TK_PV_INT);
	assert_true(plan.value[1].is_signed);
	tk_probe_spec_free(&spec);
}

static void test_arithmetic_is_bytecode(void **state)
{
	struct probe pr;
	const struct tk_insn *in;

	(void)state;
	plan_ok(&pr, "kr:vfs_read (retval < 0) \"%d %d\", -retval, (u8)(count / 2)", TK_PROBE_KRETPROBE,
		NULL, 0, "vfs_read");
	in = pr.plan.insn;
	/* filter: FETCH retval, CONST 0, LT signed (ssize_t), END */
	assert_int_equal(in[0].op, TK_I_FETCH);
	assert_int_equal(in[2].op, TK_I_LT);
	assert_int_equal(in[2].flags, TK_IF_SIGNED);
	assert_int_equal(in[3].op, TK_I_END);
	assert_int_equal(pr.plan.fetch[in[0].a].base, TK_FB_RETVAL);
	/* -retval: a program */
	assert_int_equal(pr.plan.value[0].fetch, -1);
	assert_int_equal(pr.plan.value[0].prog, 4);
	assert_int_equal(in[4].op, TK_I_FETCH);
	assert_int_equal(in[5].op, TK_I_NEG);
	assert_int_equal(in[6].op, TK_I_END);
	/* (u8)(count / 2): count is size_t, unsigned */
	assert_int_equal(in[7].op, TK_I_FETCH);
	assert_int_equal(pr.plan.fetch[in[7].a].arg, 3);
	assert_int_equal(in[9].op, TK_I_DIV);
	assert_int_equal(in[9].flags, 0);
	assert_int_equal(in[10].op, TK_I_CAST);
	assert_int_equal(in[10].a, 1);
	assert_int_equal(pr.plan.value[1].size, 1);
	assert_false(pr.plan.value[1].is_signed);
	tk_probe_spec_free(&pr.spec);
}

static void test_errors_name_the_place_and_the_closest(void **state)
{
	(void)state;
	plan_fails("t:timer:hrtimer_expire_entry (fnction != 0)", TK_PROBE_TRACEPOINT, hrtimer_fields, 3,
		   NULL, 30, "'fnction' is not a field of timer:hrtimer_expire_entry, a builtin or a kernel symbol; closest: function");
	plan_fails("k:vfs_read \"%s\", file->f_pth.dentry", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   21, "struct file has no member 'f_pth'; closest: f_path");
	plan_fails("k:vfs_read \"%d\", fle", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   17, "'fle' is not an argument of vfs_read, a builtin or a kernel symbol; closest: file");
	plan_fails("k:vfs_read (retval > 0)", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   12, "retval is a return probe's");
	plan_fails("k:vfs_read \"%d\", arg5", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   17, "vfs_read has 4 arguments");
	plan_fails("t:timer:hrtimer_expire_entry \"%d\", arg1", TK_PROBE_TRACEPOINT, hrtimer_fields, 3,
		   NULL, 35, "a tracepoint has fields, not arguments");
}

static void test_type_errors(void **state)
{
	(void)state;
	plan_fails("t:sched:sched_process_exec \"%d\", comm", TK_PROBE_TRACEPOINT, exec_fields, 3, NULL,
		   33, "a string here, where an integer is needed");
	plan_fails("t:sched:sched_process_exec \"%s\", pid", TK_PROBE_TRACEPOINT, exec_fields, 3, NULL,
		   33, "%s takes a string or an address: this is an integer");
	plan_fails("t:sched:sched_process_exec (pid == \"x\")", TK_PROBE_TRACEPOINT, exec_fields, 3, NULL,
		   28, "not a string: it cannot equal \"x\"");
	plan_fails("t:sched:sched_process_exec (comm + 1)", TK_PROBE_TRACEPOINT, exec_fields, 3, NULL,
		   28, "a string here");
	plan_fails("k:vfs_read \"%d\", file->f_path", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   21, "a struct");
	plan_fails("k:vfs_read \"%d\", (struct nosuch *)arg1", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   17, "no type 'struct nosuch' in the kernel's BTF");
	plan_fails("k:vfs_read \"%d\", count->x", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   22, "'->x' on a value that is not a pointer to a struct");
	plan_fails("k:vfs_read \"%d\", file.f_path", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   21, "(a pointer takes '->')");
	plan_fails("k:vfs_read \"%d\", $nope", TK_PROBE_KPROBE, NULL, 0, "vfs_read",
		   17, "unknown builtin '$nope'");
}

static int setup(void **state)
{
	(void)state;
	btf = btf__load_vmlinux_btf();
	return btf ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	btf__free(btf);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_member_chain_to_a_file_name),
		cmocka_unit_test(test_container_of_reaches_the_task),
		cmocka_unit_test(test_tracepoint_fields_and_a_symbol_filter),
		cmocka_unit_test(test_one_comparison_is_a_quick_filter),
		cmocka_unit_test(test_strings_compare_and_print),
		cmocka_unit_test(test_values_of_any_kind),
		cmocka_unit_test(test_arithmetic_is_bytecode),
		cmocka_unit_test(test_errors_name_the_place_and_the_closest),
		cmocka_unit_test(test_type_errors),
	};

	return cmocka_run_group_tests_name("plan", tests, setup, teardown);
}
