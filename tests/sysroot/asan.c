// flags: -fsanitize=address -fno-omit-frame-pointer
// requires: clang_rt.asan
// link: dynamic
// native: qemu-user cannot host it (below); where the host's CPU is the target's, it runs there
// not-run: qemu-user 7.2 cannot host ASan's memory layout: after the runtime maps its shadow, qemu's mmap of the allocator region (0x500000000000) makes no progress in minutes
/* asan: AddressSanitizer finds a heap overflow one byte past a malloc'd block and reports it
 * with the stack of the bad write and of the allocation, then stops the program; memory used
 * within bounds is not reported. */
#include <stdlib.h>
#include "child_report.h"

static void in_bounds(void)
{
	char *volatile p = malloc(16);
	p[15] = 1;
	free(p);
}

static void overflow(void)
{
	char *volatile p = malloc(16);
	p[16] = 1;   /* the bug */
	free(p);
}

int main(void)
{
	expect_no_report(in_bounds, "ERROR", "memory used within bounds");

	int status = child_report(overflow);
	int stopped = WIFEXITED(status) && WEXITSTATUS(status) != 0;
	int kind = strstr(report, "ERROR: AddressSanitizer: heap-buffer-overflow") != NULL;
	int write = strstr(report, "WRITE of size 1") != NULL;
	int stacks = strstr(report, "#0 0x") && strstr(report, "allocated by thread T0 here");
	printf("heap overflow stops the program: %s\n", yes(stopped));
	printf("reported as heap-buffer-overflow: %s\n", yes(kind));
	printf("a write of size 1: %s\n", yes(write));
	printf("with the stacks of the write and the allocation: %s\n", yes(stacks));
	show_report_if(!(stopped && kind && write && stacks));
	return 0;
}
