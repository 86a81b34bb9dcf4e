/* The other of two shared libraries that update the same 16-byte atomic (see atomic_shared.c). */
#include "atomic_shared.h"

void shared_b_add(struct pair *p, int times) { pair_add(p, times, 2, 5); }
