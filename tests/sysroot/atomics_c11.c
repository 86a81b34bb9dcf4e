// requires: threads
// flags: -pthread
/* atomics_c11: <stdatomic.h> read-modify-write on 1/2/4/8-byte types from several threads,
 * compare-exchange loops, bit operations and an atomic_flag spinlock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define NTHREADS 4
#define ITERS 50000

static _Atomic uint8_t c8;
static _Atomic uint16_t c16;
static _Atomic uint32_t c32;
static _Atomic uint64_t c64;
static _Atomic uint64_t big64;        /* carries into the upper 32 bits */
static _Atomic int32_t cas32;         /* incremented with a compare-exchange loop */
static _Atomic uint64_t cas64;        /* compare-exchange loop touching both 32-bit halves */
static _Atomic uint8_t bits;          /* each thread sets its own bit */
static atomic_flag spin = ATOMIC_FLAG_INIT;
static long guarded;                  /* plain variable protected by spin */

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (int i = 0; i < ITERS; i++) {
		atomic_fetch_add(&c8, 1);
		atomic_fetch_add_explicit(&c16, 1, memory_order_relaxed);
		atomic_fetch_add(&c32, 3);
		atomic_fetch_sub(&c64, 1);
		atomic_fetch_add(&big64, 0x100000001ull);
		int32_t old = atomic_load(&cas32);
		while (!atomic_compare_exchange_weak(&cas32, &old, old + 1))
			;
		uint64_t o64 = atomic_load(&cas64);
		while (!atomic_compare_exchange_strong(&cas64, &o64, o64 + 0x10000000001ull))
			;
		while (atomic_flag_test_and_set_explicit(&spin, memory_order_acquire))
			;
		guarded++;
		atomic_flag_clear_explicit(&spin, memory_order_release);
	}
	atomic_fetch_or(&bits, (uint8_t)(1u << id));
	atomic_fetch_or(&bits, (uint8_t)(0x10u << id));
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	atomic_store(&c64, (uint64_t)NTHREADS * ITERS + 7);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	/* 200000 increments wrap: 200000 % 256 = 64, 200000 % 65536 = 3392 */
	printf("u8  fetch_add: %u\n", (unsigned)atomic_load(&c8));
	printf("u16 fetch_add: %u\n", (unsigned)atomic_load(&c16));
	printf("u32 fetch_add: %u\n", (unsigned)atomic_load(&c32));
	printf("u64 fetch_sub: %llu\n", (unsigned long long)atomic_load(&c64));
	printf("u64 fetch_add: 0x%llx\n", (unsigned long long)atomic_load(&big64));
	printf("i32 cas loop: %d\n", (int)atomic_load(&cas32));
	printf("u64 cas loop: 0x%llx\n", (unsigned long long)atomic_load(&cas64));
	printf("u8  fetch_or: 0x%x\n", (unsigned)atomic_load(&bits));
	printf("flag spinlock: %ld\n", guarded);

	/* single-threaded semantics */
	_Atomic uint16_t v = 5;
	uint16_t expect = 4;
	_Bool ok = atomic_compare_exchange_strong(&v, &expect, 9);
	printf("cas fail: ok=%d expected=%u value=%u\n", ok, (unsigned)expect, (unsigned)atomic_load(&v));
	ok = atomic_compare_exchange_strong(&v, &expect, 9);
	printf("cas success: ok=%d value=%u\n", ok, (unsigned)atomic_load(&v));
	printf("exchange: old=%u", (unsigned)atomic_exchange(&v, 0xbeef));
	printf(" new=0x%x\n", (unsigned)atomic_load(&v));
	_Atomic uint8_t b = 0xf0;
	printf("fetch_and: old=0x%x", (unsigned)atomic_fetch_and(&b, 0x3c));
	printf(" new=0x%x\n", (unsigned)atomic_load(&b));
	printf("fetch_xor: old=0x%x", (unsigned)atomic_fetch_xor(&b, 0xff));
	printf(" new=0x%x\n", (unsigned)atomic_load(&b));
	atomic_flag f = ATOMIC_FLAG_INIT;
	int first = atomic_flag_test_and_set(&f);
	int second = atomic_flag_test_and_set(&f);
	atomic_flag_clear(&f);
	printf("flag: %d %d %d\n", first, second, atomic_flag_test_and_set(&f));
	return 0;
}
