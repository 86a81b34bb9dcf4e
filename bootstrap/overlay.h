/* overlay: the user's own files over a target's sysroot (`crossroot install TARGET DIR`).
 * Libraries built against a sysroot and installed with DESTDIR=DIR are copied into the
 * target's overlay directory (WORK/overlays/TARGET), which every assembly of the sysroot lays
 * over the stages' files: they survive rebuilds and `crossroot clean`, are seen by the
 * compiler, pkg-config, CMake, Meson and the run wrapper like any sysroot file, and never
 * enter the stage cache. What the stages install is never replaced: a path both have is an
 * error naming it. Links in DIR are kept inside the sysroot (absolute ones made relative,
 * ones that climb out refused): nothing resolves to the host's files. */
#ifndef CROSSROOT_OVERLAY_H
#define CROSSROOT_OVERLAY_H

#include "digest.h"
#include "tree.h"

/* Merge the DESTDIR-style tree `from` into `overlay`, all or nothing. `sysroot` is the
 * assembled sysroot (or NULL): a file of its stages cannot be replaced. Returns 0, or -1
 * after error() with the overlay unchanged. */
int overlay_install(const char *overlay, const char *from, const char *sysroot);

/* What the overlay holds (names, kinds, modes, sizes, mtimes, link targets), for the
 * sysroot's stamp: a changed overlay reassembles the sysroot. A missing overlay adds nothing. */
void overlay_digest(struct digest *d, const char *overlay);

/* What the overlay holds, as a manifest (tree.h: tree_scan's lines, every file hashed), into
 * `m` (zeroed by the caller; release it): what a package records of it (package.h). A missing
 * overlay holds nothing. Returns 0, or -1 after error(). */
int overlay_manifest(const char *overlay, struct tree_manifest *m);

/* Lay the overlay over `dest` (a sysroot being assembled): hard links (or copies) of its
 * files. A path `dest` already has, or a directory where `dest` has something else, is an
 * error naming it. Returns 0 or -1 after error(). */
int overlay_apply(const char *overlay, const char *dest);

#endif
