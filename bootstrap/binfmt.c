/* binfmt: the run wrapper registered with binfmt_misc, host-wide (`crossroot binfmt`) or in a
 * session's own user namespace (`crossroot exec`). See binfmt.h. */
#define _GNU_SOURCE
#include "binfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

#define BINFMT_DIR "/proc/sys/fs/binfmt_misc"
#define MAGIC_LEN 20   /* e_ident and e_type, e_machine: what an entry matches */

/* ELF e_machine and class by Meson's cpu_family */
static const struct {
	const char *cpu_family;
	unsigned machine;
	int bits;
} machines[] = {
	{"aarch64", 183, 64}, {"arm", 40, 32},      {"x86", 3, 32},         {"x86_64", 62, 64},
	{"riscv32", 243, 32}, {"riscv64", 243, 64}, {"ppc", 20, 32},        {"ppc64", 21, 64},
	{"mips", 8, 32},      {"mips64", 8, 64},    {"s390x", 22, 64},      {"loongarch64", 258, 64},
	{"sparc64", 43, 64},  {"m68k", 4, 32},      {"sh4", 42, 32},
};

/* Machines a host of the first kind runs natively besides its own (compat modes) */
static const unsigned compat[][2] = {{62, 3}, {183, 40}};

/* One target's entry: what it matches and what runs its programs */
struct entry {
	const struct target *target;
	char *name;                     /* crossroot-TARGET */
	char *runner;                   /* <sysroot>/bin/TARGET-run */
	unsigned char magic[MAGIC_LEN], mask[MAGIC_LEN];
	char magic_hex[2 * MAGIC_LEN + 1];   /* as binfmt_misc shows it */
	char *line;                     /* the registration line */
};

/* The host's own ELF machine, from this program's header */
static unsigned host_machine(void)
{
	unsigned char h[20] = {0};
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, h, sizeof(h)) != (ssize_t)sizeof(h))
			memset(h, 0, sizeof(h));
		close(fd);
	}
	return h[5] == 2 ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
}

static bool runs_natively(unsigned machine)
{
	unsigned host = host_machine();
	if (machine == host)
		return true;
	for (size_t i = 0; i < sizeof(compat) / sizeof(compat[0]); i++)
		if (compat[i][0] == host && compat[i][1] == machine)
			return true;
	return false;
}

/* "\x7fELF..." as binfmt_misc reads it: every byte escaped */
static void put_bytes(struct buf *b, const unsigned char *bytes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "\\x%02x", bytes[i]);
}

static void entry_release(struct entry *e)
{
	free(e->name);
	free(e->runner);
	free(e->line);
	memset(e, 0, sizeof(*e));
}

/* The entry of target `t` whose sysroot is `sysroot`: its machine must be known and foreign
 * to the host, and its run wrapper built. Returns 0, or -1 after error(). */
