/* fenv_report.h: the four rounding modes and how a test program prints the exception flags a
 * call raised (all five, by name), for fma_flags.c and erfc_flags.c. */
#include <fenv.h>
#include <stdio.h>

static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
static const char *const mode_names[] = {"near", "down", "up", "zero"};

static void print_flags(int f)
{
	static const struct { int flag; const char *name; } names[] = {
		{FE_INVALID, "invalid"}, {FE_DIVBYZERO, "divbyzero"}, {FE_OVERFLOW, "overflow"},
		{FE_UNDERFLOW, "underflow"}, {FE_INEXACT, "inexact"}};
	int any = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & names[i].flag) {
			printf(" %s", names[i].name);
			any = 1;
		}
	printf("%s\n", any ? "" : " none");
}
