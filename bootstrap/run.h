/* run: child processes (posix_spawn, explicit argv and environment), wait statuses in words,
 * and the GNU make jobserver that shares one job budget between crossroot and every make it
 * starts. All descriptors crossroot opens are CLOEXEC; only the jobserver pipe is inherited. */
#ifndef CROSSROOT_RUN_H
#define CROSSROOT_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

enum run_flags {
	RUN_NO_NETWORK = 1 << 0,    /* run_shell(): a run_sandbox with no_network */
};

/* What a build step may reach and see. Both need namespaces: as root the child unshares them
 * directly; otherwise inside a user namespace where the caller's own uid and gid map to
 * themselves (the child keeps its identity). Where neither is allowed (a container without
 * the capability, user namespaces switched off) a warning says so once per process and steps
 * run with the host's network and file system. */
struct run_sandbox {
	/* a network namespace of its own, with only a loopback interface: nothing outside it (the
	 * host's 127.0.0.1 included) can be reached */
	bool no_network;
	/* NULL-ended directories that the step sees as empty and read-only (a tmpfs over each in a
	 * mount namespace of its own; a directory that does not exist is left alone), and below
	 * them the `show` directories, bound back at their own paths (at most RUN_MAX_SHOW: more
	 * is an error; a show directory that does not exist stays hidden) */
	const char *const *hide, *const *show;
};
#define RUN_MAX_SHOW 64

/* Start `sh -ec command` in `cwd` with exactly `env` in sandbox `sb` (NULL: none); stdin is
 * /dev/null, stdout and stderr go to `out_fd`. The child leads its own process group (so
 * Ctrl-C reaches all of a build, and run_kill_group() stops it). Returns the pid, or -1 after
 * error(). */
pid_t run_step(const char *command, const char *cwd, char *const env[], int out_fd,
               const struct run_sandbox *sb);
/* run_step() with a sandbox of `flags` (run_flags). */
pid_t run_shell(const char *command, const char *cwd, char *const env[], int out_fd,
                unsigned flags);
/* Can children be given network and mount namespaces here? Probed once (a forked child
 * tries); on the first false the warning above is printed. */
bool run_isolation(void);
/* Start argv[0] (searched in PATH) with the environment of crossroot; stdout to out_fd
 * (-1: inherit), stderr to err_fd (-1: inherit). */
pid_t run_argv(char *const argv[], const char *cwd, int out_fd, int err_fd);
/* Fork a child that calls fn(arg) with stdout/stderr on out_fd and exits with what it
 * returned (1 for a negative value, so -1 means failure and 3 can be told apart). Used for in-process work (extraction) that should run beside builds. */
pid_t run_function(int (*fn)(void *), void *arg, int out_fd);
/* Run argv to completion, collecting stdout into `out` (stderr into `err` if not NULL, else
 * inherited). Returns the wait status, or -1 if it could not start. */
int run_capture(char *const argv[], struct buf *out, struct buf *err);
/* Wait for a specific child, retrying on EINTR. Returns the status or -1. */
int run_wait(pid_t pid);
/* "exited with status 2", "killed by signal 9 (Killed)" */
const char *run_describe(int status, char out[96]);
/* Send `sig` to the child's process group. */
void run_kill_group(pid_t pid, int sig);

/* GNU make jobserver (the pipe protocol of make 4.3). `jobs` is the total budget: crossroot
 * itself holds one implicit token, the pipe holds jobs-1. */
struct jobserver {
	int read_fd, write_fd;   /* inherited by children, blocking */
	int poll_fd;             /* crossroot's own non-blocking view of the read end */
	int jobs;
};
int jobserver_init(struct jobserver *js, int jobs);
void jobserver_release(struct jobserver *js);
/* Take one token without blocking: true if one was taken. */
bool jobserver_try_acquire(struct jobserver *js);
void jobserver_return(struct jobserver *js);
/* The MAKEFLAGS value that makes sub-makes join this jobserver. */
char *jobserver_makeflags(const struct jobserver *js);

#endif
