// system: Linux
// requires: fenv
// flags: -lm
/* libm_exact: the target's libm computes bit for bit what the reference does, with the same
 * floating-point exception flags, in all four rounding modes.
 *
 * The reference is Debian's gcc-built musl 1.2.3 on x86_64 (package musl-tools, musl-gcc):
 * `make libm-reference` regenerates the expected output from it. musl's
 * double and float functions are the same C code on every architecture (the assembly some
 * architectures have instead is for exactly rounded operations: sqrt, fma, rint, fabs), so any
 * difference is a build defect: contracted multiply-adds (clang's default -ffp-contract=on),
 * forced evaluations folded at compile time, a wrong rounding mode.
 *
 * Per function, one line: the number of calls and a hash of every result (NaN canonical:
 * sign and payload of a NaN differ between architectures and are not specified) and of all
 * five exception flags each call raised. FE_UNDERFLOW depends on when the architecture detects
 * tininess (before rounding on Arm and POWER, after it on x86 and RISC-V), so an architecture's
 * reference is gcc-built musl of that architecture (tests/sysroot/libm-reference.sh): a file
 * per triple where it differs from x86_64's.
 * With an argument, every call is printed instead, to find the one that differs. */
#define _GNU_SOURCE
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FLAGS (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INEXACT)

static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
static const char *const mode_names[] = {"near", "down", "up", "zero"};

static double inputs[320];
/* The float inputs are converted once, here: a conversion raises flags (1e300 overflows) and
 * must not be moved by the compiler between begin() and the call. */
static float finputs[320];
static size_t n_inputs;
static int verbose;

static uint64_t hash_state;
static unsigned long calls;

static void hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		hash_state ^= b[i];
		hash_state *= 0x100000001b3ULL;   /* FNV-1a */
	}
}

/* Little-endian byte order whatever the machine's: the same hash on big-endian targets. */
static void hash_le(uint64_t v, size_t n)
{
	unsigned char b[8];
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	hash_bytes(b, n);
}

static uint64_t bits_of(double x)
{
	uint64_t u;
	if (isnan(x))
		return 0x7ff8000000000000ULL;
	memcpy(&u, &x, sizeof(u));
	return u;
}

static void begin(void)
{
	feclearexcept(FE_ALL_EXCEPT);
}

/* Record one call's result and flags (the rounding mode is restored by the caller). */
static void record(const char *name, int mode, double x, double y, double r)
{
	int flags = fetestexcept(FLAGS);
	uint64_t u = bits_of(r);
	int f = (flags & FE_INVALID ? 1 : 0) | (flags & FE_DIVBYZERO ? 2 : 0) |
	        (flags & FE_OVERFLOW ? 4 : 0) | (flags & FE_INEXACT ? 8 : 0) |
	        (flags & FE_UNDERFLOW ? 16 : 0);
	fesetround(FE_TONEAREST);
	hash_le(u, 8);
	hash_le((uint64_t)f, 4);
	calls++;
	if (verbose)
		printf("%s %s %a %a -> %a flags %d\n", name, mode_names[mode], x, y, r, f);
}

/* The same for a function with an integer result (lrint, llround, ...): no conversion to
 * double between the call and the flag test. Where FE_INVALID says the value does not fit,
 * the result is unspecified (each architecture's conversion gives its own) and not hashed. */
static void record_int(const char *name, int mode, double x, long long r)
{
	int flags = fetestexcept(FLAGS);
	int f = (flags & FE_INVALID ? 1 : 0) | (flags & FE_DIVBYZERO ? 2 : 0) |
	        (flags & FE_OVERFLOW ? 4 : 0) | (flags & FE_INEXACT ? 8 : 0) |
	        (flags & FE_UNDERFLOW ? 16 : 0);
	fesetround(FE_TONEAREST);
	hash_le(f & 1 ? 0 : (uint64_t)r, 8);
	hash_le((uint64_t)f, 4);
	calls++;
	if (verbose)
		printf("%s %s %a -> %lld flags %d\n", name, mode_names[mode], x, f & 1 ? 0 : r, f);
}

static void report(const char *name)
{
	if (!verbose)
		printf("%-10s %5lu %016llx\n", name, calls, (unsigned long long)hash_state);
	hash_state = 0xcbf29ce484222325ULL;
	calls = 0;
}

/* Called through volatile pointers: the compiler cannot evaluate them at build time or move
 * them across the rounding mode changes. */
typedef double (*d1)(double);
typedef double (*d2)(double, double);
typedef float (*f1)(float);
typedef float (*f2)(float, float);

static void run_d1(const char *name, d1 volatile fn)
{
	for (int m = 0; m < 4; m++)
		for (size_t i = 0; i < n_inputs; i++) {
			begin();
			fesetround(modes[m]);
			double r = fn(inputs[i]);
			record(name, m, inputs[i], 0, r);
		}
	report(name);
}

