/* run: posix_spawn wrappers, wait statuses and the make jobserver. See run.h. */
#define _GNU_SOURCE
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pid_t spawn(char *const argv[], const char *cwd, char *const env[], int out_fd, int err_fd,
                   bool own_group)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&actions, cwd);
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	if (own_group) {
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&attr, 0);
	}
	posix_spawnattr_setflags(&attr, flags);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv, env ? env : environ);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		error("cannot run '%s':", argv[0]);
		return -1;
	}
	return pid;
}

/* ---- the step sandbox: bubblewrap ---- */

bool run_step_owner(uid_t *uid, gid_t *gid)
{
	bool root = geteuid() == 0;
	*uid = root ? RUN_STEP_UID : geteuid();
	*gid = root ? RUN_STEP_GID : getegid();
	return root;
}

/* bwrap's path: found once in PATH (NULL: not installed). */
static const char *bwrap_path(void)
{
	static char *found;
	static bool looked;
	if (!looked) {
		looked = true;
		const char *path = getenv("PATH");
		char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin");
		for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
		     dir = strtok_r(NULL, ":", &save)) {
			char *candidate = path_join(dir, "bwrap");
			if (access(candidate, X_OK) == 0)
				found = candidate;
			else
				free(candidate);
		}
		free(copy);
	}
	return found;
}

/* The argument vector for bwrap and the descriptors it binds (opened here, CLOEXEC: the child
 * clears the flag on exactly these). */
struct sandbox_args {
	struct strlist argv;
	int fds[RUN_MAX_BINDS];
	const char *dirs[RUN_MAX_BINDS];   /* what each is, for stage_binds() */
	size_t n_fds;
};

static void sandbox_args_release(struct sandbox_args *a)
{
	for (size_t i = 0; i < a->n_fds; i++)
		close(a->fds[i]);
	strlist_release(&a->argv);
}

static void arg2(struct sandbox_args *a, const char *flag, const char *value)
{
	strlist_add(&a->argv, flag);
	strlist_add(&a->argv, value);
}

/* Where a directory bound by descriptor `fd` is staged for bwrap when crossroot runs as root:
 * the step user may not be able to walk to its real path (a work directory in a mode-0700
 * directory), and bwrap resolves --bind-fd to that path, so the root child binds it here in a
 * mount namespace of its own first (stage_binds()). */
#define STAGED_BIND "/tmp/crossroot-bind-%d"

/* --bind / --ro-bind of `dir`, opened here without following a link in its own name (a link
 * there is refused: a step may have left it), by descriptor or staged. */
static int bind_dir(struct sandbox_args *a, bool writable, const char *dir)
{
	if (a->n_fds == RUN_MAX_BINDS) {
		error("a step may see at most %d directories (its stage, source trees, tools); more "
		      "were asked for", RUN_MAX_BINDS);
		return -1;
	}
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		error("cannot give the step '%s':", dir);
		return -1;
	}
	a->dirs[a->n_fds] = dir;
	a->fds[a->n_fds++] = fd;
	uid_t uid;
	gid_t gid;
	char source[64];
	if (run_step_owner(&uid, &gid)) {
		snprintf(source, sizeof(source), STAGED_BIND, fd);
		strlist_add(&a->argv, writable ? "--bind" : "--ro-bind");
	} else {
		snprintf(source, sizeof(source), "%d", fd);
		strlist_add(&a->argv, writable ? "--bind-fd" : "--ro-bind-fd");
	}
	strlist_add(&a->argv, source);
	strlist_add(&a->argv, dir);
	return 0;
}

/* In the root child, before it drops to the step user: a mount namespace of its own with a
 * tmpfs on /tmp holding each bound directory at STAGED_BIND (bwrap gives the step a new /tmp
 * over it). No allocation: this runs between fork and exec. */
