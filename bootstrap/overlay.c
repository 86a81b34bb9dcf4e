/* overlay: the user's own files over a target's sysroot. See overlay.h. */
#define _GNU_SOURCE
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysroot.h"
#include "tree.h"
#include "util.h"

/* Every entry under root, parents before children, in sorted order (tree.h: never through a
 * link). `fn` returns 0 to go on (into a directory's entries too) or -1 to stop. */
typedef int (*walk_fn)(const char *root, const char *rel, const struct stat *st, void *ctx);

struct walk_adapter {
	walk_fn fn;
	void *ctx;
};

static int visit(const struct tree_item *it, void *arg)
{
	const struct walk_adapter *w = arg;
	return w->fn(it->root, it->path, &it->st, w->ctx) < 0 ? -1 : TREE_NEXT;
}

static int walk(const char *root, walk_fn fn, void *ctx)
{
	struct walk_adapter w = {fn, ctx};
	return tree_walk(root, NULL, visit, &w);
}

/* The sysroot's own places: the wrappers (bin/), the generated files, the toolchain's tools */
static const char *reserved(const char *rel)
{
	static const char *const names[] = {"bin", "toolchain", "share/crossroot",
	                                    SYSROOT_STAMP};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		if (strncmp(rel, names[i], n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
			return names[i];
	}
	return NULL;
}

/* A link at `rel` pointing to `target`, as it goes into the overlay: an absolute target
 * names a sysroot path and becomes relative; the result may climb only through the link's
 * own parent directories ("../" first, then no "." or ".."). NULL if it would leave the root. */
static char *link_inside(const char *rel, const char *target)
{
	size_t depth = 0;
	for (const char *s = rel; *s; s++)
		depth += *s == '/';
	struct buf b = {0};
	const char *rest = target;
	if (*target == '/') {
		for (size_t i = 0; i < depth; i++)
			buf_puts(&b, "../");
		while (*rest == '/')
			rest++;
	} else {
		size_t ups = 0;
		while (strncmp(rest, "../", 3) == 0 || strcmp(rest, "..") == 0) {
			ups++;
			rest += rest[2] ? 3 : 2;
			while (*rest == '/')
				rest++;
		}
		if (ups > depth) {
			buf_release(&b);
			return NULL;
		}
		buf_add(&b, target, (size_t)(rest - target));
	}
	/* what follows the climb names only real components */
	char *copy = xstrdup(rest);
	bool ok = *rest != '\0' || b.len > 0;
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c && ok; c = strtok_r(NULL, "/", &save))
		ok = strcmp(c, ".") != 0 && strcmp(c, "..") != 0;
	free(copy);
	if (!ok) {
		buf_release(&b);
		return NULL;
	}
	buf_puts(&b, rest);
	return buf_detach(&b);
}

struct check {
	const char *sysroot, *overlay;
	size_t problems;
};

static void problem(struct check *c, const char *fmt, const char *a, const char *b)
{
	if (c->problems++ < 20)
		error(fmt, a, b);
}

/* One entry of the tree to install: a kind an overlay can hold, outside the sysroot's own
 * places, links that stay inside, and nothing the stages installed. */
static int check_entry(const char *root, const char *rel, const struct stat *st, void *ctx)
{
	struct check *c = ctx;
	if (strpbrk(rel, "\t\n")) {   /* they would forge lines of the package's manifest */
		problem(c, "install: '%s/%s': a name with a tab or newline cannot enter a sysroot", root,
		        rel);
		return 0;
	}
	const char *r = reserved(rel);
	if (r) {
		problem(c, "install: '%s' is in the sysroot's own '%s' (crossroot's wrappers and "
		        "files): install programs and libraries under usr/", rel, r);
		return 0;
	}
	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode)) {
		problem(c, "install: '%s/%s' is neither a file, a link nor a directory", root, rel);
		return 0;
	}
	if (S_ISLNK(st->st_mode)) {
		char *path = path_join(root, rel);
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		free(path);
		target[n < 0 ? 0 : n] = '\0';
		char *inside = n > 0 ? link_inside(rel, target) : NULL;
		if (!inside)
			problem(c, "install: the link '%s' points to '%s', outside the sysroot", rel, target);
		free(inside);
	}
	if (!c->sysroot)
		return 0;
	char *in_sysroot = path_join(c->sysroot, rel);
	char *in_overlay = path_join(c->overlay, rel);
	struct stat there;
	if (lstat(in_sysroot, &there) == 0) {
		if (S_ISDIR(st->st_mode) && !S_ISDIR(there.st_mode))
			problem(c, "install: '%s' is a directory here but not in the sysroot %s", rel,
			        c->sysroot);
		else if (!S_ISDIR(st->st_mode) && lstat(in_overlay, &there) < 0)
			problem(c, "install: '%s' is already in the sysroot %s, installed by its stages: "
			        "an overlay adds files, it never replaces the runtimes'", rel, c->sysroot);
	}
	free(in_overlay);
	free(in_sysroot);
	return 0;
}