static void run_d2(const char *name, d2 volatile fn)
{
	for (int m = 0; m < 4; m++)
		for (size_t i = 0; i < n_inputs; i++) {
			double x = inputs[i], y = inputs[(i * 7 + 3) % n_inputs];
			begin();
			fesetround(modes[m]);
			double r = fn(x, y);
			record(name, m, x, y, r);
		}
	report(name);
}

static void run_f1(const char *name, f1 volatile fn)
{
	for (int m = 0; m < 4; m++)
		for (size_t i = 0; i < n_inputs; i++) {
			float x = finputs[i];
			begin();
			fesetround(modes[m]);
			float r = fn(x);
			record(name, m, x, 0, r);
		}
	report(name);
}

static void run_f2(const char *name, f2 volatile fn)
{
	for (int m = 0; m < 4; m++)
		for (size_t i = 0; i < n_inputs; i++) {
			float x = finputs[i], y = finputs[(i * 7 + 3) % n_inputs];
			begin();
			fesetround(modes[m]);
			float r = fn(x, y);
			record(name, m, x, y, r);
		}
	report(name);
}

static void run_bessel(const char *name, double (*volatile fn)(int, double))
{
	static const int orders[] = {0, 1, 2, 6, -3, 20};
	for (int m = 0; m < 4; m++)
		for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++)
			for (size_t i = 0; i < n_inputs; i++) {
				begin();
				fesetround(modes[m]);
				double r = fn(orders[k], inputs[i]);
				record(name, m, orders[k], inputs[i], r);
			}
	report(name);
}

static void run_ilogb(void)
{
	int (*volatile fn)(double) = ilogb;
	for (size_t i = 0; i < n_inputs; i++) {
		begin();
		int r = fn(inputs[i]);
		/* the value for 0 and NaN is FP_ILOGB0 / FP_ILOGBNAN, the same macros everywhere */
		record("ilogb", 0, inputs[i], 0, (double)r);
	}
	report("ilogb");
}

static void run_scalbn(void)
{
	static const int exps[] = {-1100, -1060, -10, 10, 1000, 1100};
	double (*volatile fn)(double, int) = scalbn;
	for (int m = 0; m < 4; m++)
		for (size_t k = 0; k < sizeof(exps) / sizeof(exps[0]); k++)
			for (size_t i = 0; i < n_inputs; i++) {
				begin();
				fesetround(modes[m]);
				double r = fn(inputs[i], exps[k]);
				record("scalbn", m, inputs[i], exps[k], r);
			}
	report("scalbn");
}

static void run_fma(void)
{
	double (*volatile fn)(double, double, double) = fma;
	for (int m = 0; m < 4; m++)
		for (size_t i = 0; i < n_inputs; i++) {
			double x = inputs[i], y = inputs[(i * 7 + 3) % n_inputs];
			double z = -inputs[(i * 13 + 5) % n_inputs];
			begin();
			fesetround(modes[m]);
			double r = fn(x, y, z);
			record("fma", m, x, y, r);
		}
	report("fma");
}

/* lrint, lround and their kin. Their inputs: the common ones, then the same count scaled to
 * the edges of 32- and 64-bit integers (2^30, 2^52, 2^62 and up to about 5 times that, some
 * with a fraction), where FE_INVALID and FE_INEXACT are the conversion's own. Converted once,
 * before any call (see finputs). */
static double iinputs[4][320];
static float fiinputs[4][320];

