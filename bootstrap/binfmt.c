/* binfmt: the run wrapper registered with binfmt_misc. See binfmt.h. */
#define _GNU_SOURCE
#include "binfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "util.h"

#define BINFMT_DIR "/proc/sys/fs/binfmt_misc"

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

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s'%s:", path, errno == EACCES ? " (binfmt needs root)" : "");
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
	char *name = xasprintf("crossroot-%s", t->name);
	char *status = xasprintf("%s/status", BINFMT_DIR);
	int rc = 0;
	if (!path_exists(status) && mount("binfmt_misc", BINFMT_DIR, "binfmt_misc", 0, NULL) < 0) {
		error("binfmt_misc is not mounted at %s and cannot be%s:", BINFMT_DIR,
		      errno == EPERM ? " (binfmt needs root)" : "");
		rc = -1;
		goto out;
	}
	if (remove) {
		char *path = xasprintf("%s/%s", BINFMT_DIR, name);
		bool had = path_exists(path);
		free(path);
		rc = remove_entry(name);
		if (rc == 0)
			info(had ? "binfmt: removed %s" : "binfmt: %s was not registered", name);
		goto out;
	}
	size_t m = 0;
	while (m < sizeof(machines) / sizeof(machines[0]) &&
	       strcmp(machines[m].cpu_family, t->cpu_family) != 0)
		m++;
	if (m == sizeof(machines) / sizeof(machines[0])) {
		error("binfmt: no ELF machine known for cpu_family '%s' of target '%s'",
		      t->cpu_family, t->name);
		rc = -1;
		goto out;
	}
	if (runs_natively(machines[m].machine)) {
		error("binfmt: this host runs %s programs itself: an entry would catch the host's own "
		      "programs", t->cpu_family);
		rc = -1;
		goto out;
	}
	char *runner = xasprintf("%s/bin/%s-run", sysroot, t->name);
	if (access(runner, X_OK) < 0) {
		error("binfmt: no run wrapper '%s': build the target first", runner);
		free(runner);
		rc = -1;
		goto out;
	}
	/* e_ident: class, byte order, version; OS ABI (byte 7) ignored; e_type EXEC or DYN */
	bool big = strcmp(t->endian, "big") == 0;
	unsigned char magic[20] = {0x7f, 'E', 'L', 'F', machines[m].bits == 64 ? 2 : 1, big ? 2 : 1, 1};
	unsigned char mask[20];
	memset(mask, 0xff, sizeof(mask));
	mask[7] = 0;
	magic[big ? 17 : 16] = 2;
	mask[big ? 17 : 16] = 0xfe;
	unsigned mach = machines[m].machine;
	magic[big ? 18 : 19] = (unsigned char)(mach >> 8);
	magic[big ? 19 : 18] = (unsigned char)(mach & 0xff);
	struct buf line = {0};
	buf_printf(&line, ":%s:M::", name);
	put_bytes(&line, magic, sizeof(magic));
	buf_puts(&line, ":");
	put_bytes(&line, mask, sizeof(mask));
	buf_printf(&line, ":%s:", runner);

	/* one entry per machine: other crossroot targets' for the same magic go */
	char want[64];
	for (size_t i = 0; i < sizeof(magic); i++)
		snprintf(want + 2 * i, 3, "%02x", magic[i]);
	/* Removed entries are kept as registration lines: if the new one is refused, they are
	 * registered again, so a failure leaves what was there. */
	struct strlist names = {0}, removed = {0}, removed_lines = {0};
	list_dir(BINFMT_DIR, &names);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		if (strncmp(names.v[i], "crossroot-", 10) != 0)
			continue;
		char *other = entry_magic(names.v[i]);
		bool same = other && strcmp(other, want) == 0;
		free(other);
		if (same || strcmp(names.v[i], name) == 0) {
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
		rc = write_proc(reg, line.s);
	if (rc == 0) {
		for (size_t i = 0; i < removed.n; i++)
			if (strcmp(removed.v[i], name) != 0)
				info("binfmt: %s replaces %s (same machine)", name, removed.v[i]);
		info("binfmt: %s programs now run through %s (crossroot binfmt --remove %s undoes it)",
		     t->cpu_family, runner, t->name);
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
	buf_release(&line);
	free(runner);
out:
	free(status);
	free(name);
	return rc;
}
