// flags: -fsanitize=fuzzer
// requires: clang_rt.fuzzer
// exit: 77
// link: dynamic
// native: qemu-x86_64 misaligns its signal stacks (below); where the host's CPU is the target's, it runs there
// not-run-under: qemu-arm-static: after finding the bug, libFuzzer's crash handler prints a stack trace, whose unwinder asks musl's pthread_getattr_np for the main thread's stack; musl finds its end by growing pages with mremap until one fails with EFAULT, and qemu-user 7.2 answers ENOMEM for every page of a 32-bit guest (its address space is reserved on the host), so the probe never ends
// not-run-under: qemu-i386-static: after finding the bug, libFuzzer's crash handler prints a stack trace, whose unwinder asks musl's pthread_getattr_np for the main thread's stack; musl finds its end by growing pages with mremap until one fails with EFAULT, and qemu-user 7.2 answers ENOMEM for every page of a 32-bit guest (its address space is reserved on the host), so the probe never ends
// not-run-under: qemu-x86_64-static: qemu-user 7.2 enters an x86_64 signal handler with the stack misaligned by 8 (%rsp % 16 == 0 at entry, 8 natively), so libFuzzer's SIGABRT handler dies in musl's vfprintf on an aligned SSE store (movaps) after finding the bug
/* fuzzer: libFuzzer (-fsanitize=fuzzer, its own main) finds a planted bug - the input "FUZZ",
 * compared one byte at a time - within a bounded number of runs, and ends with its crash exit
 * status. Its reports go to stderr, which is closed here so that the output compared is fixed;
 * the bounds come through LLVMFuzzerInitialize (the harness passes no arguments). Dynamic
 * only: in a static program libFuzzer's signal interception finds no sigaction ("REAL(sigaction)
 * == nullptr") and it stops before fuzzing. The bug aborts (SIGABRT is one of the signals
 * libFuzzer catches; a trap instruction's SIGTRAP is not). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char *args[] = {NULL, "-runs=2000000", "-seed=1", "-max_len=8", NULL};
	args[0] = (*argv)[0];
	*argc = 4;
	*argv = args;
	int null = open("/dev/null", O_WRONLY);
	dup2(null, 2);   /* libFuzzer's statistics and crash report */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 4 && data[0] == 'F' && data[1] == 'U' && data[2] == 'Z' && data[3] == 'Z') {
		printf("planted bug found: %.4s\n", (const char *)data);
		fflush(stdout);
		abort();
	}
	return 0;
}
