/* testrun: `crossroot test TARGET` builds every program of tests/sysroot/ with the target's
 * wrappers and runs it under qemu-user, comparing its output with NAME.expected.
 *
 * A test is tests/sysroot/NAME.c or NAME.cpp; comment lines at its top configure it:
 *   // link: static dynamic        links to try (default: both)
 *   // flags: -pthread -lm         extra compiler/linker flags
 *   // requires: c++               skipped unless the sysroot has libc++
 *   // shared: NAME_lib.c          also build libNAME_lib.so from that file and link it
 *   // exit: 3                     expected exit status (default 0)
 * Output: one line per program and link, then "N passed, N failed" (and skipped). */
#ifndef CROSSROOT_TESTRUN_H
#define CROSSROOT_TESTRUN_H

#include "plan.h"

/* Runs `jobs` tests at a time (qemu runs one core each). Returns EXIT_OK if every test
 * passed, EXIT_FAILED otherwise. */
int testrun_target(const struct dirs *dirs, const struct target *t, int jobs);

#endif