#define RUN_TO_INT(fname, type, inputs_of)                                                  \
	static void run_##fname(void)                                                          \
	{                                                                                      \
		type (*volatile fn)(__typeof__(inputs_of[0][0])) = fname;                          \
		for (int m = 0; m < 4; m++)                                                        \
			for (size_t k = 0; k < 4; k++)                                                 \
				for (size_t i = 0; i < n_inputs; i++) {                                    \
					__typeof__(inputs_of[0][0]) x = inputs_of[k][i];                       \
					begin();                                                               \
					fesetround(modes[m]);                                                  \
					type r = fn(x);                                                        \
					record_int(#fname, m, x, r);                                           \
				}                                                                          \
		report(#fname);                                                                    \
	}
RUN_TO_INT(lrint, long, iinputs)
RUN_TO_INT(llrint, long long, iinputs)
RUN_TO_INT(lround, long, iinputs)
RUN_TO_INT(llround, long long, iinputs)
RUN_TO_INT(lrintf, long, fiinputs)
RUN_TO_INT(llrintf, long long, fiinputs)
RUN_TO_INT(lroundf, long, fiinputs)
RUN_TO_INT(llroundf, long long, fiinputs)

/* Deterministic inputs: special values, values near the edges of functions' domains, and
 * pseudo-random doubles over moderate and full exponent ranges. */
static void make_inputs(void)
{
	static const double specials[] = {
		0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
		0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1022, DBL_MAX, -DBL_MAX, 1e-300, -1e-300,
		1e300, 0x1.921fb54442d18p0, 0x1.921fb54442d18p1, 0x1.921fb54442d18p2, 709.78,
		710.0, -745.2, -746.0, 1e22, -1e22, 0.75, 10.0, 100.0, -100.0, 171.6, 172.0,
		0x1.8c5db097f7442p-1, 0x1p-30, -0x1p-30, 0x1p60, 1.5, -1.5, 0.9999999999999999,
		1.0000000000000002, -0.9999999999999999, 127.9, 128.0, -150.0, 88.7, 89.0, 1e-40,
	};
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		inputs[n_inputs++] = specials[i];
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	while (n_inputs < sizeof(inputs) / sizeof(inputs[0])) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint64_t sign = s >> 63, mant = s & 0xfffffffffffffULL;
		uint64_t e = n_inputs % 4 == 0 ? (s >> 52) % 2047 : 1023 - 12 + (s >> 52) % 24;
		uint64_t u = sign << 63 | e << 52 | mant;
		memcpy(&inputs[n_inputs++], &u, sizeof(u));
	}
	for (size_t i = 0; i < n_inputs; i++)
		finputs[i] = (float)inputs[i];
	static const double scales[] = {0x1p30, 0x1p52, 0x1p62};
	for (size_t i = 0; i < n_inputs; i++) {
		iinputs[0][i] = inputs[i];
		fiinputs[0][i] = finputs[i];
		for (size_t k = 1; k < 4; k++) {
			iinputs[k][i] = scales[k - 1] * (0.5 + (double)i / 64) + (double)(i % 4) * 0.375;
			fiinputs[k][i] = (float)iinputs[k][i];
		}
	}
}

int main(int argc, char **argv)
{
	verbose = argc > 1;
	make_inputs();
	hash_state = 0xcbf29ce484222325ULL;
	const struct {
		const char *name;
		d1 fn;
	} d1s[] = {
		{"acos", acos}, {"acosh", acosh}, {"asin", asin}, {"asinh", asinh}, {"atan", atan},
		{"atanh", atanh}, {"cbrt", cbrt}, {"ceil", ceil}, {"cos", cos}, {"cosh", cosh},
		{"erf", erf}, {"erfc", erfc}, {"exp", exp}, {"exp10", exp10}, {"exp2", exp2},
		{"expm1", expm1}, {"floor", floor}, {"j0", j0}, {"j1", j1}, {"lgamma", lgamma},
		{"log", log}, {"log10", log10}, {"log1p", log1p}, {"log2", log2}, {"logb", logb},
		{"nearbyint", nearbyint}, {"rint", rint}, {"round", round}, {"sin", sin},
		{"sinh", sinh}, {"sqrt", sqrt}, {"tan", tan}, {"tanh", tanh}, {"tgamma", tgamma},
		{"trunc", trunc}, {"y0", y0}, {"y1", y1},
	};
	for (size_t i = 0; i < sizeof(d1s) / sizeof(d1s[0]); i++)
		run_d1(d1s[i].name, d1s[i].fn);
	const struct {
		const char *name;
		d2 fn;
	} d2s[] = {
		{"atan2", atan2}, {"copysign", copysign}, {"fdim", fdim}, {"fmax", fmax},
		{"fmin", fmin}, {"fmod", fmod}, {"hypot", hypot}, {"nextafter", nextafter},
		{"pow", pow}, {"remainder", remainder},
	};
	for (size_t i = 0; i < sizeof(d2s) / sizeof(d2s[0]); i++)
		run_d2(d2s[i].name, d2s[i].fn);
	run_bessel("jn", jn);
	run_bessel("yn", yn);
	run_ilogb();
	run_scalbn();
	run_fma();
	run_lrint();
	run_llrint();
	run_lround();
	run_llround();
	const struct {
		const char *name;
		f1 fn;
	} f1s[] = {
		{"acosf", acosf}, {"asinf", asinf}, {"atanf", atanf}, {"cbrtf", cbrtf},
		{"cosf", cosf}, {"coshf", coshf}, {"erff", erff}, {"erfcf", erfcf}, {"expf", expf},
		{"exp2f", exp2f}, {"expm1f", expm1f}, {"j0f", j0f}, {"lgammaf", lgammaf},
		{"logf", logf}, {"log10f", log10f}, {"log1pf", log1pf}, {"log2f", log2f},
		{"sinf", sinf}, {"sinhf", sinhf}, {"sqrtf", sqrtf}, {"tanf", tanf},
		{"tanhf", tanhf}, {"tgammaf", tgammaf}, {"y0f", y0f},
	};
	for (size_t i = 0; i < sizeof(f1s) / sizeof(f1s[0]); i++)
		run_f1(f1s[i].name, f1s[i].fn);
	const struct {
		const char *name;
		f2 fn;
	} f2s[] = {{"atan2f", atan2f}, {"hypotf", hypotf}, {"powf", powf}, {"fmodf", fmodf}};
	for (size_t i = 0; i < sizeof(f2s) / sizeof(f2s[0]); i++)
		run_f2(f2s[i].name, f2s[i].fn);
	run_lrintf();
	run_llrintf();
	run_lroundf();
	run_llroundf();
	return 0;
}