static int stage_binds(const struct sandbox_args *a)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	/* a bind mount's source must be of this namespace: opened again here, before /tmp's
	 * tmpfs hides the ones below it */
	int fds[RUN_MAX_BINDS];
	for (size_t i = 0; i < a->n_fds; i++)
		if ((fds[i] = open(a->dirs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return -1;
	if (mount("crossroot-binds", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -1;
	for (size_t i = 0; i < a->n_fds; i++) {
		char from[64], to[64];
		snprintf(from, sizeof(from), "/proc/self/fd/%d", fds[i]);
		snprintf(to, sizeof(to), STAGED_BIND, a->fds[i]);
		if (mkdir(to, 0755) < 0 || mount(from, to, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -1;
		close(fds[i]);
	}
	return 0;
}

static bool is_directory_nofollow(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Can the step user (uid, gid; no other groups: the root child drops them) walk through the
 * directory `st` is of? */
static bool step_can_search(const struct stat *st, bool dropped, const char *path, uid_t uid,
                            gid_t gid)
{
	if (!dropped)
		return access(path, X_OK) == 0;   /* the caller's own identity, groups included */
	if (st->st_uid == uid)
		return st->st_mode & S_IXUSR;
	if (st->st_gid == gid)
		return st->st_mode & S_IXGRP;
	return st->st_mode & S_IXOTH;
}

/* Where to put the tmpfs that hides `dir`: `dir`, or its topmost ancestor the step user cannot
 * walk through. bwrap makes each mount point as the step user, so a hidden work directory
 * under root's mode-0700 home (a checkout in /root) could not be reached to mount on; a tmpfs
 * on the home itself hides no more than the step could read, and the binds below it are made
 * in it. */
static char *hiding_point(const char *dir, bool dropped, uid_t uid, gid_t gid)
{
	char *path = xstrdup(dir);
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		struct stat st;
		bool blocked = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
		               !step_can_search(&st, dropped, path, uid, gid);
		if (blocked)
			return path;
		*slash = '/';
	}
	return path;
}

/* Build bwrap's arguments: the whole file system read-only, new /dev, /proc and /tmp, the
 * hidden directories as read-only tmpfs, then what is bound back over them. */
static int sandbox_args_build(struct sandbox_args *a, const struct run_sandbox *sb, const char *cwd,
                              const char *command)
{
	uid_t uid;
	gid_t gid;
	bool dropped = run_step_owner(&uid, &gid);
	char ids[2][16];
	snprintf(ids[0], sizeof(ids[0]), "%ld", (long)uid);
	snprintf(ids[1], sizeof(ids[1]), "%ld", (long)gid);
	strlist_add(&a->argv, bwrap_path());
	strlist_add(&a->argv, "--unshare-all");   /* user, pid, ipc, uts, cgroup, network */
	strlist_add(&a->argv, "--unshare-user");  /* explicit: --disable-userns needs it */
	if (!sb->no_network)
		strlist_add(&a->argv, "--share-net");
	strlist_add(&a->argv, "--disable-userns");   /* no nested namespace to regain mounts in */
	strlist_add(&a->argv, "--die-with-parent");
	strlist_add(&a->argv, "--new-session");      /* no TIOCSTI into crossroot's terminal */
	if (sb->chroot) {
		/* root of the sandbox's own user namespace, which owns nothing outside it; bwrap
		 * drops every other capability */
		arg2(a, "--uid", "0");
		arg2(a, "--gid", "0");
		arg2(a, "--cap-add", "CAP_SYS_CHROOT");
	} else {
		arg2(a, "--uid", ids[0]);
		arg2(a, "--gid", ids[1]);
	}
	arg2(a, "--hostname", "crossroot");
	strlist_add(&a->argv, "--ro-bind");
	strlist_add(&a->argv, "/");
	strlist_add(&a->argv, "/");
	arg2(a, "--dev", "/dev");
	arg2(a, "--proc", "/proc");
	arg2(a, "--tmpfs", "/tmp");
	arg2(a, "--tmpfs", "/var/tmp");
	struct strlist points = {0}, hidden = {0};
	for (size_t i = 0; sb->hide && sb->hide[i]; i++) {
		const char *dir = sb->hide[i];
		if (strcmp(dir, "/") == 0 || dir[0] != '/' || !is_directory_nofollow(dir))
			continue;   /* nothing there to hide */
		char *point = hiding_point(dir, dropped, uid, gid);
		if (strlist_has(&points, point))
			free(point);
		else
			strlist_take(&points, point);
	}
	/* one tmpfs hides what is below it too (the work directory in a hidden home) */
	for (size_t i = 0; i < points.n; i++) {
		bool inside = false;
		for (size_t k = 0; k < points.n && !inside; k++)
			inside = k != i && path_below(points.v[i], strlen(points.v[i]), points.v[k]);
		if (!inside) {
			arg2(a, "--tmpfs", points.v[i]);
			strlist_add(&hidden, points.v[i]);
		}
	}
	strlist_release(&points);
	for (size_t i = 0; sb->mask && sb->mask[i]; i++) {
		const char *file = sb->mask[i];
		struct stat st;
		if (file[0] != '/' || lstat(file, &st) < 0 || S_ISDIR(st.st_mode))
			continue;
		/* Out of the step's sight already: below a hidden directory, or below one the step
		 * user cannot walk through (where bwrap, as that user, could not reach it to mount
		 * over it either: a key in root's private directory). */
		char *point = hiding_point(file, dropped, uid, gid);
		bool out_of_sight = strcmp(point, file) != 0;
		free(point);
		for (size_t k = 0; k < hidden.n && !out_of_sight; k++)
			out_of_sight = path_below(file, strlen(file), hidden.v[k]);
		if (!out_of_sight) {
			strlist_add(&a->argv, "--ro-bind");
			strlist_add(&a->argv, "/dev/null");
			strlist_add(&a->argv, file);
		}
	}
	int rc = 0;
	for (size_t i = 0; sb->read_only && sb->read_only[i] && rc == 0; i++)
		rc = bind_dir(a, false, sb->read_only[i]);
	for (size_t i = 0; sb->writable && sb->writable[i] && rc == 0; i++)
		rc = bind_dir(a, true, sb->writable[i]);
	for (size_t i = 0; i < hidden.n; i++)   /* after the binds below them */
		arg2(a, "--remount-ro", hidden.v[i]);
	strlist_release(&hidden);
	if (cwd)
		arg2(a, "--chdir", cwd);
	strlist_add(&a->argv, "--");
	strlist_add(&a->argv, "/bin/sh");
	strlist_add(&a->argv, "-ec");
	strlist_add(&a->argv, command);
	strlist_take(&a->argv, NULL);
	return rc;
}

/* The step's watchman: when crossroot dies (even by SIGKILL) or stops the step (a signal to
 * its group), the whole process group dies. bwrap's own --die-with-parent takes effect only
 * once its sandbox is set up: a bwrap killed before that left its child blocked for good
 * (waiting for the user namespace's maps), one leftover process per interrupted step. */
static void kill_group(int sig)
{
	(void)sig;
	kill(0, SIGKILL);
}

/* In the sandboxed child, before exec: drop to the step user (as root), keep the bound
 * descriptors, exec bwrap. No allocation: this runs between fork and exec. */
static void exec_bwrap(const struct sandbox_args *a, char *const env[], bool drop, uid_t uid,
                       gid_t gid)
{
	for (size_t i = 0; i < a->n_fds; i++)
		fcntl(a->fds[i], F_SETFD, 0);
	if (drop && stage_binds(a) < 0) {
		dprintf(2, "crossroot: cannot prepare the step's directories: %s\n", strerror(errno));
		_exit(127);
	}
	if (drop && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)) {
		dprintf(2, "crossroot: cannot become the step user %ld: %s\n", (long)uid,
		        strerror(errno));
		_exit(127);
	}
	execve(a->argv.v[0], a->argv.v, env ? env : environ);
	dprintf(2, "crossroot: cannot run '%s': %s\n", a->argv.v[0], strerror(errno));
	_exit(127);
}

/* fork the watchman (leader of the step's process group), which forks bwrap and passes on
 * how it ended. The same descriptors, signals and process group as spawn(). */
static pid_t spawn_sandboxed(struct sandbox_args *a, char *const env[], int out_fd)
{
	uid_t uid;
	gid_t gid;
	bool drop = run_step_owner(&uid, &gid);
	pid_t crossroot = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		error("cannot fork for a build step:");
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0 && in != 0) {
			dup2(in, 0);
			close(in);
		}
		if (out_fd >= 0) {
			dup2(out_fd, 1);
			dup2(out_fd, 2);
		}
		signal(SIGTERM, kill_group);
		signal(SIGINT, kill_group);
		signal(SIGHUP, kill_group);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != crossroot)   /* crossroot died before the line above */
			kill_group(0);
		pid_t child = fork();
		if (child == 0) {
			for (int sig = 1; sig < NSIG; sig++)
				signal(sig, SIG_DFL);
			sigprocmask(SIG_SETMASK, &none, NULL);
			exec_bwrap(a, env, drop, uid, gid);
		}
		sigprocmask(SIG_SETMASK, &none, NULL);
		int status = 0;
		while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		if (child < 0)
			_exit(127);
		if (WIFSIGNALED(status)) {   /* the same words for crossroot: killed by signal N */
			signal(WTERMSIG(status), SIG_DFL);
			kill(getpid(), WTERMSIG(status));
		}
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
	}
	setpgid(pid, pid);
	return pid;
}

void run_reap_steps(const char *dir)
{
	const char *bwrap = bwrap_path();
	DIR *proc = bwrap ? opendir("/proc") : NULL;
	if (!proc)
		return;
	size_t dir_len = strlen(dir);
	struct dirent *e;
	while ((e = readdir(proc))) {
		long pid = strtol(e->d_name, NULL, 10);
		if (pid <= 0 || pid == getpid())
			continue;
		char path[64], args[8192];
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, args, sizeof(args) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0 || strcmp(args, bwrap) != 0)
			continue;
		args[n] = '\0';
		/* one of its arguments is a directory the step was given below `dir` */
		for (const char *a = args; a < args + n; a += strlen(a) + 1)
			if (strncmp(a, dir, dir_len) == 0 && a[dir_len] == '/') {
				kill((pid_t)pid, SIGKILL);
				break;
			}
	}
	closedir(proc);
}

bool run_isolation(void)
{
	static int works = -1;
	if (works >= 0)
		return works;
	const char *why = NULL;
	char said[256] = "";
	if (!bwrap_path()) {
		why = "bwrap is not installed (Debian's bubblewrap: make deps)";
	} else {
		struct sandbox_args a = {0};
		struct run_sandbox probe = {.no_network = true};
		int pipefd[2];
		if (sandbox_args_build(&a, &probe, "/", "true") < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
			why = "cannot prepare the probe";
		} else {
			pid_t pid = spawn_sandboxed(&a, (char *[]){"PATH=/usr/bin:/bin", NULL}, pipefd[1]);
			close(pipefd[1]);
			ssize_t n = read(pipefd[0], said, sizeof(said) - 1);
			said[n > 0 ? n : 0] = '\0';
			said[strcspn(said, "\n")] = '\0';
			close(pipefd[0]);
			int status = pid < 0 ? -1 : run_wait(pid);
			if (status != 0)
				why = said[0] ? said : "bwrap failed";
		}
		sandbox_args_release(&a);
	}
	works = why == NULL;
	if (!works)
		warn("build steps are not sandboxed: they keep the host's network and see its whole "
		     "file system as crossroot's user (%s); the remote cache's read-write mode is refused",
		     why);
	return works;
}

pid_t run_step(const char *command, const char *cwd, char *const env[], int out_fd,
               const struct run_sandbox *sb)
{
	char *argv[] = {"/bin/sh", "-ec", (char *)command, NULL};
	if (!sb || !run_isolation())
		return spawn(argv, cwd, env, out_fd, out_fd, true);
	struct sandbox_args a = {0};
	pid_t pid = -1;
	if (sandbox_args_build(&a, sb, cwd, command) == 0)
		pid = spawn_sandboxed(&a, env, out_fd);
	sandbox_args_release(&a);
	return pid;
}

pid_t run_argv(char *const argv[], const char *cwd, int out_fd, int err_fd)
{
	return spawn(argv, cwd, NULL, out_fd, err_fd, false);
}

pid_t run_function(int (*fn)(void *), void *arg, int out_fd)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		error("cannot fork:");
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (out_fd >= 0) {
			dup2(out_fd, 1);
			dup2(out_fd, 2);
		}
		int rc = fn(arg);
		fflush(NULL);
		_exit(rc > 0 && rc < 126 ? rc : rc == 0 ? 0 : 1);
	}
	setpgid(pid, pid);
	return pid;
}


