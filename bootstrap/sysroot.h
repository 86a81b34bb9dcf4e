/* sysroot: assemble sysroots/<target>/ from the target's stage results and write what makes
 * the host clang a cross compiler for it:
 *   bin/<target>.cfg                    clang configuration (paths relative to <CFGDIR>)
 *   bin/<target>-clang, -clang++, -cc, -c++, -cpp   driver wrappers using that config
 *   bin/<target>-ar, -ranlib, -nm, -objcopy, -objdump, -strip, -readelf, -ld, -pkg-config
 *   share/crossroot/toolchain.cmake     CMake toolchain file
 *   share/crossroot/meson-cross.ini     Meson cross file
 *   share/crossroot/env.sh              CC, CXX, ... for ./configure style builds
 * The sysroot is relocatable: nothing in it names the directory it was built in.
 * Assembly happens in a sibling directory renamed into place; a stamp file records which
 * stage results it holds, so an up-to-date sysroot is left untouched. */
#ifndef CROSSROOT_SYSROOT_H
#define CROSSROOT_SYSROOT_H

#include "plan.h"

/* Returns 0, or -1 after error() (two stages installing the same file is an error). */
int sysroot_assemble(const struct plan *p, const struct target *t);

#endif
