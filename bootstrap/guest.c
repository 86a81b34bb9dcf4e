/* guest: programs on a Linux kernel booted under qemu-system: the machine table, the kernel
 * package, the initramfs, the boot and its frames. See guest.h. */
#define _GNU_SOURCE
#include "guest.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "digest.h"
#include "run.h"
#include "sysroot.h"
#include "tree.h"
#include "util.h"

/* What boots one Linux architecture. A target whose linux_arch is not here, or whose cpu a
 * machine does not list, is not covered. */
struct guest_machine {
	const char *linux_arch;     /* the target's linux_arch */
	const char *cpus;           /* the target `cpu:` values it boots, space separated; NULL: any */
	const char *qemu;           /* the qemu-system binary */
	const char *qemu_package;   /* the Debian package that installs it */
	const char *board;          /* -M */
	const char *default_cpu;    /* -cpu where the target names no qemu_cpu; NULL: the board's */
	const char *console;        /* the kernel's console device on that board */
	const char *kernel_source;  /* sources/<id>.yaml: the kernel's .deb */
	const char *image;          /* the image's path in the package's data */
};

static const struct guest_machine machines[] = {
	{"arm64", NULL, "qemu-system-aarch64", "qemu-system-arm", "virt", NULL, "ttyAMA0",
	 "linux-image-arm64", "boot/vmlinuz-6.1.0-50-arm64"},
	/* Debian's ARMv7 kernel for boards with LPAE; a Raspberry Pi 2 is a Cortex-A7. ARMv6 (the
	 * Pi 1) has no Debian kernel and no board of qemu's virt family */
	{"arm", "armv7", "qemu-system-arm", "qemu-system-arm", "virt", "cortex-a7", "ttyAMA0",
	 "linux-image-armhf", "boot/vmlinuz-6.1.0-50-armmp-lpae"},
	/* the 64-bit kernel runs i686 programs too (IA-32 emulation). Emulated (TCG) as every
	 * machine, not under KVM: the CPU is then the target's model, whatever the host's (and
	 * nested KVM hung here before the kernel's first line). Without the target's qemu_cpu,
	 * "max", qemu-user's default: the board's qemu64 lacks POPCNT, which libFuzzer's
	 * comparison hooks use unconditionally (a SIGSEGV before the first input) */
	{"x86", NULL, "qemu-system-x86_64", "qemu-system-x86", "q35", "max", "ttyS0",
	 "linux-image-amd64", "boot/vmlinuz-6.1.0-50-amd64"},
	/* Debian 13's kernel (Debian 12 has no riscv64 release), started by the OpenSBI firmware
	 * qemu gives the virt board by default; the board's CPU is RV64GC and more.
	 * riscv32 has no board here: the kernel has no 32-bit (COMPAT) user space */
	{"riscv", "riscv64", "qemu-system-riscv64", "qemu-system-misc", "virt", NULL, "ttyS0",
	 "linux-image-riscv64", "boot/vmlinux-6.12.117+deb13-riscv64"},
};

static bool cpu_listed(const char *cpus, const char *cpu)
{
	size_t n = cpu ? strlen(cpu) : 0;
	for (const char *p = cpus; cpu && *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (strcspn(p, " ") == n && strncmp(p, cpu, n) == 0)
			return true;
	return false;
}

static const struct guest_machine *machine_of(const struct target *t)
{
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
		if (t->linux_arch && strcmp(machines[i].linux_arch, t->linux_arch) == 0 &&
		    (!machines[i].cpus || cpu_listed(machines[i].cpus, t->cpu)))
			return &machines[i];
	return NULL;
}

/* The -cpu of a boot: the target's qemu_cpu, else the machine's default for it, else none */
static const char *machine_cpu(const struct guest *g)
{
	return g->target->qemu_cpu ? g->target->qemu_cpu : g->machine->default_cpu;
}

const char *guest_kernel_source(const struct target *t)
{
	const struct guest_machine *m = machine_of(t);
	return m ? m->kernel_source : NULL;
}

static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *found = NULL;
	for (char *dir = strtok(copy, ":"); dir && !found; dir = strtok(NULL, ":")) {
		char *candidate = path_join(*dir ? dir : ".", name);
		if (access(candidate, X_OK) == 0)
			found = candidate;
		else
			free(candidate);
	}
	free(copy);
	return found;
}

