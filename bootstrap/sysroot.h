/* sysroot: assemble sysroots/<target>/ from the manifests of the target's stage results:
 * the sysroot stages' files at the top (usr/, lib/, ...), the toolchain's tools stages under
 * toolchain/ (a host prefix: no search path of the target's compiler looks there), then the
 * user's overlay (crossroot install), then the files crossfiles.h writes (clang config,
 * wrappers, CMake, Meson, env, pkg-config).
 * Two stages installing the same path with different contents is an error naming both; a
 * result missing from the cache is an error, never a silently smaller sysroot.
 * Assembly happens in a sibling directory renamed into place; a stamp file records which
 * stage outputs it holds, so an up-to-date sysroot is left untouched. A directory at the
 * sysroot's place that crossroot did not make (no stamp) is never replaced. */
#ifndef CROSSROOT_SYSROOT_H
#define CROSSROOT_SYSROOT_H

#include "plan.h"

/* The file in an assembled sysroot that records what it was assembled from (never packaged) */
#define SYSROOT_STAMP ".crossroot-stamp"

/* Where `crossroot install` keeps the target's overlay (see overlay.h): WORK/overlays/TARGET */
char *sysroot_overlay_dir(const struct dirs *d, const char *target);

/* Returns 0, or -1 after error(). */
int sysroot_assemble(const struct plan *p, const struct target *t);

#endif
