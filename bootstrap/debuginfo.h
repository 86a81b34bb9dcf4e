/* debuginfo: split debug information out of a stage's installed files, as distributions do
 * for their -dbg packages. A shared library or program with DWARF loses it to
 * usr/lib/debug/.build-id/xx/rest.debug (found by gdb through the build ID; where the file
 * has none, usr/lib/debug/<its path>.debug through a .gnu_debuglink); static archives and
 * object files lose theirs, as Debian strips them. Debuggers find it with
 * `set debug-file-directory <sysroot>/usr/lib/debug` (the <target>-gdb wrapper says so). */
#ifndef CROSSROOT_DEBUGINFO_H
#define CROSSROOT_DEBUGINFO_H

/* Split every ELF file below `root` (a stage's DESTDIR) with `objcopy` (llvm-objcopy or
 * GNU objcopy), printing what it does on stdout. Returns 0, or -1 after error(). */
int debuginfo_split(const char *objcopy, const char *root);

#endif