/* The member `image` of the data archive inside the .deb at `deb`, written to `to`. */
static la_ssize_t read_outer(struct archive *inner, void *arg, const void **block)
{
	(void)inner;
	static char buffer[65536];
	*block = buffer;
	return archive_read_data((struct archive *)arg, buffer, sizeof(buffer));
}

static int unpack_image(const char *deb, const char *image, const char *to)
{
	struct archive *outer = archive_read_new(), *inner = NULL;
	archive_read_support_format_ar(outer);
	archive_read_support_filter_none(outer);
	int rc = -1, fd = -1;
	bool found_data = false, found_image = false;
	char *tmp = xasprintf("%s.tmp", to);
	if (archive_read_open_filename(outer, deb, 65536) != ARCHIVE_OK) {
		error("cannot read the kernel package '%s': %s", deb, archive_error_string(outer));
		goto out;
	}
	struct archive_entry *e;
	while (!found_data && archive_read_next_header(outer, &e) == ARCHIVE_OK) {
		if (strncmp(archive_entry_pathname(e), "data.tar", 8) != 0)
			continue;
		found_data = true;
		inner = archive_read_new();
		archive_read_support_format_tar(inner);
		archive_read_support_filter_all(inner);
		if (archive_read_open(inner, outer, NULL, read_outer, NULL) != ARCHIVE_OK) {
			error("cannot read '%s' in the kernel package '%s': %s", archive_entry_pathname(e),
			      deb, archive_error_string(inner));
			goto out;
		}
		struct archive_entry *ie;
		while (archive_read_next_header(inner, &ie) == ARCHIVE_OK) {
			const char *name = archive_entry_pathname(ie);
			name += strncmp(name, "./", 2) == 0 ? 2 : 0;
			if (strcmp(name, image) != 0 || archive_entry_filetype(ie) != AE_IFREG)
				continue;
			found_image = true;
			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0) {
				error("cannot write '%s':", tmp);
				goto out;
			}
			char buf[65536];
			la_ssize_t n;
			while ((n = archive_read_data(inner, buf, sizeof(buf))) > 0)
				if (write_all(fd, buf, (size_t)n, tmp) < 0)
					goto out;
			if (n < 0) {
				error("cannot read '%s' from '%s': %s", image, deb, archive_error_string(inner));
				goto out;
			}
			if (close(fd) != 0) {
				fd = -1;
				error("cannot write '%s':", tmp);
				goto out;
			}
			fd = -1;
			if (rename(tmp, to) != 0) {
				error("cannot rename '%s':", tmp);
				goto out;
			}
			rc = 0;
			break;
		}
	}
	if (!found_data)
		error("the kernel package '%s' has no data.tar member: not a Debian package", deb);
	else if (!found_image && rc < 0 && fd < 0)
		error("the kernel package '%s' has no '%s'", deb, image);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	if (inner)
		archive_read_free(inner);
	archive_read_free(outer);
	return rc;
}

/* The kernel: the pinned .deb fetched (or found in the download cache), its image unpacked. */
static int prepare_kernel(struct guest *g, const struct dirs *dirs, struct recipes *r,
                          const struct fetch_options *fo)
{
	const struct guest_machine *m = g->machine;
	struct source *s = recipes_source(r, m->kernel_source, NULL);
	if (!s) {
		error("no kernel for %s: sources/%s.yaml is missing or invalid (above)", m->linux_arch,
		      m->kernel_source);
		return -1;
	}
	char *deb = fetch_cached_path(fo, s);
	if (!deb) {
		info("fetching the kernel for %s: %s %s", g->target->name, s->name, s->version);
		struct source *list[] = {s};
		char *paths[1] = {NULL};
		if (fetch_sources(fo, list, 1, paths) < 0) {
			error("cannot fetch the kernel package %s %s (sources/%s.yaml)", s->name, s->version,
			      m->kernel_source);
			free(paths[0]);
			return -1;
		}
		deb = paths[0];
	}
	const char *slash = strrchr(deb, '/');
	g->kernel_sha256 = xstrdup(slash ? slash + 1 : deb);   /* the cache names it by its hash */
	for (size_t i = 0; i < s->n_origins && !g->kernel_name; i++) {
		const struct origin *o = &s->origins[i];
		const char *base = o->kind == ORIGIN_POOL ? strrchr(o->file, '/') : NULL;
		const char *sep = base ? strchr(base + 1, '_') : NULL;
		if (o->kind == ORIGIN_DEB)
			g->kernel_name = xasprintf("%s %s", o->package, o->version);
		else if (sep && strchr(sep + 1, '_'))   /* pool/.../PACKAGE_VERSION_ARCH.deb */
			g->kernel_name = xasprintf("%.*s %.*s", (int)(sep - base - 1), base + 1,
			                           (int)(strchr(sep + 1, '_') - sep - 1), sep + 1);
	}
	if (!g->kernel_name)
		g->kernel_name = xasprintf("%s %s", s->name, s->version);
	char *dir = xasprintf("%s/guest/kernel-%s", dirs->work, g->kernel_sha256);
	const char *base = strrchr(m->image, '/');
	g->kernel = path_join(dir, base ? base + 1 : m->image);
	int rc = 0;
	if (!path_exists(g->kernel))
		rc = mkdir_p(dir, 0755) < 0 ? -1 : unpack_image(deb, m->image, g->kernel);
	free(dir);
	free(deb);
	return rc;
}