/* Copies one entry of the tree being installed into the new overlay */
static int copy_entry(const char *root, const char *rel, const struct stat *st, void *ctx)
{
	const char *dest_root = ctx;
	char *from = path_join(root, rel);
	char *to = path_join(dest_root, rel);
	struct stat there;
	bool exists = lstat(to, &there) == 0;
	int rc = 0;
	/* a kind that changed (a file that is now a directory, say) replaces the old entry */
	if (exists && S_ISDIR(st->st_mode) != S_ISDIR(there.st_mode)) {
		rc = remove_tree(to);
		exists = false;
	}
	if (rc < 0) {
		error("cannot replace '%s'", to);
	} else if (S_ISDIR(st->st_mode)) {
		if (!exists && mkdir(to, 0755) < 0) {
			error("cannot create directory '%s':", to);
			rc = -1;
		} else {
			chmod(to, (st->st_mode & 0755) | 0700);
		}
	} else if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlink(from, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		char *inside = n > 0 ? link_inside(rel, target) : NULL;
		unlink(to);
		if (!inside || symlink(inside, to) < 0) {
			error("cannot create link '%s':", to);
			rc = -1;
		}
		free(inside);
	} else if ((rc = copy_tree(from, to, false)) == 0) {
		/* as the stages' files: no set-id or sticky bit, no group or other write */
		chmod(to, (st->st_mode & 0755) | 0600);
	}
	free(to);
	free(from);
	return rc;
}

int overlay_install(const char *overlay, const char *from, const char *sysroot)
{
	if (!is_dir(from)) {
		error("install: '%s' is not a directory (give the DESTDIR of a 'make install')", from);
		return -1;
	}
	struct check c = {sysroot, overlay, 0};
	if (walk(from, check_entry, &c) < 0)
		return -1;
	if (c.problems) {
		error("install: nothing installed (%zu problem%s in '%s')", c.problems,
		      c.problems == 1 ? "" : "s", from);
		return -1;
	}
	/* The new overlay is the old one (hard links) with the tree merged in, then swapped in
	 * whole: an interrupted install leaves the old overlay as it was. */
	char *parent = xstrdup(overlay);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	const char *base = slash ? slash + 1 : overlay;
	char *next = xasprintf("%s/.%s.new", parent, base);
	int rc = mkdir_p(parent, 0755) == 0 && remove_tree(next) == 0 ? 0 : -1;
	if (rc == 0)
		rc = is_dir(overlay) ? copy_tree(overlay, next, true) : mkdir_p(next, 0755);
	if (rc == 0)
		rc = walk(from, copy_entry, next);
	if (rc == 0 && is_dir(overlay)) {
		if (renameat2(AT_FDCWD, next, AT_FDCWD, overlay, RENAME_EXCHANGE) < 0) {
			error("cannot swap '%s' into '%s':", next, overlay);
			rc = -1;
		}
	} else if (rc == 0 && rename(next, overlay) < 0) {
		error("cannot rename '%s' to '%s':", next, overlay);
		rc = -1;
	}
	remove_tree(next);
	free(next);
	free(parent);
	return rc;
}

static int digest_entry(const char *root, const char *rel, const struct stat *st, void *ctx)
{
	struct digest *d = ctx;
	char *line = xasprintf("%s %o %lld %lld.%09ld", rel, (unsigned)st->st_mode,
	                       (long long)st->st_size, (long long)st->st_mtim.tv_sec,
	                       st->st_mtim.tv_nsec);
	digest_update_string(d, line);
	free(line);
	if (S_ISLNK(st->st_mode)) {
		char *path = path_join(root, rel);
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		digest_update_string(d, target);
		free(path);
	}
	return 0;
}

void overlay_digest(struct digest *d, const char *overlay)
{
	if (is_dir(overlay)) {
		digest_update_string(d, "overlay");
		walk(overlay, digest_entry, d);
	}
}

int overlay_manifest(const char *overlay, struct tree_manifest *m)
{
	if (!is_dir(overlay))
		return 0;
	struct tree_scan scan = {0};
	buf_puts(&scan.out, TREE_MANIFEST_HEADER);
	int rc = tree_scan(&scan, overlay);
	char *why = NULL;
	if (rc == 0 && (rc = tree_manifest_parse(m, overlay, scan.out.s, &why)) < 0)
		error("%s", why);
	free(why);
	buf_release(&scan.out);
	return rc;
}

static int apply_entry(const char *root, const char *rel, const struct stat *st, void *ctx)
{
	const char *dest = ctx;
	char *to = path_join(dest, rel);
	struct stat there;
	int rc = 0;
	if (lstat(to, &there) == 0) {
		if (!S_ISDIR(st->st_mode) || !S_ISDIR(there.st_mode)) {
			error("the overlay's '%s/%s' is also installed by the target's stages: remove it "
			      "from the overlay (a stage now provides it)", root, rel);
			rc = -1;
		}
	} else if (S_ISDIR(st->st_mode)) {
		if (mkdir(to, 0755) < 0) {
			error("cannot create directory '%s':", to);
			rc = -1;
		}
	} else {
		char *from = path_join(root, rel);
		rc = copy_tree(from, to, true);
		free(from);
	}
	free(to);
	return rc;
}

int overlay_apply(const char *overlay, const char *dest)
{
	return is_dir(overlay) ? walk(overlay, apply_entry, (void *)dest) : 0;
}
