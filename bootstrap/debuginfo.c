/* debuginfo: split debug information into usr/lib/debug. See debuginfo.h. */
#define _GNU_SOURCE
#include "debuginfo.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "tree.h"
#include "util.h"

enum kind { OTHER, ARCHIVE, RELOCATABLE, LINKED };

struct elf_facts {
	enum kind kind;
	bool debug;             /* has DWARF (.debug_info or .debug_line) */
	char build_id[129];     /* hex, or "" */
};

static uint64_t get(const unsigned char *p, size_t n, bool big)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[big ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* What an ELF file is, read from its section headers; anything malformed is OTHER (left as
 * it is: objcopy would refuse it too). */
static void read_elf(const unsigned char *m, size_t size, struct elf_facts *f)
{
	if (size < 64 || memcmp(m, "\177ELF", 4) != 0 || (m[4] != 1 && m[4] != 2) ||
	    (m[5] != 1 && m[5] != 2))
		return;
	bool wide = m[4] == 2, big = m[5] == 2;
	uint64_t type = get(m + 16, 2, big);
	uint64_t shoff = wide ? get(m + 0x28, 8, big) : get(m + 0x20, 4, big);
	uint64_t shentsize = get(m + (wide ? 0x3A : 0x2E), 2, big);
	uint64_t shnum = get(m + (wide ? 0x3C : 0x30), 2, big);
	uint64_t shstrndx = get(m + (wide ? 0x3E : 0x32), 2, big);
	if (shentsize < (wide ? 64u : 40u) || shnum == 0 || shstrndx >= shnum || shoff > size ||
	    shnum * shentsize > size - shoff)
		return;
	const unsigned char *sh = m + shoff;
	uint64_t off_at = wide ? 0x18 : 0x10, size_at = wide ? 0x20 : 0x14, w = wide ? 8 : 4;
	const unsigned char *strtab = sh + shstrndx * shentsize;
	uint64_t str_off = get(strtab + off_at, w, big), str_size = get(strtab + size_at, w, big);
	if (str_off > size || str_size > size - str_off)
		return;
	f->kind = type == 1 ? RELOCATABLE : type == 2 || type == 3 ? LINKED : OTHER;
	for (uint64_t i = 0; i < shnum; i++) {
		const unsigned char *s = sh + i * shentsize;
		uint64_t name = get(s, 4, big), off = get(s + off_at, w, big), len = get(s + size_at, w, big);
		if (name >= str_size)
			continue;
		const char *nm = (const char *)m + str_off + name;
		size_t room = str_size - name;
		if (strnlen(nm, room) == room)
			continue;
		if (strcmp(nm, ".debug_info") == 0 || strcmp(nm, ".debug_line") == 0 ||
		    strcmp(nm, ".zdebug_info") == 0)
			f->debug = true;
		/* note: namesz, descsz, type (3: NT_GNU_BUILD_ID), "GNU\0", the ID */
		if (strcmp(nm, ".note.gnu.build-id") == 0 && off <= size && len <= size - off && len >= 16) {
			uint64_t namesz = get(m + off, 4, big), descsz = get(m + off + 4, 4, big);
			uint64_t desc = 12 + ((namesz + 3) & ~3ull);
			if (namesz == 4 && memcmp(m + off + 12, "GNU", 4) == 0 && descsz >= 2 &&
			    descsz <= 64 && desc + descsz <= len)
				for (uint64_t k = 0; k < descsz; k++)
					sprintf(f->build_id + 2 * k, "%02x", m[off + desc + k]);
		}
	}
}

static int inspect(const char *path, struct elf_facts *f)
{
	memset(f, 0, sizeof(*f));
	size_t len;
	unsigned char *m = map_file(path, &len);
	if (!m)
		return -1;
	if (len >= 8 && memcmp(m, "!<arch>\n", 8) == 0) {
		f->kind = ARCHIVE;   /* a member's section names are in the archive's bytes */
		f->debug = memmem(m, len, ".debug_info", 11) != NULL;
	} else {
		read_elf(m, len, f);
	}
	unmap_file(m, len);
	return 0;
}

static int objcopy_run(const char *objcopy, const char *a, const char *b, const char *in,
                       const char *out)
{
	char *argv[] = {(char *)objcopy, (char *)a, (char *)b, (char *)in, (char *)out, NULL};
	if (!b) {
		argv[2] = (char *)in;
		argv[3] = (char *)out;
		argv[4] = NULL;
	}
	pid_t pid = run_argv(argv, NULL, 1, 2);
	int status = pid < 0 ? -1 : run_wait(pid);
	if (status != 0) {
		char how[96];
		error("%s %s%s%s %s: %s", objcopy, a, b ? " " : "", b ? b : "", in,
		      status < 0 ? "could not run" : run_describe(status, how));
		return -1;
	}
	return 0;
}

/* Rewrite `path` through objcopy with `a` [`b`], keeping its mode. */
static int rewrite(const char *objcopy, const char *path, mode_t mode, const char *a, const char *b)
{
	char *tmp = xasprintf("%s.crossroot-strip", path);
	int rc = objcopy_run(objcopy, a, b, path, tmp);
	if (rc == 0 && (chmod(tmp, mode & 07777) < 0 || rename(tmp, path) < 0)) {
		error("cannot replace '%s':", path);
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int split_one(const char *objcopy, int rootfd, const char *root, const char *rel,
                     const char *path, const struct stat *st, const struct elf_facts *f)
{
	if (f->kind == ARCHIVE || f->kind == RELOCATABLE) {
		printf("strip debug %s\n", rel);
		return rewrite(objcopy, path, st->st_mode, "--strip-debug", NULL);
	}
	char *debug = f->build_id[0]
		? xasprintf("%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, f->build_id, f->build_id + 2)
		: xasprintf("%s/usr/lib/debug/%s.debug", root, rel);
	printf("split debug %s -> %s\n", rel, debug + strlen(root) + 1);
	int rc = 0;
	char *dir = xstrdup(debug + strlen(root) + 1);
	*strrchr(dir, '/') = '\0';
	/* the step may have left links on the way (usr/lib/debug -> elsewhere): each directory
	 * is made or opened without following one, and an existing .debug must be a file */
	int dir_fd = tree_make_dirs(rootfd, root, dir, 0755);
	struct stat there;
	bool exists = dir_fd >= 0 && fstatat(dir_fd, strrchr(debug, '/') + 1, &there, AT_SYMLINK_NOFOLLOW) == 0;
	if (dir_fd < 0) {
		rc = -1;
	} else if (exists && !S_ISREG(there.st_mode)) {
		error("'%s' is there already and is not a file: the stage left it", debug);
		rc = -1;
	} else if (!exists) {   /* two copies of one file (same ID) share one */
		char *tmp = xasprintf("%s.tmp", debug);
		rc = objcopy_run(objcopy, "--only-keep-debug", NULL, path, tmp);
		if (rc == 0 && (chmod(tmp, 0644) < 0 || rename(tmp, debug) < 0)) {
			error("cannot write '%s':", debug);
			rc = -1;
		}
		if (rc < 0)
			unlink(tmp);
		free(tmp);
	}
	if (dir_fd >= 0)
		close(dir_fd);
	char *link = xasprintf("--add-gnu-debuglink=%s", debug);
	if (rc == 0)
		rc = rewrite(objcopy, path, st->st_mode, "--strip-debug", link);
	free(link);
	free(dir);
	free(debug);
	return rc;
}

/* Make `path` another name of `first` again. */
static int relink(const char *first, const char *path)
{
	char *tmp = xasprintf("%s.crossroot-link", path);
	unlink(tmp);
	int rc = link(first, tmp) == 0 && rename(tmp, path) == 0 ? 0 : -1;
	if (rc < 0) {
		error("cannot link '%s' to '%s' again:", path, first);
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

struct split {
	const char *objcopy;
	int rootfd;
	struct strlist seen;   /* "dev:ino", then the name it was rewritten at, for each
	                          hard-linked file: a rewrite makes a new file, so its other
	                          names are linked to it again */
};

static int split_visit(const struct tree_item *it, void *arg)
{
	struct split *sp = arg;
	if (S_ISDIR(it->st.st_mode))
		return strcmp(it->path, "usr/lib/debug") == 0 ? TREE_SKIP : TREE_NEXT;
	if (!S_ISREG(it->st.st_mode))
		return TREE_NEXT;
	char *path = xasprintf("%s/%s", it->root, it->path);
	char *id = xasprintf("%llu:%llu", (unsigned long long)it->st.st_dev,
	                     (unsigned long long)it->st.st_ino);
	const char *first = NULL;
	for (size_t k = 0; k + 1 < sp->seen.n && !first; k += 2)
		if (strcmp(sp->seen.v[k], id) == 0)
			first = sp->seen.v[k + 1];
	struct elf_facts f;
	int rc;
	if (first) {
		rc = relink(first, path);
	} else if ((rc = inspect(path, &f)) == 0 && f.debug && f.kind != OTHER) {
		if (it->st.st_nlink > 1) {
			strlist_add(&sp->seen, id);
			strlist_add(&sp->seen, path);
		}
		rc = split_one(sp->objcopy, sp->rootfd, it->root, it->path, path, &it->st, &f);
	}
	free(id);
	free(path);
	return rc < 0 ? -1 : TREE_NEXT;
}

int debuginfo_split(const char *objcopy, const char *root)
{
	struct split sp = {.objcopy = objcopy};
	sp.rootfd = tree_open(root, "the stage left", false);
	int rc = sp.rootfd < 0 ? -1 : tree_walk_fd(sp.rootfd, root, split_visit, &sp);
	if (sp.rootfd >= 0)
		close(sp.rootfd);
	strlist_release(&sp.seen);
	fflush(stdout);
	return rc;
}
