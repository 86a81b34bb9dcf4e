/* run: child processes (posix_spawn, explicit argv and environment), wait statuses in words,
 * and the GNU make jobserver that shares one job budget between crossroot and every make it
 * starts. All descriptors crossroot opens are CLOEXEC; only the jobserver pipe is inherited. */
#ifndef CROSSROOT_RUN_H
#define CROSSROOT_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

/* What a build step may reach and see. Steps run in bubblewrap (`bwrap`, the sandbox Flatpak
 * and Chimera's cbuild put around builds): their own user, PID, IPC, UTS, cgroup and (unless
 * allowed) network namespaces, no capabilities, no further user namespaces, their own /proc,
 * /dev and /tmp, the host's file system read-only, and killed when crossroot dies. Run as root,
 * crossroot starts them as RUN_STEP_UID (nobody), so nothing root owns is theirs; the caller
 * gives that user the directories a step writes (run_step_owner()).
 * Directories are opened here (O_NOFOLLOW: a link is refused) and bound by descriptor, so a
 * path the step user cannot walk to still reaches it, and nothing a link says is followed. */
struct run_sandbox {
	/* a network namespace of its own, with only a loopback interface: nothing outside it (the
	 * host's 127.0.0.1 included) can be reached */
	bool no_network;
	/* the step runs as uid 0 of its user namespace with CAP_SYS_CHROOT alone (a stage's
	 * `chroot: true`); otherwise as the step user, with no capability */
	bool chroot;
	/* NULL-ended lists of absolute paths. `hide`: directories seen empty and read-only (a
	 * directory that does not exist is left alone); `read_only` and `writable`: directories
	 * bound at their own paths (over the hidden ones), which must exist; `mask`: files seen
	 * empty (secrets outside the hidden directories; a missing one is left alone) */
	const char *const *hide, *const *read_only, *const *writable, *const *mask;
};
#define RUN_MAX_BINDS 64
#define RUN_STEP_UID 65534   /* nobody/nogroup: who a root crossroot's steps run as */
#define RUN_STEP_GID 65534

/* Start `sh -ec command` in `cwd` with exactly `env` in sandbox `sb` (NULL: none); stdin is
 * /dev/null, stdout and stderr go to `out_fd`. The child leads its own process group (so
 * Ctrl-C reaches all of a build, and run_kill_group() stops it; a step's processes that leave
 * the group die with its PID namespace). Returns the pid, or -1 after error(). */
pid_t run_step(const char *command, const char *cwd, char *const env[], int out_fd,
               const struct run_sandbox *sb);
/* Kill what is left of sandboxed steps of a dead run whose stage directories are below `dir`
 * (work/build): a bwrap killed in the few milliseconds before its sandbox is set up leaves its
 * child waiting forever (its own --die-with-parent is not armed yet), and a kill of a whole
 * session can race with the clone. Only the holder of the work directory's lock calls it. */
void run_reap_steps(const char *dir);
/* Can steps be sandboxed here (bwrap installed, namespaces allowed)? Probed once by running
 * bwrap; on the first false a warning says why, once per process. */
bool run_isolation(void);
/* Who steps run as: RUN_STEP_UID/GID when crossroot runs as root, else crossroot's own ids.
 * Returns true when that differs from crossroot itself (directories must be given to it). */
bool run_step_owner(uid_t *uid, gid_t *gid);
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
