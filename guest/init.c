/* The guest's /init for `crossroot test --system` and `crossroot run --system`: compiled with
 * the target's own sysroot (static), it runs a list of programs on the booted kernel and
 * reports each one's output and wait status over the console in frames, then powers off.
 *
 * Input, written by crossroot into the initramfs (bootstrap/guest.h documents both formats):
 *   /crossroot/key    the frame key: a line of 32 hex digits, readable by root only; read and
 *                     removed before any program starts
 *   /crossroot/list   the programs, NUL-terminated fields: "crossroot-list 1", then for each
 *                     program: id, timeout seconds, uid, working directory, argc, argv...,
 *                     envc, env...; then "end"
 * Output, on the console, one frame a line (nothing else is written there by init):
 *   @crossroot KEY SEQ KIND ID DATA
 * SEQ counts frames from 0; KIND is boot (ID 0, DATA the kernel's release), out and err
 * (DATA: the bytes in hex), exit (DATA: the wait status in decimal), timeout (DATA: the
 * seconds), error (DATA: why in hex: the program could not be started) and done (ID: how many
 * programs ran). Output past 4 MiB a stream is dropped, and a line at its end says how
 * much. Programs write only into pipes that init reads, run as their own uid and
 * process group with /dev/null as stdin, and never see the key: a program cannot forge a
 * frame or end the list early. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define OUTPUT_LIMIT (4u << 20)   /* bytes kept per program and stream: the console carries about
                                    * 100 KB/s of output under emulation */

static int console = -1;
static char key[64];
static unsigned long seq;

static void put(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(console, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* One frame: the header, then `n` bytes of `data` in hex (or a plain decimal `text`). */
static void frame(const char *kind, long id, const void *data, size_t n, const char *text)
{
	static const char hex[] = "0123456789abcdef";
	char head[160];
	int len = snprintf(head, sizeof(head), "@crossroot %s %lu %s %ld ", key, seq++, kind, id);
	char *line = malloc((size_t)len + 2 * n + (text ? strlen(text) : 0) + 2);
	if (!line)
		return;
	memcpy(line, head, (size_t)len);
	size_t at = (size_t)len;
	const unsigned char *b = data;
	for (size_t i = 0; i < n; i++) {
		line[at++] = hex[b[i] >> 4];
		line[at++] = hex[b[i] & 15];
	}
	if (text) {
		memcpy(line + at, text, strlen(text));
		at += strlen(text);
	}
	if (n == 0 && !text)
		line[at++] = '-';
	line[at++] = '\n';
	put(line, at);
	free(line);
}

static void fail_boot(const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	frame("error", -1, why, strlen(why), NULL);
	sync();
	reboot(RB_POWER_OFF);
	_exit(1);
}

static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *s = malloc(cap);
	for (ssize_t r; s && (r = read(fd, s + n, cap - n)) != 0;) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(s);
			s = NULL;
			break;
		}
		n += (size_t)r;
		if (n == cap)
			s = realloc(s, cap *= 2);
	}
	close(fd);
	*len = n;
	return s;
}

