// requires: fenv
// flags: -lm
/* fma_flags: fma and fmaf return the right bits and raise exactly the right floating-point
 * exception flags, all five of them, in all four rounding modes. The cases are chosen so that
 * the answer is the same on every architecture: a tiny result here is tiny before and after
 * rounding (where tininess is detected does not matter), and an exact tiny result raises
 * nothing. Where the machine has no fused multiply-add, musl's fmaf computes in double and
 * decides between UNDERFLOW and INEXACT by adding again: a compiler that moved that addition
 * past the flag test lost UNDERFLOW (armv6, mips: musl patch 0002). Values are printed as bits
 * (every printf formats them alike), a NaN as "nan" (its sign and payload are not specified). */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "fenv_report.h"

/* through volatile pointers: nothing is computed at build time or moved across fesetround */
static float (*volatile fmaf_fn)(float, float, float) = fmaf;
static double (*volatile fma_fn)(double, double, double) = fma;

/* One line: the function, the case, the rounding mode, the result's bits (`digits` hex
 * digits) or "nan", the flags raised */
static void print_result(const char *fn, const char *what, int mode, int nan,
                         unsigned long long bits, int digits, int flags)
{
	printf("%-4s %-22s %-4s ", fn, what, mode_names[mode]);
	if (nan)
		printf("%-*s", digits, "nan");
	else
		printf("%0*llx", digits, bits);
	print_flags(flags);
}

static void check_f(const char *what, float x, float y, float z)
{
	for (int m = 0; m < 4; m++) {
		feclearexcept(FE_ALL_EXCEPT);
		fesetround(modes[m]);
		float r = fmaf_fn(x, y, z);
		int f = fetestexcept(FE_ALL_EXCEPT);
		fesetround(FE_TONEAREST);
		uint32_t u;
		memcpy(&u, &r, sizeof(u));
		print_result("fmaf", what, m, isnan(r), u, 8, f);
	}
}

static void check_d(const char *what, double x, double y, double z)
{
	for (int m = 0; m < 4; m++) {
		feclearexcept(FE_ALL_EXCEPT);
		fesetround(modes[m]);
		double r = fma_fn(x, y, z);
		int f = fetestexcept(FE_ALL_EXCEPT);
		fesetround(FE_TONEAREST);
		uint64_t u;
		memcpy(&u, &r, sizeof(u));
		print_result("fma", what, m, isnan(r), u, 16, f);
	}
}

int main(void)
{
	/* the operands are exact constants: making them raises nothing */
	check_f("tiny-inexact", 0x1p-120f, 0x1p-120f, 0x1p-149f);
	check_f("tiny-exact", 0x1p-100f, 0x1p-49f, 0.0f);
	check_f("inexact", 1.0f, 1.0f, 0x1p-30f);
	check_f("exact", 2.0f, 3.0f, 4.0f);
	check_f("overflow", 0x1p127f, 4.0f, -0x1p127f);
	check_f("invalid", INFINITY, 0.0f, 1.0f);
	check_d("tiny-inexact", 0x1p-1000, 0x1p-100, 0x1p-1074);
	check_d("tiny-exact", 0x1p-1000, 0x1p-74, 0.0);
	check_d("inexact", 1.0, 1.0, 0x1p-60);
	check_d("exact", 2.0, 3.0, 4.0);
	check_d("overflow", 0x1p1023, 4.0, -0x1p1023);
	check_d("invalid", INFINITY, 0.0, 1.0);
	return 0;
}
