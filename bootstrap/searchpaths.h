/* searchpaths: proof that a cross compile and link see nothing of the host. Runs a driver
 * with -v on one program and reads what it says: every include directory and every linker
 * search directory and input file must be inside the sysroot, except clang's own builtin
 * headers (its resource directory: stddef.h, arm_neon.h, the same for every target). A host
 * directory there (/usr/include, /usr/lib/x86_64-linux-gnu, ...) is how a cross build
 * silently compiles against the host's headers or links the host's libraries. */
#ifndef CROSSROOT_SEARCHPATHS_H
#define CROSSROOT_SEARCHPATHS_H

#include <stdbool.h>

#include "util.h"

/* Compiles and links `src` into `exe` with `driver` (-static if asked). Returns 0 when every
 * path is inside `sysroot`; else -1 with the driver's output and each outside path in
 * `report`. */
int searchpaths_check(const char *driver, const char *src, const char *exe, bool is_static,
                      const char *sysroot, struct buf *report);

/* Is `path` (lexically normalised: ".", ".." and repeated slashes) `dir` or under it? */
bool searchpaths_under(const char *path, const char *dir);

#endif
