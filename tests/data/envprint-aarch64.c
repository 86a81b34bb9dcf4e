/* A freestanding aarch64 Linux program: prints its LD_* environment and its arguments */
static long sys3(long n, long a, long b, long c)
{
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
	                                   x2 __asm__("x2") = c;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
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
	char **argv = (char **)(sp + 1), **envp = argv + argc + 1;
	for (long i = 1; i < argc; i++)
		put(argv[i]);
	for (; *envp; envp++)
		if ((*envp)[0] == 'L' && (*envp)[1] == 'D' && (*envp)[2] == '_')
			put(*envp);
	sys3(93, 0, 0, 0);
}
__asm__(".globl _start\n_start:\n mov x0, sp\n bl cmain\n");