/* /init: guest/init.c built static by the target's own compiler. */
static int build_init(struct guest *g, const struct dirs *dirs)
{
	char *source = path_join(dirs->root, "guest/init.c");
	char *driver = xasprintf("%s/bin/%s-clang", g->sysroot, g->target->name);
	g->init = path_join(g->dir, "init");
	char *argv[] = {driver, "-static", "-O2", "-Wall", "-o", g->init, source, NULL};
	struct buf out = {0}, err = {0};
	int status = run_capture(argv, &out, &err);
	int rc = 0;
	if (status != 0) {
		char how[96];
		error("the guest's init '%s' does not build with '%s' (%s):\n%s%s", source, driver,
		      status < 0 ? "could not start" : run_describe(status, how), out.s ? out.s : "",
		      err.s ? err.s : "");
		rc = -1;
	}
	buf_release(&out);
	buf_release(&err);
	free(driver);
	free(source);
	return rc;
}

int guest_prepare(struct guest *g, const struct dirs *dirs, struct recipes *r,
                  const struct target *t, const struct fetch_options *fo)
{
	memset(g, 0, sizeof(*g));
	g->target = t;
	g->memory_mb = 2048;
	g->cpus = 2;
	g->boot_seconds = 180;
	g->machine = machine_of(t);
	if (!g->machine) {
		struct buf known = {0};
		for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
			buf_printf(&known, "%s%s%s%s%s", i ? ", " : "", machines[i].linux_arch,
			           machines[i].cpus ? " (cpu " : "", machines[i].cpus ? machines[i].cpus : "",
			           machines[i].cpus ? ")" : "");
		error("'%s' has no kernel to boot: --system covers the Linux architectures %s, not "
		      "'%s' (cpu %s)", t->name, known.s, t->linux_arch ? t->linux_arch : "(none)",
		      t->cpu ? t->cpu : "(none)");
		buf_release(&known);
		return -1;
	}
	if (t->emulator && !t->emulator_system_dir) {
		error("'%s' runs its programs under the emulator stage '%s', which provides no "
		      "qemu_system_dir: --system needs its %s", t->name, t->emulator, g->machine->qemu);
		return -1;
	}
	if (t->emulator) {   /* the stage's, shipped in the sysroot: never the host's */
		g->qemu = xasprintf("%s/%s/toolchain/%s/%s", dirs->out, t->name,
		                    t->emulator_system_dir, g->machine->qemu);
		char *stamp = xasprintf("%s/%s/%s", dirs->out, t->name, SYSROOT_STAMP);
		bool built = path_exists(stamp);   /* else "no sysroot", below, says what to do */
		free(stamp);
		if (built && access(g->qemu, X_OK) != 0) {
			error("cannot run '%s' (the emulator stage '%s' of '%s'):", g->qemu, t->emulator,
			      t->name);
			return -1;
		}
	} else {
		g->qemu = find_in_path(g->machine->qemu);
	}
	if (!g->qemu) {
		error("'%s' is not installed (in PATH): install Debian's package %s "
		      "(apt-get install %s, or tools/install-deps)", g->machine->qemu,
		      g->machine->qemu_package, g->machine->qemu_package);
		return -1;
	}
	g->qemu_version = guest_qemu_version(g->qemu);
	g->sysroot = path_join(dirs->out, t->name);
	g->dir = xasprintf("%s/guest/%s", dirs->work, t->name);
	char *stamp = path_join(g->sysroot, SYSROOT_STAMP);
	bool built = path_exists(stamp);
	free(stamp);
	if (!built) {
		error("no sysroot for '%s' at '%s': run 'crossroot build %s' first", t->name, g->sysroot,
		      t->name);
		return -1;
	}
	if (mkdir_p(g->dir, 0755) < 0 || prepare_kernel(g, dirs, r, fo) < 0 || build_init(g, dirs) < 0)
		return -1;
	return 0;
}