static void setup(void)
{
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	console = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (console < 0)
		_exit(1);   /* nowhere to say it: the host's timeout reports a silent guest */
	struct termios t;
	if (tcgetattr(console, &t) == 0) {
		t.c_oflag &= ~(tcflag_t)OPOST;   /* '\n' stays '\n' */
		tcsetattr(console, TCSANOW, &t);
	}
	mkdir("/proc", 0555);
	mkdir("/sys", 0555);
	mkdir("/tmp", 01777);
	mkdir("/dev/shm", 01777);
	mkdir("/dev/pts", 0755);
	mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620");
	chmod("/tmp", 01777);
	size_t n = 0;
	char *k = read_all("/crossroot/key", &n);
	if (!k || n < 32)
		fail_boot("no frame key in /crossroot/key");
	memcpy(key, k, 32);
	key[32] = '\0';
	free(k);
	unlink("/crossroot/key");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run one program; its frames go out as its output comes. */
static void run_one(long id, long timeout, long uid, const char *cwd, char **argv, char **env)
{
	int out[2], err[2], report[2];
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
		frame("error", id, "pipe failed", 11, NULL);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDWR);
		const char *step = "chdir";
		if (chdir(cwd) == 0 && (step = "set up descriptors", null >= 0) &&
		    dup2(null, 0) == 0 && dup2(out[1], 1) == 1 && dup2(err[1], 2) == 2 &&
		    (step = "setgid", uid == 0 || setgid((gid_t)uid) == 0) &&
		    (step = "setgroups", uid == 0 || setgroups(0, NULL) == 0) &&
		    (step = "setuid", uid == 0 || setuid((uid_t)uid) == 0)) {
			step = "exec";
			signal(SIGPIPE, SIG_DFL);
			execve(argv[0], argv, env);
		}
		char why[512];
		int len = snprintf(why, sizeof(why), "%s %s: %s", step,
		                   strcmp(step, "chdir") == 0 ? cwd : argv[0], strerror(errno));
		write(report[1], why, (size_t)len);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	close(report[1]);
	if (pid < 0) {
		frame("error", id, "fork failed", 11, NULL);
		close(out[0]);
		close(err[0]);
		close(report[0]);
		return;
	}
	struct pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {report[0], POLLIN, 0}};
	static const char *const kinds[] = {"out", "err", "error"};
	size_t kept[3] = {0};
	double deadline = now() + (double)timeout;
	int open_fds = 3, status = 0;
	bool exited = false, timed_out = false;
	char buf[4096];
	while (open_fds > 0 || !exited) {
		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				exited = true;
				/* what it left behind may hold the pipes: its group goes with it */
				kill(-pid, SIGKILL);
			}
		}
		double left = deadline - now();
		if (left <= 0 && !timed_out) {
			timed_out = true;
			kill(-pid, SIGKILL);
			if (!exited) {
				waitpid(pid, &status, 0);
				exited = true;
			}
			break;
		}
		int wait_ms = exited ? 100 : 50;
		int ready = poll(fds, 3, wait_ms);
		if (ready < 0 && errno != EINTR)
			break;
		int drained = 0;
		for (int i = 0; i < 3; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(fds[i].fd, buf, sizeof(buf));
			if (r > 0) {
				if (kept[i] < OUTPUT_LIMIT) {
					size_t room = OUTPUT_LIMIT - kept[i];
					frame(kinds[i], id, buf, (size_t)r < room ? (size_t)r : room, NULL);
				}
				kept[i] += (size_t)r;
				drained++;
			} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (exited && ready == 0 && drained == 0)
			break;   /* exited, and nothing more came: a pipe held by no one we wait for */
	}
	for (int i = 0; i < 3; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	for (int i = 0; i < 2; i++)
		if (kept[i] > OUTPUT_LIMIT) {
			/* said in the stream itself: the verdict shows it, never a silent cut */
			char note[96];
			int n = snprintf(note, sizeof(note), "\n[init: %zu bytes more of this output dropped]\n",
			                 kept[i] - OUTPUT_LIMIT);
			frame(kinds[i], id, note, (size_t)n, NULL);
		}
	char text[32];
	if (timed_out) {
		snprintf(text, sizeof(text), "%ld", timeout);
		frame("timeout", id, NULL, 0, text);
	} else {
		snprintf(text, sizeof(text), "%d", status);
		frame("exit", id, NULL, 0, text);
	}
	/* children it left that did not die with its group (they made their own) are reaped */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* The list's next NUL-terminated field, or NULL at its end. */
static char *field(char **at, char *end)
{
	if (*at >= end)
		return NULL;
	char *f = *at;
	char *nul = memchr(f, '\0', (size_t)(end - f));
	if (!nul)
		return NULL;
	*at = nul + 1;
	return f;
}

int main(void)
{
	setup();
	struct utsname u;
	uname(&u);
	frame("boot", 0, NULL, 0, u.release);
	size_t len = 0;
	char *list = read_all("/crossroot/list", &len);
	char *at = list, *end = list ? list + len : NULL;
	char *magic = list ? field(&at, end) : NULL;
	if (!magic || strcmp(magic, "crossroot-list 1") != 0)
		fail_boot("/crossroot/list is missing or not a crossroot-list 1");
	long count = 0;
	for (char *id; (id = field(&at, end)) && strcmp(id, "end") != 0; count++) {
		char *timeout = field(&at, end), *uid = field(&at, end), *cwd = field(&at, end);
		char *argc = field(&at, end);
		long n = argc ? strtol(argc, NULL, 10) : -1;
		if (!timeout || !uid || !cwd || n < 1 || n > 4096)
			fail_boot("/crossroot/list: program %s is cut short", id);
		char **argv = calloc((size_t)n + 1, sizeof(*argv));
		for (long i = 0; i < n; i++)
			if (!(argv[i] = field(&at, end)))
				fail_boot("/crossroot/list: program %s is cut short", id);
		char *envc = field(&at, end);
		long e = envc ? strtol(envc, NULL, 10) : -1;
		if (e < 0 || e > 4096)
			fail_boot("/crossroot/list: program %s is cut short", id);
		char **env = calloc((size_t)e + 1, sizeof(*env));
		for (long i = 0; i < e; i++)
			if (!(env[i] = field(&at, end)))
				fail_boot("/crossroot/list: program %s is cut short", id);
		run_one(strtol(id, NULL, 10), strtol(timeout, NULL, 10), strtol(uid, NULL, 10), cwd,
		        argv, env);
		free(argv);
		free(env);
	}
	char text[32];
	snprintf(text, sizeof(text), "%ld", count);
	frame("done", count, NULL, 0, text);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
