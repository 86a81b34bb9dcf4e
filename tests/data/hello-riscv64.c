/* A freestanding riscv64 Linux program: prints "riscv64" and its arguments, one a line */
static long sys3(long n, long a, long b, long c)
{
	register long a7 __asm__("a7") = n, a0 __asm__("a0") = a, a1 __asm__("a1") = b,
	                                    a2 __asm__("a2") = c;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2) : "memory");
	return a0;
}
static void put(const char *s)
{
	unsigned long n = 0;
	while (s[n])
		n++;
	sys3(64, 1, (long)s, n);
	sys3(64, 1, (long)"\n", 1);
}
void cmain(long *sp);
void cmain(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	put("riscv64");
	for (long i = 1; i < argc; i++)
		put(argv[i]);
	sys3(93, 0, 0, 0);
}
__asm__(".globl _start\n_start:\n mv a0, sp\n call cmain\n");