void guest_release(struct guest *g)
{
	free(g->sysroot);
	free(g->dir);
	free(g->qemu);
	free(g->qemu_version);
	free(g->kernel);
	free(g->kernel_name);
	free(g->kernel_sha256);
	free(g->init);
}

const char *guest_describe(const struct guest *g)
{
	static char text[512];
	const char *base = strrchr(g->kernel, '/');
	base = base ? base + 1 : g->kernel;
	if (strncmp(base, "vmlinuz-", 8) == 0 || strncmp(base, "vmlinux-", 8) == 0)
		base += 8;   /* the release, as uname says it */
	const char *cpu = machine_cpu(g);
	snprintf(text, sizeof(text), "Linux %s (%s) under %s %s%s%s -M %s%s%s", base,
	         g->kernel_name, g->machine->qemu, g->qemu_version,
	         g->target->emulator ? " of the stage " : "",
	         g->target->emulator ? g->target->emulator : "", g->machine->board,
	         cpu ? " -cpu " : "", cpu ? cpu : "");
	return text;
}

char *guest_qemu_version(const char *qemu)
{
	char *argv[] = {(char *)qemu, "--version", NULL};
	struct buf out = {0}, err = {0};
	int status = run_capture(argv, &out, &err);
	char *version = NULL;
	const char *at = status == 0 && out.s ? strstr(out.s, " version ") : NULL;
	if (at && (!strchr(out.s, '\n') || at < strchr(out.s, '\n'))) {
		at += strlen(" version ");
		size_t len = strcspn(at, " \n");
		if (len)
			version = xasprintf("%.*s", (int)len, at);
	}
	buf_release(&out);
	buf_release(&err);
	return version ? version : xstrdup("(version unknown)");
}

void guest_program_release(struct guest_program *p)
{
	strlist_release(&p->argv);
	strlist_release(&p->env);
	free(p->cwd);
}

void guest_result_release(struct guest_result *r)
{
	free(r->error);
	buf_release(&r->out);
	buf_release(&r->err);
}

/* ---- the initramfs ---- */

struct cpio {
	struct archive *a;
	const char *path;
	struct strlist dirs;        /* directories written so far */
	long ino;
	int rc;
};

static void cpio_entry(struct cpio *c, const char *path, mode_t type, mode_t perm,
                       const char *link, dev_t rdev, const void *data, size_t size)
{
	if (c->rc < 0)
		return;
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, path[0] == '/' ? path + 1 : path);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_nlink(e, type == AE_IFDIR ? 2 : 1);
	archive_entry_set_ino(e, ++c->ino);
	archive_entry_set_mtime(e, 0, 0);
	if (link)
		archive_entry_set_symlink(e, link);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(e, rdev);
	archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)size : 0);
	if (archive_write_header(c->a, e) != ARCHIVE_OK ||
	    (size && archive_write_data(c->a, data, size) != (la_ssize_t)size)) {
		error("cannot write '%s' into '%s': %s", path, c->path, archive_error_string(c->a));
		c->rc = -1;
	}
	archive_entry_free(e);
}

/* Every directory above `path` (absolute), once. */
static void cpio_parents(struct cpio *c, const char *path, mode_t perm)
{
	char *p = xstrdup(path);
	for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (!strlist_has(&c->dirs, p)) {
			strlist_add(&c->dirs, p);
			cpio_entry(c, p, AE_IFDIR, perm, NULL, 0, NULL, 0);
		}
		*slash = '/';
	}
	free(p);
}

static void cpio_dir(struct cpio *c, const char *path, mode_t perm)
{
	cpio_parents(c, path, 0755);
	if (!strlist_has(&c->dirs, path)) {
		strlist_add(&c->dirs, path);
		cpio_entry(c, path, AE_IFDIR, perm, NULL, 0, NULL, 0);
	}
}

