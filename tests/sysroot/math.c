// requires: fenv
// flags: -lm
/* math: libm functions, fma, rounding functions, fenv rounding modes and long double,
 * printed with precisions whose rounding is stable on every architecture. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

/* volatile inputs keep the compiler from folding the calls to constants at build time */
static volatile double two = 2.0, one = 1.0, three = 3.0, ten = 10.0, half = 0.5, tenth = 0.1;
static volatile double zero = 0.0, minus_one = -1.0;

static double divide(void)
{
	volatile double r = one / three;
	return r;
}

int main(void)
{
	printf("sqrt(2)=%.6f sqrtf(2)=%.6f\n", sqrt(two), (double)sqrtf((float)two));
	printf("sin(1)=%.6f cos(1)=%.6f tan(1)=%.6f\n", sin(one), cos(one), tan(one));
	printf("exp(1)=%.6f log(10)=%.6f log2(10)=%.6f log10(2)=%.6f\n", exp(one), log(ten), log2(ten),
	       log10(two));
	printf("pow(2,0.5)=%.6f pow(2,10)=%.1f cbrt(27)=%.1f hypot(3,4)=%.1f\n", pow(two, half),
	       pow(two, ten), cbrt(27.0 * one), hypot(three, 4.0 * one));
	printf("atan2(1,1)*4=%.10f\n", atan2(one, one) * 4);
	/* fma rounds once: 0.1*10 - 1 is exactly 2^-54, the unfused expression gives 0 */
	printf("fma(0.1,10,-1)=%a\n", fma(tenth, ten, minus_one));
	printf("nextafter(1,2)=%a ldexp(1,-1074)=%a\n", nextafter(one, two), ldexp(one, -1074));
	int e;
	double m = frexp(48.0 * one, &e);
	printf("frexp(48)=%.3f*2^%d fmod(10,3)=%.1f remainder(10,3)=%.1f\n", m, e, fmod(ten, three),
	       remainder(ten, three));
	printf("floor/ceil/trunc/round(-2.5)=%.1f %.1f %.1f %.1f\n", floor(-2.5 * one), ceil(-2.5 * one),
	       trunc(-2.5 * one), round(-2.5 * one));
	printf("lround(2.5)=%ld lround(-2.5)=%ld llround(1e15+0.5)=%lld\n", lround(2.5 * one),
	       lround(-2.5 * one), llround(1e15 * one + 0.5));
	printf("log(0)=%f 1/0=%f isnan(sqrt(-1))=%d isinf(exp(1000))=%d\n", log(zero), one / zero,
	       isnan(sqrt(minus_one)) != 0, isinf(exp(1000.0 * one)) != 0);

	static const struct { int mode; const char *name; } modes[] = {
		{FE_TONEAREST, "nearest"}, {FE_UPWARD, "upward"},
		{FE_DOWNWARD, "downward"}, {FE_TOWARDZERO, "towardzero"},
	};
	for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (fesetround(modes[i].mode) != 0 || fegetround() != modes[i].mode) {
			printf("fesetround(%s) failed\n", modes[i].name);
			return 1;
		}
		double third = divide();
		printf("%-10s rint(2.5)=%.1f rint(-2.5)=%.1f lrint(2.7)=%ld 1/3=%a\n", modes[i].name,
		       rint(2.5 * one), rint(-2.5 * one), lrint(2.7 * one), third);
	}
	fesetround(FE_TONEAREST);
	feclearexcept(FE_ALL_EXCEPT);
	volatile double q = one / zero;
	(void)q;
	printf("FE_DIVBYZERO raised=%d\n", fetestexcept(FE_DIVBYZERO) != 0);

	long double ld = 1.0L / (long double)three + sqrtl((long double)two);
	printf("long double 1/3+sqrt(2)=%.6Lf\n", ld);
	return 0;
}
