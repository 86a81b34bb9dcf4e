/* run: posix_spawn wrappers, wait statuses and the make jobserver. See run.h. */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
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

/* ---- network namespaces ---- */

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t len = (ssize_t)strlen(text);
	int rc = write(fd, text, (size_t)len) == len ? 0 : -1;
	close(fd);
	return rc;
}

/* In a child, before exec: new namespaces (`what`: CLONE_NEWNET, CLONE_NEWNS or both). As root
 * they are made directly; otherwise inside a user namespace where the caller's uid and gid map
 * to themselves. A new network namespace gets `lo` up, so the step's own loopback servers (some
 * test suites start one) still work. Returns 0, or -1 with errno. */
static int enter_namespaces(int what)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(what) < 0) {
		if (errno != EPERM)
			return -1;
		if (unshare(CLONE_NEWUSER | what) < 0)
			return -1;
		char map[64];
		snprintf(map, sizeof(map), "%ld %ld 1\n", (long)uid, (long)uid);
		if (write_proc("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
			return -1;
		if (write_proc("/proc/self/uid_map", map) < 0)
			return -1;
		snprintf(map, sizeof(map), "%ld %ld 1\n", (long)gid, (long)gid);
		if (write_proc("/proc/self/gid_map", map) < 0)
			return -1;
	}
	if (!(what & CLONE_NEWNET))
		return 0;
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock >= 0) {
		struct ifreq ifr = {0};
		strcpy(ifr.ifr_name, "lo");
		if (ioctl(sock, SIOCGIFFLAGS, &ifr) == 0) {
			ifr.ifr_flags |= IFF_UP;
			ioctl(sock, SIOCSIFFLAGS, &ifr);
		}
		close(sock);
	}
	return 0;
}

/* Is `path` `dir` or below it? */
static bool is_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* mkdir -p without allocating (the child of a fork may not call malloc). */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);
	if (len >= sizeof(buf))
		return errno = ENAMETOOLONG, -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1;; p++)
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -1;
			if (!(*p = c))
				return 0;
		}
}

/* In the child, in its own mount namespace: every existing directory of sb->hide becomes an
 * empty read-only tmpfs, with the sb->show paths below it bound back at their own paths.
 * Returns 0, or -1 with errno. */
static int hide_directories(const struct run_sandbox *sb)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)   /* nothing reaches the host */
		return -1;
	int fds[RUN_MAX_SHOW];
	size_t n_show = 0;
	for (; sb->show && sb->show[n_show] && n_show < RUN_MAX_SHOW; n_show++)   /* before hiding */
		fds[n_show] = open(sb->show[n_show], O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; sb->hide && sb->hide[i]; i++) {
		const char *dir = sb->hide[i];
		struct stat st;
		if (strcmp(dir, "/") == 0 || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;   /* already hidden with its parent, or not made yet */
		const unsigned long locked = MS_NOSUID | MS_NODEV | MS_NOEXEC;
		if (mount("crossroot-hidden", dir, "tmpfs", locked, "mode=0755,size=1m") < 0)
			return -1;
		for (size_t j = 0; j < n_show; j++) {
			if (fds[j] < 0 || !is_below(sb->show[j], dir))
				continue;
			char from[64];
			snprintf(from, sizeof(from), "/proc/self/fd/%d", fds[j]);
			if (make_dirs(sb->show[j]) < 0 || mount(from, sb->show[j], NULL, MS_BIND | MS_REC, NULL) < 0)
				return -1;
		}
		if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | locked, NULL) < 0)
			return -1;
	}
	for (size_t j = 0; j < n_show; j++)
		if (fds[j] >= 0)
			close(fds[j]);
	return 0;
}

bool run_isolation(void)
{
	static int works = -1;
	if (works >= 0)
		return works;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		const char *hide[] = {"/tmp", NULL};   /* a mount of the kind steps get */
		struct run_sandbox probe = {.hide = hide};
		_exit(enter_namespaces(CLONE_NEWNET | CLONE_NEWNS) == 0 && hide_directories(&probe) == 0
		          ? 0 : errno > 0 && errno < 126 ? errno : 125);
	}
	int status = pid < 0 ? -1 : run_wait(pid);
	works = status == 0;
	if (!works)
		warn("build steps keep the host's network and see its whole file system: no network "
		     "or mount namespace can be made here (unshare(CLONE_NEWNET|CLONE_NEWNS) as root, "
		     "or with CLONE_NEWUSER: %s)",
		     pid < 0 ? "cannot fork" : WIFEXITED(status) ? strerror(WEXITSTATUS(status))
		                                                : "the probe was killed");
	return works;
}

/* spawn() for a child in namespaces of its own: fork, unshare, mount, exec (posix_spawn cannot
 * unshare). The same descriptors, signals and process group as spawn(). */
static pid_t spawn_isolated(char *const argv[], const char *cwd, char *const env[], int out_fd,
                            int err_fd, const struct run_sandbox *sb)
{
	bool hides = sb->hide && sb->hide[0];
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		error("cannot fork for '%s':", argv[0]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0 && in != 0) {
			dup2(in, 0);
			close(in);
		}
		if (out_fd >= 0)
			dup2(out_fd, 1);
		if (err_fd >= 0)
			dup2(err_fd, 2);
		if (enter_namespaces((sb->no_network ? CLONE_NEWNET : 0) | (hides ? CLONE_NEWNS : 0)) < 0) {
			dprintf(2, "crossroot: cannot make the step's namespaces: %s\n", strerror(errno));
			_exit(127);
		}
		if (hides && hide_directories(sb) < 0) {
			dprintf(2, "crossroot: cannot hide the work directory from the step: %s\n",
			        strerror(errno));
			_exit(127);
		}
		if (cwd && chdir(cwd) < 0) {   /* after the mounts: the directory shown, not the one below */
			dprintf(2, "crossroot: cannot enter '%s': %s\n", cwd, strerror(errno));
			_exit(127);
		}
		execve(argv[0], argv, env ? env : environ);
		dprintf(2, "crossroot: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

pid_t run_step(const char *command, const char *cwd, char *const env[], int out_fd,
               const struct run_sandbox *sb)
{
	char *argv[] = {"/bin/sh", "-ec", (char *)command, NULL};
	size_t n_show = 0;
	while (sb && sb->show && sb->show[n_show])
		n_show++;
	if (n_show > RUN_MAX_SHOW) {   /* hide_directories() could not bind the rest back */
		error("a step may see at most %d directories of the hidden ones (its stage, source "
		      "trees, HOME, CCACHE_DIR); %zu were asked for", RUN_MAX_SHOW, n_show);
		return -1;
	}
	if (sb && (sb->no_network || (sb->hide && sb->hide[0])) && run_isolation())
		return spawn_isolated(argv, cwd, env, out_fd, out_fd, sb);
	return spawn(argv, cwd, env, out_fd, out_fd, true);
}

pid_t run_shell(const char *command, const char *cwd, char *const env[], int out_fd,
                unsigned flags)
{
	struct run_sandbox sb = {.no_network = flags & RUN_NO_NETWORK};
	return run_step(command, cwd, env, out_fd, &sb);
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