static int entry_init(struct entry *e, const struct target *t, const char *sysroot)
{
	memset(e, 0, sizeof(*e));
	e->target = t;
	/* a bare-metal program is an ELF file of the same machine as a Linux one: nothing in it
	 * tells the kernel which of the two it is */
	if (t->runner == RUNNER_NONE) {
		error("binfmt: nothing on this machine runs target '%s''s programs (runner: none)",
		      t->name);
		return -1;
	}
	if (t->runner == RUNNER_SEMIHOSTING) {
		error("binfmt: target '%s' is bare metal: its programs run on a board, through "
		      "%s-run, and cannot be told from Linux programs of its machine", t->name, t->name);
		return -1;
	}
	bool wasm = t->runner == RUNNER_WASI;
	/* a Windows program: its DOS header's "MZ" (wine runs 32- and 64-bit ones alike) */
	bool pe = t->runner == RUNNER_WINE;
	bool elf = !wasm && !pe;
	size_t m = 0;
	while (elf && m < sizeof(machines) / sizeof(machines[0]) &&
	       strcmp(machines[m].cpu_family, t->cpu_family) != 0)
		m++;
	if (elf && m == sizeof(machines) / sizeof(machines[0])) {
		error("binfmt: no ELF machine known for cpu_family '%s' of target '%s'",
		      t->cpu_family, t->name);
		return -1;
	}
	if (elf && runs_natively(machines[m].machine)) {
		error("binfmt: this host runs %s programs itself: an entry would catch the host's own "
		      "programs", t->cpu_family);
		return -1;
	}
	e->runner = xasprintf("%s/bin/%s-run", sysroot, t->name);
	if (access(e->runner, X_OK) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			error("binfmt: no run wrapper '%s': build the target first", e->runner);
		else
			error("binfmt: cannot run the run wrapper '%s':", e->runner);
		entry_release(e);
		return -1;
	}
	e->name = xasprintf("crossroot-%s", t->name);
	if (pe) {
		memcpy(e->magic, "MZ", 2);
		memset(e->mask, 0xff, 2);
	} else if (wasm) {
		/* a WebAssembly module: "\0asm" and binary format version 1 */
		const unsigned char module[] = {0, 'a', 's', 'm', 1, 0, 0, 0};
		memcpy(e->magic, module, sizeof(module));
		memset(e->mask, 0xff, sizeof(module));
	} else {
		/* e_ident: class, byte order, version; OS ABI (byte 7) ignored; e_type EXEC or DYN */
		bool big = strcmp(t->endian, "big") == 0;
		const unsigned char ident[] = {0x7f, 'E', 'L', 'F', machines[m].bits == 64 ? 2 : 1,
		                               big ? 2 : 1, 1};
		memcpy(e->magic, ident, sizeof(ident));
		memset(e->mask, 0xff, sizeof(e->mask));
		e->mask[7] = 0;
		e->magic[big ? 17 : 16] = 2;
		e->mask[big ? 17 : 16] = 0xfe;
		unsigned mach = machines[m].machine;
		e->magic[big ? 18 : 19] = (unsigned char)(mach >> 8);
		e->magic[big ? 19 : 18] = (unsigned char)(mach & 0xff);
	}
	for (size_t i = 0; i < MAGIC_LEN; i++)
		snprintf(e->magic_hex + 2 * i, 3, "%02x", e->magic[i]);
	struct buf line = {0};
	buf_printf(&line, ":%s:M::", e->name);
	put_bytes(&line, e->magic, sizeof(e->magic));
	buf_puts(&line, ":");
	put_bytes(&line, e->mask, sizeof(e->mask));
	buf_printf(&line, ":%s:", e->runner);
	e->line = buf_detach(&line);
	return 0;
}

/* Does a file starting with `header` (`n` bytes) match the entry, as the kernel compares? */
static bool entry_matches(const struct entry *e, const unsigned char *header, size_t n)
{
	if (n < MAGIC_LEN)
		return false;
	for (size_t i = 0; i < MAGIC_LEN; i++)
		if ((header[i] ^ e->magic[i]) & e->mask[i])
			return false;
	return true;
}

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s'%s:", path,
		      errno == EACCES && geteuid() != 0 && strncmp(path, BINFMT_DIR, strlen(BINFMT_DIR)) == 0
		          ? " (binfmt needs root)" : "");
		return -1;
	}
	ssize_t n = write(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	if (n != (ssize_t)strlen(text)) {
		errno = saved;
		error("cannot write '%s':", path);
		return -1;
	}
	return 0;
}

/* The entry a name has now: its magic line (NULL if there is none) */
static char *entry_magic(const char *name)
{
	char *path = xasprintf("%s/%s", BINFMT_DIR, name);
	char *text = path_exists(path) ? read_file(path, NULL) : NULL;
	free(path);
	char *magic = NULL;
	for (char *line = text; line && *line && !magic;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, "magic ", 6) == 0)
			magic = xstrdup(line + 6);
		line = end ? end + 1 : NULL;
	}
	free(text);
	return magic;
}

/* The registration line that makes entry `name` again (an 'M' entry, as crossroot writes
 * them), from what binfmt_misc shows of it; NULL if there is none or it is not one. */
