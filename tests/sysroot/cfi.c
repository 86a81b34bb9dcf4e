// flags: -flto -fvisibility=default -fsanitize=cfi-icall -fsanitize-cfi-cross-dso -fno-sanitize-trap=cfi-icall
// requires: clang_rt.cfi
// link: dynamic
/* cfi: control-flow integrity (-fsanitize=cfi-icall, across shared objects through the cfi
 * runtime): an indirect call through a pointer of the function's own type goes through, one
 * through a pointer of another type is reported and stops the program. */
#include "child_report.h"

int add_one(int x)
{
	return x + 1;
}

float half(float x)
{
	return x / 2;
}

static void call_as_int_function(void *fn)
{
	int (*volatile f)(int) = (int (*)(int))fn;
	printf("%d\n", f(41));
}

static void right_type(void)
{
	call_as_int_function((void *)add_one);
}

static void wrong_type(void)
{
	call_as_int_function((void *)half);
}

int main(void)
{
	expect_no_report(right_type, "error", "call through the function's own type");

	int status = child_report(wrong_type);
	int found = strstr(report, "control flow integrity check for type 'int (int)' failed") != NULL;
	int stopped = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("call through another type reported: %s\n", yes(found));
	printf("and the program stops: %s\n", yes(stopped));
	show_report_if(!(found && stopped));
	return 0;
}
