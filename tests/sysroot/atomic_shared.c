// requires: threads
// link: dynamic
// flags: -pthread -latomic
// shared: atomic_shared_a_lib.c atomic_shared_b_lib.c
/* Two shared libraries update one 16-byte atomic from several threads each. Where the target
 * has no 16-byte atomic instruction the updates go through libatomic's lock-based helpers:
 * they must be one shared libatomic, or each library would guard the value with its own lock
 * table and updates would be lost. */
#include <pthread.h>
#include <stdio.h>

#include "atomic_shared.h"

enum { THREADS_PER_LIB = 3, TIMES = 20000 };
static struct pair value;

static void *run_a(void *arg) { (void)arg; shared_a_add(&value, TIMES); return NULL; }
static void *run_b(void *arg) { (void)arg; shared_b_add(&value, TIMES); return NULL; }

int main(void)
{
	pthread_t t[2 * THREADS_PER_LIB];
	for (int i = 0; i < THREADS_PER_LIB; i++) {
		pthread_create(&t[2 * i], NULL, run_a, NULL);
		pthread_create(&t[2 * i + 1], NULL, run_b, NULL);
	}
	for (int i = 0; i < 2 * THREADS_PER_LIB; i++)
		pthread_join(t[i], NULL);
	unsigned long long want_lo = (1ULL + 2ULL) * THREADS_PER_LIB * TIMES;
	unsigned long long want_hi = (3ULL + 5ULL) * THREADS_PER_LIB * TIMES;
	printf("lo %llu (expected %llu)\nhi %llu (expected %llu)\n", (unsigned long long)value.lo,
	       want_lo, (unsigned long long)value.hi, want_hi);
	if (value.lo != want_lo || value.hi != want_hi) {
		puts("LOST UPDATES: the two libraries did not share one atomic implementation");
		return 1;
	}
	puts("ok");
	return 0;
}