static char *entry_line(const char *name)
{
	char *path = xasprintf("%s/%s", BINFMT_DIR, name);
	char *text = path_exists(path) ? read_file(path, NULL) : NULL;
	free(path);
	const char *interpreter = NULL, *flags = "", *offset = "0", *magic = NULL, *mask = NULL;
	for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
		if ((end = strchr(line, '\n')))
			*end = '\0';
		if (strncmp(line, "interpreter ", 12) == 0)
			interpreter = line + 12;
		else if (strncmp(line, "flags: ", 7) == 0)
			flags = line + 7;
		else if (strncmp(line, "offset ", 7) == 0)
			offset = line + 7;
		else if (strncmp(line, "magic ", 6) == 0)
			magic = line + 6;
		else if (strncmp(line, "mask ", 5) == 0)
			mask = line + 5;
	}
	char *out = NULL;
	if (interpreter && magic) {
		struct buf b = {0};
		buf_printf(&b, ":%s:M:%s:", name, offset);
		for (const char *h = magic; h[0] && h[1]; h += 2)
			buf_printf(&b, "\\x%.2s", h);
		buf_puts(&b, ":");
		for (const char *h = mask ? mask : ""; h[0] && h[1]; h += 2)
			buf_printf(&b, "\\x%.2s", h);
		buf_printf(&b, ":%s:%s", interpreter, flags);
		out = buf_detach(&b);
	}
	free(text);
	return out;
}

static int remove_entry(const char *name)
{
	char *path = xasprintf("%s/%s", BINFMT_DIR, name);
	int rc = path_exists(path) ? write_proc(path, "-1") : 0;
	free(path);
	return rc;
}

int binfmt_register(const struct target *t, const char *sysroot, bool remove)
{
	char *status = xasprintf("%s/status", BINFMT_DIR);
	int rc = 0;
	if (!path_exists(status) && mount("binfmt_misc", BINFMT_DIR, "binfmt_misc", 0, NULL) < 0) {
		error("binfmt_misc is not mounted at %s and cannot be%s:", BINFMT_DIR,
		      errno == EPERM ? " (binfmt needs root)" : "");
		free(status);
		return -1;
	}
	free(status);
	if (remove) {
		char *name = xasprintf("crossroot-%s", t->name);
		char *path = xasprintf("%s/%s", BINFMT_DIR, name);
		bool had = path_exists(path);
		free(path);
		rc = remove_entry(name);
		if (rc == 0)
			info(had ? "binfmt: removed %s" : "binfmt: %s was not registered", name);
		free(name);
		return rc;
	}
	struct entry e;
	if (entry_init(&e, t, sysroot) < 0)
		return -1;
	/* one entry per machine: other crossroot targets' for the same magic go. Removed entries
	 * are kept as registration lines: if the new one is refused, they are registered again,
	 * so a failure leaves what was there. */
	struct strlist names = {0}, removed = {0}, removed_lines = {0};
	list_dir(BINFMT_DIR, &names);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		if (strncmp(names.v[i], "crossroot-", 10) != 0)
			continue;
		char *other = entry_magic(names.v[i]);
		bool same = other && strcmp(other, e.magic_hex) == 0;
		free(other);
		if (same || strcmp(names.v[i], e.name) == 0) {
			char *again = entry_line(names.v[i]);
			rc = remove_entry(names.v[i]);
			if (rc == 0 && again) {
				strlist_add(&removed, names.v[i]);
				strlist_add(&removed_lines, again);
			}
			free(again);
		}
	}
	strlist_release(&names);
	char *reg = xasprintf("%s/register", BINFMT_DIR);
	if (rc == 0)
		rc = write_proc(reg, e.line);
	if (rc == 0) {
		for (size_t i = 0; i < removed.n; i++)
			if (strcmp(removed.v[i], e.name) != 0)
				info("binfmt: %s replaces %s (same machine)", e.name, removed.v[i]);
		info("binfmt: %s programs now run through %s (crossroot binfmt --remove %s undoes it)",
		     t->cpu_family, e.runner, t->name);
	}
	for (size_t i = 0; rc < 0 && i < removed.n; i++) {
		if (write_proc(reg, removed_lines.v[i]) == 0)
			warn("binfmt: %s was registered again as it was", removed.v[i]);
		else
			warn("binfmt: %s could not be registered again (its line: %s)", removed.v[i],
			     removed_lines.v[i]);
	}
	strlist_release(&removed);
	strlist_release(&removed_lines);
	free(reg);
	entry_release(&e);
	return rc;
}

/* ---- sessions: crossroot exec ---- */