static void cpio_file(struct cpio *c, const char *path, const char *from, mode_t perm)
{
	size_t len;
	void *data = map_file(from, &len);
	if (!data) {
		c->rc = -1;
		return;
	}
	cpio_parents(c, path, 0755);
	cpio_entry(c, path, AE_IFREG, perm, NULL, 0, data, len);
	unmap_file(data, len);
}

struct cpio_walk {
	struct cpio *c;
	const char *at;             /* the guest path of the walk's root */
	bool (*wanted)(const char *rel, bool dir);
	mode_t dir_perm;            /* 0: as on the host */
};

static int cpio_visit(const struct tree_item *it, void *arg)
{
	struct cpio_walk *w = arg;
	struct cpio *c = w->c;
	bool dir = S_ISDIR(it->st.st_mode);
	if (w->wanted && !w->wanted(it->path, dir))
		return dir ? TREE_SKIP : TREE_NEXT;
	char *path = xasprintf("%s/%s", w->at, it->path);
	if (dir) {
		cpio_dir(c, path, w->dir_perm ? w->dir_perm : it->st.st_mode & 07777);
	} else if (S_ISLNK(it->st.st_mode)) {
		char target[4096];
		if (tree_read_link(it, target, sizeof(target)) == 0) {
			cpio_parents(c, path, 0755);
			cpio_entry(c, path, AE_IFLNK, 0777, target, 0, NULL, 0);
		} else {
			c->rc = -1;
		}
	} else if (S_ISREG(it->st.st_mode)) {
		int fd = tree_open_file(it);
		char *from = fd < 0 ? NULL : xasprintf("/proc/self/fd/%d", fd);
		if (from)
			cpio_file(c, path, from, it->st.st_mode & 0777);
		else
			c->rc = -1;
		free(from);
		if (fd >= 0)
			close(fd);
	}
	free(path);
	return c->rc < 0 ? -1 : TREE_NEXT;
}

static void cpio_tree(struct cpio *c, const char *from, const char *at,
                      bool (*wanted)(const char *, bool), mode_t dir_perm)
{
	if (c->rc < 0)
		return;
	cpio_dir(c, at, dir_perm ? dir_perm : 0755);
	struct cpio_walk w = {c, at, wanted, dir_perm};
	if (tree_walk(from, NULL, cpio_visit, &w) < 0)
		c->rc = -1;
}

/* Of usr/lib: what runs (shared objects, the loader's and iconv's data), not what links. */
static bool runtime_file(const char *rel, bool dir)
{
	if (strncmp(rel, "gconv", 5) == 0 || strncmp(rel, "locale", 6) == 0)
		return true;
	if (dir)
		return strncmp(rel, "pkgconfig", 9) != 0 && strncmp(rel, "cmake", 5) != 0;
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	const char *so = strstr(base, ".so");
	return so && (so[3] == '\0' || so[3] == '.');
}

static void list_field(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s) + 1);
}

