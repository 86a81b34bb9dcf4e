// flags: -fsanitize=hwaddress -fno-omit-frame-pointer
// requires: clang_rt.hwasan
// link: dynamic
// not-run: qemu-user 7.2 cannot host HWASan's memory layout: after the runtime maps its shadow, qemu's next mmap makes no progress in minutes
/* hwasan: HWAddressSanitizer (AArch64's top-byte-ignore tags pointers and their memory)
 * reports a heap overflow past a malloc'd block as a tag mismatch and stops the program;
 * memory used within bounds is not reported. */
#include <stdlib.h>
#include "child_report.h"

static void in_bounds(void)
{
	char *volatile p = malloc(32);
	p[31] = 1;
	free(p);
}

static void overflow(void)
{
	char *volatile p = malloc(32);
	p[32] = 1;   /* the bug: the next granule carries another tag */
	free(p);
}

int main(void)
{
	expect_no_report(in_bounds, "ERROR", "memory used within bounds");

	int status = child_report(overflow);
	int found = strstr(report, "HWAddressSanitizer: tag-mismatch") != NULL;
	int stopped = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("heap overflow reported as a tag mismatch: %s\n", yes(found));
	printf("and the program stops: %s\n", yes(stopped));
	show_report_if(!(found && stopped));
	return 0;
}
