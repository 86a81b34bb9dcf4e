/* prune: bound the caches. Stage results are grouped by the (target, stage) that made them;
 * each group keeps its `keep` most recently used results, and whatever the current recipes of
 * every target need is never removed. Downloads that no source file pins any more go too. */
#ifndef CROSSROOT_PRUNE_H
#define CROSSROOT_PRUNE_H

#include "plan.h"

/* `p` is a plan of all targets (its keys are the ones kept). Returns 0 or -1 after error(). */
int prune_caches(const struct plan *p, const struct recipes *r, int keep);

#endif