static int write_initramfs(struct guest *g, const char *path, const char *key,
                           const struct guest_program *programs, size_t n,
                           const struct strlist *include)
{
	struct cpio c = {.a = archive_write_new(), .path = path};
	char *tmp = xasprintf("%s.tmp", path);
	if (archive_write_set_format_cpio_newc(c.a) != ARCHIVE_OK ||
	    archive_write_open_filename(c.a, tmp) != ARCHIVE_OK) {
		error("cannot write '%s': %s", tmp, archive_error_string(c.a));
		c.rc = -1;
	}
	cpio_dir(&c, "/dev", 0755);
	cpio_entry(&c, "/dev/console", AE_IFCHR, 0600, NULL, makedev(5, 1), NULL, 0);
	cpio_dir(&c, "/crossroot", 0700);
	cpio_file(&c, "/init", g->init, 0755);
	cpio_entry(&c, "/crossroot/key", AE_IFREG, 0400, NULL, 0, key, strlen(key));
	struct buf list = {0};
	list_field(&list, "crossroot-list 1");
	for (size_t i = 0; i < n; i++) {
		const struct guest_program *p = &programs[i];
		char number[32];
		snprintf(number, sizeof(number), "%zu", i);
		list_field(&list, number);
		snprintf(number, sizeof(number), "%ld", p->timeout);
		list_field(&list, number);
		list_field(&list, p->root ? "0" : "65534");
		list_field(&list, p->cwd);
		snprintf(number, sizeof(number), "%zu", p->argv.n);
		list_field(&list, number);
		for (size_t a = 0; a < p->argv.n; a++)
			list_field(&list, p->argv.v[a]);
		snprintf(number, sizeof(number), "%zu", p->env.n);
		list_field(&list, number);
		for (size_t a = 0; a < p->env.n; a++)
			list_field(&list, p->env.v[a]);
	}
	list_field(&list, "end");
	cpio_entry(&c, "/crossroot/list", AE_IFREG, 0400, NULL, 0, list.s, list.len);
	buf_release(&list);
	/* the sysroot's runtime at its own path, and the usual paths leading there */
	char *real = realpath(g->sysroot, NULL);
	const char *root = real ? real : g->sysroot;
	static const char *const whole[] = {"lib", "lib64", "etc"};
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		char *from = path_join(root, whole[i]);
		if (is_dir(from)) {
			cpio_tree(&c, from, from, NULL, 0);
			cpio_entry(&c, whole[i], AE_IFLNK, 0777, from, 0, NULL, 0);
		}
		free(from);
	}
	char *usr_lib = path_join(root, "usr/lib");
	if (is_dir(usr_lib)) {
		cpio_tree(&c, usr_lib, usr_lib, runtime_file, 0);
		cpio_dir(&c, "/usr", 0755);
		cpio_entry(&c, "/usr/lib", AE_IFLNK, 0777, usr_lib, 0, NULL, 0);
	}
	free(usr_lib);
	free(real);
	for (size_t i = 0; include && i < include->n; i++) {
		const char *from = include->v[i];
		if (is_dir(from))
			cpio_tree(&c, from, from, NULL, 01777);
		else
			cpio_file(&c, from, from, 0755);
	}
	for (size_t i = 0; i < n; i++)
		cpio_dir(&c, programs[i].cwd, 01777);
	cpio_dir(&c, "/tmp", 01777);
	if (archive_write_close(c.a) != ARCHIVE_OK && c.rc == 0) {
		error("cannot write '%s': %s", tmp, archive_error_string(c.a));
		c.rc = -1;
	}
	archive_write_free(c.a);
	if (c.rc == 0 && rename(tmp, path) != 0) {
		error("cannot rename '%s':", tmp);
		c.rc = -1;
	}
	if (c.rc < 0)
		unlink(tmp);
	strlist_release(&c.dirs);
	free(tmp);
	return c.rc;
}

/* ---- the boot ---- */

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool unhex(const char *s, struct buf *out)
{
	if (strcmp(s, "-") == 0)
		return true;
	size_t n = strlen(s);
	if (n % 2)
		return false;
	char *bytes = xmalloc(n / 2 + 1);
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
		if (hi < 0 || lo < 0) {
			free(bytes);
			return false;
		}
		bytes[i / 2] = (char)(hi << 4 | lo);
	}
	buf_add(out, bytes, n / 2);
	free(bytes);
	return true;
}

static void boot_fail(struct guest_frames *b, char *why)
{
	if (!b->failure)
		b->failure = why;
	else
		free(why);
}

