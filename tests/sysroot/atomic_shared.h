/* The 16-byte value both libraries of atomic_shared.c update. */
#include <stdint.h>

struct pair {
	uint64_t lo, hi;
} __attribute__((aligned(16)));

void shared_a_add(struct pair *p, int times);
void shared_b_add(struct pair *p, int times);

/* Adds (lo, hi) to *p `times` times with 16-byte compare-exchange loops. Inline, so each
 * library has its own copy of the code and its own calls into libatomic: the point of the
 * test is two shared objects reaching one variable. */
static inline void pair_add(struct pair *p, int times, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < times; i++) {
		struct pair old, new;
		__atomic_load(p, &old, __ATOMIC_SEQ_CST);
		do {
			new.lo = old.lo + lo;
			new.hi = old.hi + hi;
		} while (!__atomic_compare_exchange(p, &old, &new, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	}
}