/* Why a user namespace could not be made: it is switched off or its limit is reached */
static void namespace_error(int err)
{
	error("cannot make the user namespace a session needs: %s (user namespaces are off or used "
	      "up here: sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, "
	      "kernel.apparmor_restrict_unprivileged_userns, or a container's seccomp policy); as "
	      "root, 'crossroot binfmt TARGET' registers a target host-wide instead", strerror(err));
}

/* Map, in the user namespace of process `pid`, every id the caller's namespace has to itself
 * ("0 0 4294967295" from the initial namespace): root stays root and every file keeps its
 * owner. Only a process left outside the new namespace may write a mapping wider than its
 * own id. Returns 0, or -1 after error(). */
static int map_every_id(pid_t pid)
{
	const char *maps[] = {"uid_map", "gid_map"};
	for (size_t i = 0; i < 2; i++) {
		char *own = xasprintf("/proc/self/%s", maps[i]);
		char *text = read_file(own, NULL);
		free(own);
		if (!text)
			return -1;
		struct buf mirror = {0};
		for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned long inside, outside, count;
			if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3)
				buf_printf(&mirror, "%lu %lu %lu\n", inside, inside, count);
		}
		free(text);
		char *path = xasprintf("/proc/%ld/%s", (long)pid, maps[i]);
		int rc = mirror.s ? write_proc(path, mirror.s) : -1;
		if (!mirror.s)
			error("no ids to map in '/proc/self/%s'", maps[i]);
		free(path);
		buf_release(&mirror);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* As root: a new user and mount namespace with every id mapped to itself, by a helper left
 * outside it. Returns 0, or -1 after error(). */
static int unshare_as_root(void)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		error("cannot make a pipe:");
		return -1;
	}
	pid_t self = getpid();
	pid_t helper = fork();
	if (helper < 0) {
		error("cannot fork:");
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (helper == 0) {
		close(go[1]);
		char c;
		ssize_t got;
		while ((got = read(go[0], &c, 1)) < 0 && errno == EINTR)
			;
		_exit(got != 1 ? 2 : map_every_id(self) < 0 ? 1 : 0);
	}
	close(go[0]);
	int rc = unshare(CLONE_NEWUSER | CLONE_NEWNS);
	int saved = errno;
	if (rc == 0 && write(go[1], "x", 1) != 1)
		rc = -1;
	close(go[1]);   /* without the byte, the helper ends without writing */
	int status = run_wait(helper);
	if (rc < 0) {
		namespace_error(saved);
		return -1;
	}
	if (status != 0) {
		char how[96];
		error("the session's ids could not be mapped (the helper %s)", run_describe(status, how));
		return -1;
	}
	return 0;
}

/* In a user namespace just made: the caller's ids as `uid` and `gid` of it ("inside outside
 * 1": the one mapping a process may write for itself). setgroups is denied first, as the
 * kernel asks before an unprivileged gid_map. Returns 0, or -1 after error(). */
static int map_self(unsigned long uid, unsigned long outside_uid, unsigned long gid,
                    unsigned long outside_gid)
{
	char *uid_line = xasprintf("%lu %lu 1\n", uid, outside_uid);
	char *gid_line = xasprintf("%lu %lu 1\n", gid, outside_gid);
	int rc = write_proc("/proc/self/uid_map", uid_line) < 0 ||
	         write_proc("/proc/self/setgroups", "deny") < 0 ||
	         write_proc("/proc/self/gid_map", gid_line) < 0 ? -1 : 0;
	free(uid_line);
	free(gid_line);
	return rc;
}

/* The session's binfmt_misc, mounted in its mount namespace: a user namespace's own instance
 * (Linux 6.7 and later), which lives as long as the mount. */
