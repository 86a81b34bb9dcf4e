/* scheduler: run the nodes of a plan as their dependencies finish, several at once within one
 * job budget (a GNU make jobserver shared with the makes the steps start). What a node does
 * is the caller's (build.c); the scheduler only decides when.
 *
 * Order: of the ready nodes, the one with the longest chain of remaining work behind it
 * starts first (critical path first), estimated from how long each stage took last time
 * (`estimate`), so the long chain of one target does not wait behind short stages of others.
 * A node marked exclusive (a build tool that cannot join the jobserver) gets the whole budget:
 * it starts on the next free token and nothing else starts until it ends. */
#ifndef CROSSROOT_SCHEDULER_H
#define CROSSROOT_SCHEDULER_H

#include <stdbool.h>
#include <sys/types.h>

#include "plan.h"
#include "run.h"

enum { SCHED_LATER = 2 };

struct sched_ops {
	void *ctx;
	/* Called when a node's dependencies are all finished, before it takes a job token:
	 * 1 if it needs no work after all (its result turned out to be cached: the scheduler
	 * marks it NODE_CACHED; plan and scheduler are the only writers of a node's state), 0 to
	 * run it (it becomes NODE_RUNNING before start()),
	 * -1 if it failed, SCHED_LATER if it must wait for another node to finish first (it is
	 * asked again after the next node finishes). */
	int (*prepare)(void *ctx, struct node *n);
	/* Start the node: the pid of its first child, or -1 after error(). */
	pid_t (*start)(void *ctx, struct node *n);
	/* A child of the node ended with `status`: the pid of its next child, 0 when the node
	 * is finished, -1 when it failed (after reporting). */
	pid_t (*child_ended)(void *ctx, struct node *n, int status);
	/* Does the node run alone with the whole budget? */
	bool (*exclusive)(void *ctx, const struct node *n);
	/* Expected seconds of work, for the critical-path order. */
	double (*estimate)(void *ctx, const struct node *n);
	/* One line about what a running node is doing (for the terminal status line). */
	void (*describe)(void *ctx, const struct node *n, struct buf *out);
};

/* Run every node in state NODE_WAITING or NODE_PENDING. Returns 0 when all finished, -1 if
 * any failed (with keep_going, independent nodes still ran), EXIT_INTERRUPTED's caller
 * checks `interrupted`. */
int sched_run(struct plan *p, const struct sched_ops *ops, struct jobserver *js, bool keep_going);

#endif
