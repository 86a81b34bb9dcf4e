// flags: -lm
/* compiler-rt builtins must compute, not just link: 64-bit division and modulo (libcalls on
 * 32-bit targets), 128-bit arithmetic (on 64-bit targets), conversions between floating point
 * and 64-bit integers, overflow-checked multiplication. Inputs are volatile so nothing is
 * folded at compile time. */
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t u64a = 0xfedcba9876543210ULL, u64b = 0x123456789ULL;
static volatile int64_t s64a = -0x7edcba9876543210LL, s64b = 0x12345678LL;
static volatile double dbig = 9007199254740993.0, dneg = -1234567890123.75;
static volatile float fbig = 16777216.0f;
static volatile uint64_t ubig = 0xfffffffffffff800ULL;

int main(void)
{
	printf("u64 div %llu mod %llu\n", (unsigned long long)(u64a / u64b),
	       (unsigned long long)(u64a % u64b));
	printf("s64 div %lld mod %lld\n", (long long)(s64a / s64b), (long long)(s64a % s64b));
	printf("double->s64 %lld double->u64 %llu\n", (long long)dneg, (unsigned long long)dbig);
	/* %a: every bit, in a form every C library prints alike (%f of a large value is exact
	 * in musl and glibc, but picolibc prints 17 significant digits and zeros) */
	printf("s64->double %a u64->double %a u64->float %a\n", (double)s64a, (double)ubig,
	       (double)(float)ubig);
	printf("float->u64 %llu\n", (unsigned long long)fbig);
	int64_t product;
	int overflow = __builtin_mul_overflow((int64_t)s64a, (int64_t)s64b, &product);
	printf("mul overflow %d\n", overflow);
	overflow = __builtin_mul_overflow((int64_t)s64b, (int64_t)s64b, &product);
	printf("mul %lld overflow %d\n", (long long)product, overflow);
	printf("clz %d ctz %d popcount %d\n", __builtin_clzll(u64b), __builtin_ctzll(u64a),
	       __builtin_popcountll(u64a));
#ifdef __SIZEOF_INT128__
	unsigned __int128 big = ((unsigned __int128)u64a << 64) | u64b;
	unsigned __int128 q = big / u64b, r = big % (u64b + 7);
	printf("u128 div %016llx%016llx mod %llu\n", (unsigned long long)(q >> 64),
	       (unsigned long long)q, (unsigned long long)r);
	__int128 sbig = -(__int128)big / 3;
	printf("s128 div %016llx%016llx\n", (unsigned long long)((unsigned __int128)sbig >> 64),
	       (unsigned long long)sbig);
#else
	/* the same values, computed without 128-bit types (32-bit targets) */
	puts("u128 div 00000000e0000000842000005deee001 mod 267392489");
	puts("s128 div 00611722833944a555555554f43e32d2");
#endif
	return 0;
}
