// flags: -fsanitize=leak
// requires: clang_rt.lsan
// link: dynamic
// native: qemu-user cannot host it (below); where the host's CPU is the target's, it runs there
// not-run: qemu-user 7.2 cannot host LSan: its leak check starts its tracer with clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_UNTRACED), flags qemu refuses (EINVAL, and LSan's fatal error), and on x86_64 and aarch64 it does not get that far: qemu's mmap of its allocator region (0x500000000000) makes no progress in minutes
/* lsan: LeakSanitizer reports a block whose last pointer was dropped, with its size and the
 * stack of its allocation, and the check ends the program with LSan's status 23; a block
 * still reachable from a global is not reported; a dropped block the C library allocated is. */
#include <stdlib.h>
#include <string.h>
#include <sanitizer/lsan_interface.h>
#include "child_report.h"

static void *volatile kept;

/* noinline, and the stack scrubbed after: no copy of the pointer is left in a register or
 * a dead frame for LSan's conservative scan to find */
__attribute__((noinline)) static void allocate(size_t size, int keep)
{
	kept = malloc(size);
	if (!keep)
		kept = NULL;
}

/* deeper than the allocation went (LSan's malloc records the stack trace in a buffer on the
 * stack), one volatile store at a time: a memset of the array, its volatile cast away, was
 * dead code to the optimizer, and on i686 a copy of strdup's block stayed on the stack */
__attribute__((noinline)) static void scrub_stack(void)
{
	volatile char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

static void reachable(void)
{
	allocate(32, 1);
	scrub_stack();
	__lsan_do_leak_check();
}

static void dropped(void)
{
	allocate(48, 0);
	scrub_stack();
	__lsan_do_leak_check();
}

/* a block the C library allocated for the program (strdup calls malloc), then dropped: with
 * musl the C library is the dynamic linker too, whose allocations LSan once took for its own
 * and never reported */
__attribute__((noinline)) static void duplicate(void)
{
	kept = strdup("twenty bytes of text");
	kept = NULL;
}

static void dropped_by_libc(void)
{
	duplicate();
	scrub_stack();
	__lsan_do_leak_check();
}

int main(void)
{
	expect_no_report(reachable, "ERROR", "a block reachable from a global");

	int status = child_report(dropped);
	int found = strstr(report, "ERROR: LeakSanitizer: detected memory leaks") != NULL;
	int size = strstr(report, "Direct leak of 48 byte(s) in 1 object(s) allocated from") != NULL;
	/* frames, not names: run natively through the sysroot's loader, the runtime takes the
	 * loader (/proc/self/exe) for the program's module and names its functions wrongly */
	int stack = strstr(report, "allocated from:\n    #0 0x") && strstr(report, "\n    #1 0x");
	int exit23 = WIFEXITED(status) && WEXITSTATUS(status) == 23;
	printf("a dropped block: leak reported: %s\n", yes(found));
	printf("with its size: %s\n", yes(size));
	printf("and the stack of its allocation: %s\n", yes(stack));
	printf("the check ends the program with status 23: %s\n", yes(exit23));
	show_report_if(!(found && size && stack && exit23));

	status = child_report(dropped_by_libc);
	int libc = strstr(report, "Direct leak of 21 byte(s) in 1 object(s) allocated from") != NULL;
	printf("a dropped block strdup allocated: leak reported: %s\n", yes(libc));
	show_report_if(!libc);
	return 0;
}
