/* One of two shared libraries that update the same 16-byte atomic (see atomic_shared.c). */
#include "atomic_shared.h"

void shared_a_add(struct pair *p, int times)
{
	for (int i = 0; i < times; i++) {
		struct pair old, new;
		__atomic_load(p, &old, __ATOMIC_SEQ_CST);
		do {
			new.lo = old.lo + 1;
			new.hi = old.hi + 3;
		} while (!__atomic_compare_exchange(p, &old, &new, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	}
}