void guest_frames_line(struct guest_frames *b, char *line)
{
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		line[--len] = '\0';
	if (strncmp(line, "@crossroot ", 11) != 0) {
		/* keep the last lines the kernel said, for a failure's message */
		buf_printf(&b->noise, "%s\n", line);
		if (b->noise.len > 8192) {
			char *rest = xstrdup(b->noise.s + b->noise.len - 4096);
			buf_release(&b->noise);
			buf_puts(&b->noise, rest);
			free(rest);
		}
		return;
	}
	char key[64], kind[16], data[len + 1];
	unsigned long seq;
	long id;
	if (sscanf(line + 11, "%63s %lu %15s %ld %s", key, &seq, kind, &id, data) != 5 ||
	    strcmp(key, b->key) != 0) {
		buf_printf(&b->noise, "(not a frame of this boot) %s\n", line);
		return;
	}
	if (b->failure || b->done)
		return;
	if (seq < b->seq) {
		boot_fail(b, xasprintf("frame %lu came again after frame %lu", seq, b->seq - 1));
		return;
	}
	if (seq != b->seq) {
		boot_fail(b, seq == b->seq + 1
		                 ? xasprintf("the console lost frame %lu (broken by another line)", b->seq)
		                 : xasprintf("the console lost frames %lu to %lu (broken by other lines)",
		                             b->seq, seq - 1));
		return;
	}
	b->seq++;
	struct buf decoded = {0};
	bool per_program = strcmp(kind, "boot") != 0 && strcmp(kind, "done") != 0 &&
	                   !(strcmp(kind, "error") == 0 && id < 0);
	if (per_program && (id < 0 || (size_t)id >= b->n)) {
		boot_fail(b, xasprintf("a frame names program %ld of %zu", id, b->n));
		return;
	}
	struct guest_result *r = per_program ? &b->results[id] : NULL;
	if (strcmp(kind, "boot") == 0) {
		b->booted = true;
	} else if (strcmp(kind, "done") == 0) {
		b->done = true;
	} else if (strcmp(kind, "out") == 0 || strcmp(kind, "err") == 0) {
		struct buf *into = kind[0] == 'o' ? &r->out : &r->err;
		size_t before = into->len;
		if (!unhex(data, into))
			boot_fail(b, xasprintf("a malformed %s frame of program %ld", kind, id));
		else if (b->on_output && into->len > before)
			b->on_output(b->arg, (size_t)id, kind[0] == 'o' ? 1 : 2, into->s + before,
			             into->len - before);
	} else if (strcmp(kind, "exit") == 0 || strcmp(kind, "timeout") == 0) {
		r->ran = true;
		r->timed_out = kind[0] == 't';
		r->status = atoi(data);
	} else if (strcmp(kind, "error") == 0) {
		if (!unhex(data, &decoded))
			boot_fail(b, xasprintf("a malformed error frame"));
		else if (r) {
			free(r->error);
			r->error = xstrdup(decoded.s ? decoded.s : "");
		} else {
			boot_fail(b, xasprintf("the guest's init failed: %s", decoded.s ? decoded.s : ""));
		}
	} else {
		boot_fail(b, xasprintf("an unknown frame kind '%s'", kind));
	}
	buf_release(&decoded);
}

/* qemu with stdin /dev/null (a terminal there would be put in raw mode and read), the
 * console on `out_fd`, its own messages on `err_fd`, in a process group of its own: an
 * interrupt reaches crossroot, which stops it. */
static pid_t spawn_qemu(char *const argv[], int out_fd, int err_fd)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		error("cannot start '%s':", argv[0]);
		return -1;
	}
	return pid;
}

