/* binfmt: target programs that run when executed directly (`make check` of an autotools
 * project, test runners that exec binaries themselves), through the kernel's binfmt_misc. One
 * entry per target, crossroot-TARGET, matches the ELF header of the target's machine, class and
 * byte order (from its cpu_family and endian; the OS ABI byte is ignored, e_type is EXEC or
 * DYN) and runs <sysroot>/bin/TARGET-run PROGRAM ARGS. A target the host runs natively is
 * refused (its entry would catch every host program), and so is one whose run wrapper is not
 * built. This module alone writes binfmt_misc entries, in two places:
 *
 * - host-wide (`crossroot binfmt`, root only): the entry replaces other crossroot entries for
 *   the same machine. binfmt_misc cannot replace an entry in one step: the entries replaced
 *   are read back first, and if the kernel refuses the new one they are registered again as
 *   they were, so a failed registration leaves the previous one in place. `--remove`
 *   unregisters.
 *
 * - in a session (`crossroot exec`, any user): a user namespace and a mount namespace of the
 *   command's own, with the binfmt_misc instance Linux 6.7 and later give each user namespace
 *   that mounts one (at /proc/sys/fs/binfmt_misc, as on the host), holding an entry for each of
 *   the session's targets. Executables are looked up from the nearest user namespace that has
 *   an instance, so the host's entries do not apply inside, nothing host-wide changes, and
 *   sessions of different targets run side by side. The instance lives as long as its mount,
 *   which is the session's.
 *
 * The entries have no flags. F (open the interpreter when registering) would pin only the
 * first open of the run wrapper: it is a #! script, which the kernel hands to /bin/sh by its
 * path, and sh opens it again by that path. */
#ifndef CROSSROOT_BINFMT_H
#define CROSSROOT_BINFMT_H

#include <stdbool.h>
#include <stddef.h>

#include "recipes.h"

/* Register (or, with `remove`, unregister) the target's entry host-wide; `sysroot` is its
 * assembled sysroot. Returns 0, or -1 after error(). */
int binfmt_register(const struct target *t, const char *sysroot, bool remove);

/* Become argv (argv[0] searched in PATH) in a session where the programs of `targets` (their
 * sysroots in `out`, one target per machine) run when executed directly.
 *
 * Ids: root stays root, every id of its namespace mapped to itself (a helper process left
 * outside writes the mapping). Another user keeps its uid and gid (other ids show as the
 * overflow id, nobody), and runs the command without capabilities: binfmt_misc's files belong
 * to the root of the namespace that mounts it, so that namespace maps the user to root, the
 * entries are registered there, and the command runs in a second user namespace inside it that
 * maps root back to the user. Environment, working directory, descriptors, signal dispositions
 * and umask pass unchanged.
 *
 * Before anything changes, refuses two targets of one machine and an emulator (the target's
 * qemu in PATH) that an entry would match: the run wrapper would start it through itself.
 * On success it does not return: the command's exit status is the process's. Returns -1 after
 * error() when no session could be made (no user namespace allowed, no binfmt_misc of their
 * own, a target not built or run natively), or 127 or 126 after error() when the command was
 * not found or could not be executed. */
int binfmt_exec(struct target *const *targets, size_t n, const char *out, char *const argv[]);

#endif