static int mount_own_binfmt_misc(void)
{
	if (mount("binfmt_misc", BINFMT_DIR, "binfmt_misc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          NULL) == 0)
		return 0;
	int saved = errno;
	struct utsname u;
	if (uname(&u) < 0)
		snprintf(u.release, sizeof(u.release), "?");
	if (saved == ENODEV || saved == ENOENT)
		error("this kernel (Linux %s) has no binfmt_misc to mount at '%s': %s; as root, "
		      "'modprobe binfmt_misc' loads it", u.release, BINFMT_DIR, strerror(saved));
	else
		error("this kernel (Linux %s) gives a user namespace no binfmt_misc of its own (Linux "
		      "6.7 and later do): mounting one at '%s' failed: %s; as root, 'crossroot binfmt "
		      "TARGET' registers a target host-wide instead", u.release, BINFMT_DIR,
		      strerror(saved));
	return -1;
}

/* What would make a session fail or loop: two targets of one machine, or an emulator that is
 * itself a program an entry matches (run through the entry, the wrapper would start the
 * emulator through itself forever). */
static int check_entries(const struct entry *entries, size_t n, const char *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct target *t = entries[i].target;
		for (size_t j = 0; j < i; j++)
			if (strcmp(entries[j].magic_hex, entries[i].magic_hex) == 0) {
				error("targets '%s' and '%s' are both %s programs: a session runs one target "
				      "of each machine", entries[j].target->name, t->name, t->cpu_family);
				return -1;
			}
		const char *program = t->runner == RUNNER_WASI ? "node" :
		                      t->runner == RUNNER_WINE ? "wine" : t->qemu;
		/* an emulator stage's qemu is the sysroot's own (toolchain/), as its wrapper runs it */
		char *emulator = !t->emulator ? path_search(program) :
			xasprintf("%s/%s/toolchain/%s/%s", out, t->name, t->emulator_user_dir, t->qemu);
		if (t->emulator && access(emulator, X_OK) != 0) {
			error("cannot run the emulator '%s' of target '%s':", emulator, t->name);
			free(emulator);
			return -1;
		}
		if (!emulator) {
			error("the emulator '%s' of target '%s' is not in PATH", program, t->name);
			return -1;
		}
		unsigned char header[MAGIC_LEN] = {0};
		int fd = open(emulator, O_RDONLY | O_CLOEXEC);
		ssize_t got = fd >= 0 ? read(fd, header, sizeof(header)) : -1;
		if (fd >= 0)
			close(fd);
		for (size_t j = 0; j < n && got > 0; j++)
			if (entry_matches(&entries[j], header, (size_t)got)) {
				error("the emulator '%s' of target '%s' is itself a program for %s: run "
				      "through its entry, it would start itself forever", emulator, t->name,
				      entries[j].target->cpu_family);
				free(emulator);
				return -1;
			}
		free(emulator);
	}
	return 0;
}

int binfmt_exec(struct target *const *targets, size_t n, const char *out, char *const argv[])
{
	int rc = -1;
	struct entry *entries = xcalloc(n, sizeof(*entries));
	size_t made = 0;
	for (; made < n; made++) {
		char *sysroot = path_join(out, targets[made]->name);
		int ok = entry_init(&entries[made], targets[made], sysroot);
		free(sysroot);
		if (ok < 0)
			goto out;
	}
	if (check_entries(entries, n, out) < 0)
		goto out;
	/* The entries are registered by the namespace's root: binfmt_misc's files belong to it,
	 * and a user mapped to itself could not open them. Another user is root only in an outer
	 * namespace, and runs the command as itself in one inside it, without capabilities. */
	unsigned long uid = geteuid(), gid = getegid();
	if (uid == 0) {
		if (unshare_as_root() < 0)
			goto out;
	} else if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		namespace_error(errno);
		goto out;
	} else if (map_self(0, uid, 0, gid) < 0)
		goto out;
	if (mount_own_binfmt_misc() < 0)
		goto out;
	char *reg = xasprintf("%s/register", BINFMT_DIR);
	for (size_t i = 0; i < n; i++)
		if (write_proc(reg, entries[i].line) < 0) {
			free(reg);
			goto out;
		}
	free(reg);
	if (uid != 0) {
		if (unshare(CLONE_NEWUSER) < 0) {
			namespace_error(errno);
			goto out;
		}
		if (map_self(uid, 0, gid, 0) < 0)
			goto out;
	}
	execvp(argv[0], argv);
	int saved = errno;
	error("cannot run '%s':", argv[0]);
	rc = saved == ENOENT ? 127 : 126;
out:
	for (size_t i = 0; i < made; i++)
		entry_release(&entries[i]);
	free(entries);
	return rc;
}
