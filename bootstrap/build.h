/* build: carry out a plan. Fetches what the trees to extract need, then runs trees and
 * stages as their dependencies finish, several at once within one job budget (a GNU make
 * jobserver shared with the makes the steps start), publishes each finished stage into the
 * stage cache atomically, and assembles each target's sysroot.
 *
 * Work directory layout (WORK = dirs.work), all scratch except state/:
 *   WORK/src/<source>-<version>-<key12>/   extracted + patched trees, shared by stages
 *   WORK/build/<target>/<stage>/{sysroot,build,dest}/   one stage's private scratch
 *   WORK/logs/<target>/<stage>.log         every command's output, one file per stage
 *   WORK/state/<target>/<stage>.inputs     inputs of the last successful build (for `plan`)
 * Stage cache (dirs.stage_cache): <key>/files/ (installed tree), <key>/manifest, <key>/inputs;
 * <key> appears by one rename when complete, so an interrupted run never leaves a half
 * result that looks finished. */
#ifndef CROSSROOT_BUILD_H
#define CROSSROOT_BUILD_H

#include <stdbool.h>

#include "fetch.h"
#include "plan.h"

struct remote_cache;
struct launcher;

struct build_options {
	struct fetch_options fetch;
	bool verbose;               /* show every step's command */
	bool keep_going;            /* start independent stages after a failure */
	struct remote_cache *remote;    /* pull before building, push after (remote.h); or NULL */
	const struct launcher *launcher;   /* its environment for every step (launcher.h); or NULL */
	bool pull_only;             /* never build: every stage must come from the local or remote
	                               stage cache (a CI job that must not compile) */
	bool allow_network;         /* steps keep the host's network; false (the default): each
	                               step runs in a network namespace of its own (run.h
	                               run_sandbox), so a step that downloads fails */
	const struct strlist *secrets;   /* files steps must read as empty (the remote cache's
	                                    signing key and configuration); or NULL */
};

/* Fetch the sources of every tree the plan still has to extract. Returns an exit code. */
int build_fetch(struct plan *p, const struct build_options *o);
/* Run the plan to the end; returns an exit code (EXIT_OK, EXIT_FAILED, EXIT_FETCH, ...). */
int build_run(struct plan *p, const struct build_options *o);

#endif
