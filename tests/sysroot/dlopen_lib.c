/* dlopen_lib: shared library used by dlopen.c (built as libdlopen_lib.so). */
int lib_counter = 40;              /* data the program reads and writes */
__thread int lib_tls = 7;          /* thread-local storage in a shared library */
static int constructed;

__attribute__((constructor)) static void lib_init(void)
{
	constructed = 1;
}

int lib_constructed(void)
{
	return constructed;
}

int lib_add(int a, int b)
{
	return a + b + lib_counter;
}

int lib_bump_tls(void)
{
	return ++lib_tls;
}
