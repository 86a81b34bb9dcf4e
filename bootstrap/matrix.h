/* matrix: the targets of a plan as a CI system wants them, one job per target. Each target is
 * printed with an `inputs` digest: the sha256 of the own key inputs (recipes, sources, patches,
 * target, compiler identity; not dependency outputs) of every stage it builds, so it is the same
 * on every machine whatever its caches hold, and changes exactly when something that goes into
 * the target changes (a CI cache key). Stage keys are printed where the plan knows them (a key
 * that depends on a dependency's output is known only once that is cached: null until then).
 *
 * Formats:
 *   json    {"targets": [{"target", "triple", "qemu", "inputs", "stages": [{"stage",
 *           "key" (or null), "state": "cached" | "to build" | "may rebuild"}]}]}
 *   github  one line, {"include": [{"target": ..., "inputs": ...}]}: a strategy.matrix through
 *           fromJSON() (docs/ci/github-workflow.yml)
 *   gitlab  a child pipeline: one job per target extending `.crossroot-target`, which the
 *           parent pipeline's template defines (docs/ci/gitlab-ci.yml); every name and value
 *           is a double-quoted scalar (a target `yes` or `1e3` stays a string), and a target
 *           named as a keyword of .gitlab-ci.yml (include, variables...) is an error */
#ifndef CROSSROOT_MATRIX_H
#define CROSSROOT_MATRIX_H

#include <stdio.h>

#include "plan.h"

/* Print the plan's targets in `format` ("json", "github", "gitlab") to `out`. Returns -1 after
 * error() for an unknown format. */
int matrix_print(const struct plan *p, const char *format, FILE *out);

#endif