int run_capture(char *const argv[], struct buf *out, struct buf *err)
{
	int po[2], pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) < 0 || (err && pipe2(pe, O_CLOEXEC) < 0)) {
		error("cannot create a pipe:");
		return -1;
	}
	pid_t pid = spawn(argv, NULL, NULL, po[1], err ? pe[1] : -1, false);
	close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		if (pe[0] >= 0)
			close(pe[0]);
		return -1;
	}
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = err ? 2 : 1;
	while (open_fds > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[8192];
			ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
			if (n > 0) {
				buf_add(i == 0 ? out : err, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	return run_wait(pid);
}

int run_wait(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			error("cannot wait for process %ld:", (long)pid);
			return -1;
		}
	}
	return status;
}

const char *run_describe(int status, char out[96])
{
	if (WIFEXITED(status))
		snprintf(out, 96, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, 96, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(out, 96, "ended with wait status 0x%x", status);
	return out;
}

void run_kill_group(pid_t pid, int sig)
{
	if (pid > 0)
		kill(-pid, sig);
}

int jobserver_init(struct jobserver *js, int jobs)
{
	int fds[2];
	js->jobs = jobs;
	if (pipe(fds) < 0) {
		error("cannot create the jobserver pipe:");
		return -1;
	}
	js->read_fd = fds[0];
	js->write_fd = fds[1];
	/* A separate open file description, so O_NONBLOCK here does not leak into makes. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", js->read_fd);
	js->poll_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (js->poll_fd < 0) {
		error("cannot open '%s':", path);
		return -1;
	}
	for (int i = 1; i < jobs; i++)
		if (write(js->write_fd, "+", 1) != 1) {
			error("cannot fill the jobserver pipe:");
			return -1;
		}
	return 0;
}

void jobserver_release(struct jobserver *js)
{
	close(js->read_fd);
	close(js->write_fd);
	close(js->poll_fd);
}

bool jobserver_try_acquire(struct jobserver *js)
{
	char c;
	return read(js->poll_fd, &c, 1) == 1;
}

void jobserver_return(struct jobserver *js)
{
	while (write(js->write_fd, "+", 1) < 0 && errno == EINTR)
		;
}

char *jobserver_makeflags(const struct jobserver *js)
{
	return xasprintf("-j%d --jobserver-auth=%d,%d", js->jobs, js->read_fd, js->write_fd);
}
