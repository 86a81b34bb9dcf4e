/* crossfiles: the files that make a finished sysroot a ready cross compiler for the host's
 * clang. In the sysroot's bin/: <target>.cfg (clang configuration), the <target>-clang,
 * -clang++, -cc, -c++, -cpp drivers, the binary tools (<target>-ar, -ld, ...), <target>-pkg-config
 * and <target>-run (runs a target program under qemu-user); in share/crossroot/: the CMake
 * toolchain file (every binary tool named), the Meson cross file, env.sh for ./configure
 * projects (the target's tools, and the build machine's compilers as CC_FOR_BUILD and the
 * like), and dejagnu/: a DejaGnu board, boards/<target>.exp, and the site.exp that DEJAGNU
 * names to find it.
 *
 * Staging directories (DESTDIR-style roots holding usr/lib, usr/include) lie over the sysroot:
 * the pkg-config and run wrappers take them from $CROSSROOT_STAGING (colon separated), the
 * user's own PKG_CONFIG_SYSROOT_DIR, or `--staging DIR`; the CMake file passes its
 * CMAKE_FIND_ROOT_PATH entries. pkg-config gives each package the paths of its own tree (a
 * staged package's staging directory, or the sysroot). Nothing from the host is ever looked
 * at. */
#ifndef CROSSROOT_CROSSFILES_H
#define CROSSROOT_CROSSFILES_H

#include "toolchain.h"

/* Write into `root` (a sysroot being assembled; tools stages' files are in root/toolchain)
 * the files above. `out` is where the sysroot will live (the Meson file needs absolute paths;
 * env.sh uses it where the shell cannot say where it was sourced from). Runtimes are chosen
 * from what the sysroot holds (compiler-rt or libgcc, libc++ or libstdc++). `provided` are
 * the tools of the target's toolchain stages (name, path under toolchain/, ...). */
int crossfiles_write(const struct host_llvm *h, const struct target *t,
                     const struct strlist *provided, const char *root, const char *out);

/* What a package (package.h) ships for the generated file `rel` (a path in the sysroot):
 * the files above find the sysroot from where they are, except two that name `out`. env.sh
 * is shipped taking CROSSROOT_SYSROOT from the environment where the shell cannot say where
 * it was sourced from (bash and zsh can; dash cannot, and env.sh then says so); the Meson
 * cross file is left out: bin/<target>-meson-cross prints it for wherever the sysroot is. */
enum crossfiles_package {
	CROSSFILES_AS_IS,           /* ship the sysroot's file */
	CROSSFILES_REPLACE,         /* ship *text instead (malloc'd) */
	CROSSFILES_LEAVE_OUT,       /* not in the package */
};
int crossfiles_package_text(const struct target *t, const char *rel, char **text);

#endif