static void random_key(char out[33])
{
	unsigned char bytes[16] = {0};
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes)) {
		/* no urandom: the time and pid still make a key no program was told */
		unsigned long long x = (unsigned long long)now_seconds() * 1000003ULL ^ (unsigned)getpid();
		memcpy(bytes, &x, sizeof(x));
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

int guest_run(struct guest *g, const struct guest_program *programs, size_t n,
              const struct strlist *include, struct guest_result *results,
              guest_output_fn on_output, void *arg)
{
	for (size_t i = 0; i < n; i++)
		memset(&results[i], 0, sizeof(results[i]));
	char key[33];
	random_key(key);
	char *initramfs = path_join(g->dir, "initramfs.cpio");
	char *log_path = path_join(g->dir, "console.log");
	struct guest_frames b = {.results = results, .n = n, .key = key, .on_output = on_output, .arg = arg};
	int rc = -1, log_fd = -1, pipe_fds[2] = {-1, -1};
	pid_t pid = -1;
	if (write_initramfs(g, initramfs, key, programs, n, include) < 0)
		goto out;
	char memory[32], cpus[32];
	snprintf(memory, sizeof(memory), "%d", g->memory_mb);
	snprintf(cpus, sizeof(cpus), "%d", g->cpus);
	char *append = xasprintf("console=%s loglevel=1 panic=-1 rdinit=/init", g->machine->console);
	struct strlist argv = {0};
	strlist_add(&argv, g->qemu);
	/* an emulator stage's qemu has no firmware of its own (the +ds source has none): the
	 * host's packages', where Debian's qemu looks (qemu-system-data: OpenSBI, the linuxboot
	 * option ROM; seabios: SeaBIOS). Given with -L: the stage's --firmwarepath under its
	 * prefix is relocated by qemu to beside the binary, where there is none */
	static const char *const firmware_dirs[] = {"/usr/share/qemu", "/usr/share/seabios"};
	for (size_t i = 0; g->target->emulator && i < 2; i++)
		if (is_dir(firmware_dirs[i])) {
			strlist_add(&argv, "-L");
			strlist_add(&argv, firmware_dirs[i]);
		}
	strlist_add(&argv, "-M");
	strlist_add(&argv, g->machine->board);
	if (machine_cpu(g)) {
		strlist_add(&argv, "-cpu");
		strlist_add(&argv, machine_cpu(g));
	}
	const char *rest[] = {"-m", memory, "-smp", cpus, "-nodefaults", "-no-reboot",
	                      "-display", "none", "-monitor", "none", "-serial", "stdio",
	                      "-kernel", g->kernel, "-initrd", initramfs, "-append", append, NULL};
	for (size_t i = 0; rest[i]; i++)
		strlist_add(&argv, rest[i]);
	strlist_take(&argv, NULL);
	free(append);
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0 || pipe2(pipe_fds, O_CLOEXEC) < 0) {
		error("cannot write '%s':", log_path);
		strlist_release(&argv);
		goto out;
	}
	pid = spawn_qemu(argv.v, pipe_fds[1], log_fd);
	strlist_release(&argv);
	close(pipe_fds[1]);
	pipe_fds[1] = -1;
	if (pid < 0)
		goto out;
	/* the whole boot's bound: the kernel's start, and every program at its timeout */
	double limit = (double)g->boot_seconds;
	for (size_t i = 0; i < n; i++)
		limit += (double)programs[i].timeout + 5;
	double start = now_seconds();
	struct buf pending = {0};
	char chunk[65536];
	bool eof = false;
	while (!eof && !b.done && !b.failure && !interrupted) {
		double elapsed = now_seconds() - start;
		if (!b.booted && elapsed > (double)g->boot_seconds) {
			boot_fail(&b, xasprintf("the guest said nothing in %ld s: the kernel did not reach "
			                        "/init", g->boot_seconds));
			break;
		}
		if (elapsed > limit) {
			boot_fail(&b, xasprintf("the boot did not end in %.0f s (its bound: %ld s to boot, "
			                        "each program's timeout and 5 s)", limit, g->boot_seconds));
			break;
		}
		struct pollfd p = {pipe_fds[0], POLLIN, 0};
		if (poll(&p, 1, 1000) <= 0)
			continue;
		ssize_t got = read(pipe_fds[0], chunk, sizeof(chunk));
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			eof = true;
			got = 0;
		}
		if (got > 0 && write_all(log_fd, chunk, (size_t)got, log_path) < 0)
			break;
		buf_add(&pending, chunk, (size_t)got);
		char *line = pending.s, *nl;
		while (line && (nl = memchr(line, '\n', pending.len - (size_t)(line - pending.s)))) {
			*nl = '\0';
			guest_frames_line(&b, line);
			line = nl + 1;
		}
		if (line && line != pending.s) {
			char *rest_text = xstrndup(line, pending.len - (size_t)(line - pending.s));
			buf_release(&pending);
			buf_puts(&pending, rest_text);
			free(rest_text);
		}
	}
	buf_release(&pending);
	if (!b.done && !b.failure)
		boot_fail(&b, xstrdup(interrupted ? "interrupted" : "qemu ended before the list was done"));
	if (b.failure) {
		error("the boot of %s failed: %s; the console's last lines (all of it in %s):\n%s",
		      g->target->name, b.failure, log_path, b.noise.s ? b.noise.s : "(none)\n");
		run_kill_group(pid, SIGKILL);
		kill(pid, SIGKILL);
	} else {
		rc = 0;
	}
	/* after "done" init powers off: qemu ends by itself, soon */
	for (int i = 0; i < 100 && pid > 0; i++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			break;
		}
		usleep(100000);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		run_wait(pid);
	}
	for (size_t i = 0; i < n; i++)
		if (!results[i].ran && !results[i].error)
			results[i].error = xasprintf("no result: %s", b.failure ? b.failure : "the list ended");
out:
	if (pipe_fds[0] >= 0)
		close(pipe_fds[0]);
	if (pipe_fds[1] >= 0)
		close(pipe_fds[1]);
	if (log_fd >= 0)
		close(log_fd);
	free(b.failure);
	buf_release(&b.noise);
	free(initramfs);
	free(log_path);
	return rc;
}
