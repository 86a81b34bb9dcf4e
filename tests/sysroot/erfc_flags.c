// system: Linux
// requires: fenv
// flags: -lm
/* erfc_flags: erfc and erfcf far out in their tails return the right bits and raise exactly
 * the right floating-point exception flags, all five, in all four rounding modes. For |x| >= 28
 * musl returns `sign ? 2 - tiny : tiny*tiny`: 2 - tiny raises INEXACT alone, tiny*tiny
 * UNDERFLOW and INEXACT (a result far below the smallest subnormal: tiny before and after
 * rounding on every architecture). clang evaluates a conditional whose two arms are constant
 * expressions unconditionally, even under strict floating point, so musl built by clang raised
 * UNDERFLOW for erfc(-x) too (found by libm_exact with all five flags; musl patch 0003 returns
 * from two branches). Values are printed as bits. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "fenv_report.h"

/* through volatile pointers: nothing is computed at build time or moved across fesetround */
static float (*volatile erfcf_fn)(float) = erfcf;
static double (*volatile erfc_fn)(double) = erfc;

int main(void)
{
	static const double xs[] = {-1024.0, -28.0, 28.0, 1024.0};
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
		for (int m = 0; m < 4; m++) {
			feclearexcept(FE_ALL_EXCEPT);
			fesetround(modes[m]);
			double r = erfc_fn(xs[i]);
			int f = fetestexcept(FE_ALL_EXCEPT);
			fesetround(FE_TONEAREST);
			uint64_t u;
			memcpy(&u, &r, sizeof(u));
			printf("erfc  %6.0f %-4s %016llx", xs[i], mode_names[m], (unsigned long long)u);
			print_flags(f);
		}
	static const float fs[] = {-1024.0f, -28.0f, 28.0f, 1024.0f};
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		for (int m = 0; m < 4; m++) {
			feclearexcept(FE_ALL_EXCEPT);
			fesetround(modes[m]);
			float r = erfcf_fn(fs[i]);
			int f = fetestexcept(FE_ALL_EXCEPT);
			fesetround(FE_TONEAREST);
			uint32_t u;
			memcpy(&u, &r, sizeof(u));
			printf("erfcf %6.0f %-4s %08lx", (double)fs[i], mode_names[m], (unsigned long)u);
			print_flags(f);
		}
	return 0;
}
