/* The 16-byte value both libraries of atomic_shared.c update. */
#include <stdint.h>

struct pair {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

void shared_a_add(struct pair *p, int times);
void shared_b_add(struct pair *p, int times);
