/* libsctarget.so for stackcount's tests: a chain of three functions
 * inside a shared library, called by stackcount_target's "lib N". */
#define NOINLINE __attribute__((noinline))

NOINLINE void sc_lib_target(void)
{
	__asm__ volatile("" ::: "memory");
}

NOINLINE void sc_lib_inner(long n)
{
	for (long i = 0; i < n; i++)
		sc_lib_target();
}

NOINLINE void sc_lib_entry(long n)
{
	sc_lib_inner(n);
}
