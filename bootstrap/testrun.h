/* testrun: `crossroot test TARGET` builds every program of tests/sysroot/ with the target's
 * wrappers and runs it, comparing its status and output with the test's expectations
 * (NAME.expected). This module decides what runs and judges every result; the runner is a
 * seam: qemu-user, one program at a time beside the builds (or natively, where a test says
 * `native:` and the host's CPU is the target's), or with --system the kernel (guest.h): every
 * program built first, then all of them in one boot, then judged by the same code. On a kernel
 * `not-run:` and `not-run-under:` do not apply (they name what qemu-user cannot host) and
 * nothing runs natively.
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

/* What one `crossroot test` run found, for the support table: per target, which runtime
 * pieces its sysroot holds and each program's result ("ok", "FAIL static: why", "skip: why"). */
struct test_table {
	struct strlist targets;     /* target names, in run order */
	struct strlist programs;    /* program names, sorted, the union over targets */
	struct strlist cells;       /* target, program, cell, ... */
	struct strlist pieces;      /* target, piece list ("headers builtins ..."), ... */
	struct strlist runners;     /* target, what ran its programs ("qemu-user (...)", or the
	                               kernel and qemu-system of --system), ... */
};

struct guest;

struct testrun_options {
	int jobs;                   /* builds (and qemu-user runs) at a time */
	struct guest *system;       /* --system: the prepared guest (guest.h); NULL: qemu-user */
};

/* Runs options->jobs tests at a time (qemu runs one core each). Returns EXIT_OK if every test
 * passed, EXIT_FAILED otherwise (a boot that failed fails the run). Records the results in
 * `table` (may be NULL): a program's cell is "ok", "ok (kernel)" or "ok (run natively)", each
 * failed link and why, or why it was skipped; the target's runner in table->runners. */
int testrun_target(const struct dirs *dirs, const struct target *t,
                   const struct testrun_options *options, struct test_table *table);

/* Print the table (targets by pieces, programs by targets), and write it as Markdown to
 * `markdown` (may be NULL). Returns -1 if the file could not be written. */
int testrun_print_table(const struct test_table *table, const char *markdown);
void testrun_table_release(struct test_table *table);

#endif
