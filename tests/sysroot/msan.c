// flags: -fsanitize=memory
// requires: clang_rt.msan
// link: dynamic
// native: qemu-user cannot host it (below); where the host's CPU is the target's, it runs there
// not-run: qemu-user on an x86_64 host cannot map MSan's allocator at 0xe00000000000, above the host's 47-bit user address space (the runtime's CHECK in sanitizer_allocator_primary64.h:133 fails)
/* msan: MemorySanitizer reports a branch on a malloc'd value never written, and stops the
 * program; the same branch on a written value is not reported. */
#include <stdlib.h>
#include "child_report.h"

static volatile int sink;

static void branch_on(int initialise)
{
	int *volatile p = malloc(sizeof(int));
	if (initialise)
		*p = 7;
	if (*p == 42)   /* the bug when *p was never written */
		sink = 1;
	free(p);
}

static void written(void)
{
	branch_on(1);
}

static void unwritten(void)
{
	branch_on(0);
}

int main(void)
{
	expect_no_report(written, "WARNING", "branch on a written value");

	int status = child_report(unwritten);
	int found = strstr(report, "WARNING: MemorySanitizer: use-of-uninitialized-value") != NULL;
	int stopped = WIFEXITED(status) && WEXITSTATUS(status) != 0;
	printf("branch on an unwritten value reported: %s\n", yes(found));
	printf("and the program stops: %s\n", yes(stopped));
	show_report_if(!(found && stopped));
	return 0;
}
