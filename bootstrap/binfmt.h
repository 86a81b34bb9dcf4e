/* binfmt: `crossroot binfmt TARGET` registers the target's run wrapper with the kernel's
 * binfmt_misc, so target programs run when executed directly (`make check` of an autotools
 * project, test runners that exec binaries themselves). The entry, crossroot-TARGET, matches
 * the ELF header of the target's machine, class and byte order (from its cpu_family and
 * endian) and runs <sysroot>/bin/TARGET-run PROGRAM ARGS. Registering replaces other
 * crossroot entries for the same machine; a target the host runs natively is refused (its
 * entry would catch every host program). binfmt_misc cannot replace an entry in one step: the
 * entries replaced are read back first, and if the kernel refuses the new one they are
 * registered again as they were, so a failed registration leaves the previous one in place.
 * `--remove` unregisters. Root only. */
#ifndef CROSSROOT_BINFMT_H
#define CROSSROOT_BINFMT_H

#include <stdbool.h>

#include "recipes.h"

/* Register (or, with `remove`, unregister) the target's entry; `sysroot` is its assembled
 * sysroot. Returns 0, or -1 after error(). */
int binfmt_register(const struct target *t, const char *sysroot, bool remove);

#endif
