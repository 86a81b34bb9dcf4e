/* tree: descriptor-based walks over trees that build steps made, with one policy for links,
 * types and modes. See tree.h. */
#define _GNU_SOURCE
#include "tree.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "util.h"

int tree_open(const char *path, const char *whose, bool missing_ok)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int saved = errno;
	struct stat st;
	if (saved == ENOENT && missing_ok)
		return -2;
	if ((saved == ELOOP || saved == ENOTDIR) && lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			error("%s a link where a directory must be: '%s' (crossroot never follows it)",
			      whose ? whose : "found", path);
		else
			error("%s '%s', which is not a directory", whose ? whose : "found", path);
		return -1;
	}
	errno = saved;
	error("cannot open the directory '%s':", path);
	return -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(int fd, const char *root, const char *rel, tree_visit_fn visit, void *arg)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		error("cannot read the directory '%s%s%s':", root, rel[0] ? "/" : "", rel);
		return -1;
	}
	struct strlist names = {0};
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			strlist_add(&names, e->d_name);
	closedir(d);
	qsort(names.v, names.n, sizeof(*names.v), by_name);
	int rc = 0;
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		char *path = rel[0] ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
		struct tree_item it = {.dirfd = fd, .name = names.v[i], .path = path, .root = root};
		if (fstatat(fd, it.name, &it.st, AT_SYMLINK_NOFOLLOW) < 0) {
			error("cannot stat '%s/%s':", root, path);
			rc = -1;
		} else {
			int what = visit(&it, arg);
			if (what < 0) {
				rc = -1;
			} else if (what == TREE_NEXT && S_ISDIR(it.st.st_mode)) {
				int sub = openat(fd, it.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub < 0) {
					error("cannot open the directory '%s/%s':", root, path);
					rc = -1;
				} else {
					rc = walk_dir(sub, root, path, visit, arg);
					close(sub);
				}
			}
		}
		free(path);
	}
	strlist_release(&names);
	return rc;
}

int tree_walk_fd(int rootfd, const char *root, tree_visit_fn visit, void *arg)
{
	return walk_dir(rootfd, root, "", visit, arg);
}

int tree_walk(const char *root, const char *whose, tree_visit_fn visit, void *arg)
{
	int fd = tree_open(root, whose, false);
	if (fd < 0)
		return -1;
	int rc = walk_dir(fd, root, "", visit, arg);
	close(fd);
	return rc;
}

int tree_read_link(const struct tree_item *it, char *out, size_t size)
{
	ssize_t n = readlinkat(it->dirfd, it->name, out, size - 1);
	if (n < 0 || (size_t)n >= size - 1) {
		error("cannot read the link '%s/%s'%s", it->root, it->path, n < 0 ? ":" : " (too long)");
		return -1;
	}
	out[n] = '\0';
	return 0;
}

int tree_open_file(const struct tree_item *it)
{
	int fd = openat(it->dirfd, it->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		error("cannot open '%s/%s':", it->root, it->path);
	return fd;
}

int tree_make_dirs(int rootfd, const char *root, const char *rel, mode_t mode)
{
	int fd = dup(rootfd);
	char *copy = xstrdup(rel);
	for (char *save = NULL, *part = strtok_r(copy, "/", &save); part && fd >= 0;
	     part = strtok_r(NULL, "/", &save)) {
		if (mkdirat(fd, part, mode) < 0 && errno != EEXIST) {
			error("cannot make the directory '%s/%s':", root, rel);
			close(fd);
			fd = -1;
			break;
		}
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			error("'%s/%s': '%s' on the way is a link or not a directory (crossroot never "
			      "follows it)", root, rel, part);
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
}

static int give(const struct tree_item *it, void *arg)
{
	const id_t *ids = arg;
	if (fchownat(it->dirfd, it->name, (uid_t)ids[0], (gid_t)ids[1], AT_SYMLINK_NOFOLLOW) < 0) {
		error("cannot give '%s/%s' to the step user:", it->root, it->path);
		return -1;
	}
	return TREE_NEXT;
}

int tree_chown(const char *root, uid_t uid, gid_t gid)
{
	int fd = tree_open(root, NULL, false);
	if (fd < 0)
		return -1;
	id_t ids[2] = {uid, gid};
	int rc = fchown(fd, uid, gid);
	if (rc < 0)
		error("cannot give '%s' to the step user:", root);
	else
		rc = walk_dir(fd, root, "", give, ids);
	close(fd);
	return rc;
}

/* ---- manifests: the scan that writes them and the one parser ---- */

int tree_entry_compare(const void *a, const void *b)
{
	const struct tree_entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static const struct tree_entry *known_entry(const struct tree_scan *w, const char *path)
{
	/* by path alone: tree_entry_compare would also compare the key's line position */
	struct tree_entry key = {.path = (char *)path};
	return w->known ? bsearch(&key, w->known, w->n_known, sizeof(key), tree_entry_by_path) : NULL;
}

static bool newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

void tree_entry_line(const struct tree_entry *e, struct buf *out)
{
	if (e->kind == 'd')
		buf_printf(out, "d\t%o\t%s\n", e->mode, e->path);
	else if (e->kind == 'f')
		buf_printf(out, "f\t%o\t%lld\t%s\t%s\n", e->mode, e->size, e->value, e->path);
	else
		buf_printf(out, "l\t%s\t%s\n", e->value, e->path);
}

static int walk_visit(const struct tree_item *it, void *arg)
{
	struct tree_scan *w = arg;
	const char *r = it->path;
	const struct stat *st = &it->st;
	if (strpbrk(it->name, "\t\n")) {
		error("'%s/%s': a file name with a tab or newline cannot enter a sysroot", it->root, r);
		return -1;
	}
	if (S_ISLNK(st->st_mode)) {
		char target[4096];
		if (tree_read_link(it, target, sizeof(target)) < 0)
			return -1;
		if (strpbrk(target, "\t\n")) {
			error("the link '%s/%s' has a tab or newline in its target", it->root, r);
			return -1;
		}
		struct tree_entry e = {.kind = 'l', .value = target, .path = (char *)r};
		tree_entry_line(&e, &w->out);
	} else if (S_ISDIR(st->st_mode)) {
		unsigned mode = st->st_mode & 07777;
		if (w->normalise) {
			mode = (mode & 0755) | 0700;   /* owner-writable, so it can be removed */
			if (fchmodat(it->dirfd, it->name, mode, 0) < 0) {
				error("cannot change the mode of '%s/%s':", it->root, r);
				return -1;
			}
		}
		struct tree_entry e = {.kind = 'd', .mode = mode, .path = (char *)r};
		tree_entry_line(&e, &w->out);
	} else if (S_ISREG(st->st_mode)) {
		unsigned mode = st->st_mode & 07777;
		if (w->normalise) {
			/* What a check reads back from the read-only file: a hard link's other name,
			 * already made read-only (binutils installs ld.bfd twice), must give the same
			 * mode as the first */
			mode = (mode & 0555) | 0600;
			/* read-only in the cache: a result is never written after publishing */
			if (fchmodat(it->dirfd, it->name, mode & 0555, 0) < 0) {
				error("cannot change the mode of '%s/%s':", it->root, r);
				return -1;
			}
		} else {
			mode = (mode | 0200) & 0755;   /* the cache holds it read-only */
		}
		const struct tree_entry *k = known_entry(w, r);
		char hex[DIGEST_HEX_LEN + 1];
		if (k && k->kind == 'f' && k->size == (long long)st->st_size &&
		    !newer(&st->st_ctim, &w->published)) {
			snprintf(hex, sizeof(hex), "%s", k->value);
		} else {
			int fd = tree_open_file(it);
			char *name = xasprintf("%s/%s", it->root, r);
			int rc = fd < 0 ? -1 : digest_fd(fd, name, hex);
			free(name);
			if (fd >= 0)
				close(fd);
			if (rc < 0)
				return -1;
		}
		struct tree_entry e = {.kind = 'f', .mode = mode, .size = (long long)st->st_size,
		                       .value = hex, .path = (char *)r};
		tree_entry_line(&e, &w->out);
	} else {
		error("'%s/%s' is not a file, link or directory: a sysroot cannot hold it", it->root, r);
		return -1;
	}
	return TREE_NEXT;
}

int tree_scan(struct tree_scan *s, const char *root)
{
	return tree_walk(root, NULL, walk_visit, s);
}

/* The entry lines of `text` (changed in place), the first of them line `line_no` of `name`. */
static int parse_lines(const char *name, char *text, size_t line_no, const char *files,
                       const char *owner, struct tree_entry **out, size_t *n, size_t *cap,
                       char **why)
{
	for (char *line = text; *line; line_no++) {
		char *end = strchr(line, '\n');
		if (!end) {
			*why = xasprintf("%s:%zu: truncated manifest", name, line_no);
			return -1;
		}
		*end = '\0';
		char *field[5] = {0};
		size_t nf = 0;
		for (char *f = line; f && nf < 5; nf++) {
			field[nf] = f;
			f = strchr(f, '\t');
			if (f)
				*f++ = '\0';
		}
		struct tree_entry e = {.kind = field[0][0], .order = *n};
		bool ok = field[0][1] == '\0';
		if (ok && e.kind == 'd' && nf == 3) {
			e.mode = (unsigned)strtoul(field[1], NULL, 8);
			e.path = xstrdup(field[2]);
		} else if (ok && e.kind == 'f' && nf == 5 && digest_is_valid_hex(field[3])) {
			e.mode = (unsigned)strtoul(field[1], NULL, 8);
			e.size = atoll(field[2]);
			e.value = xstrdup(field[3]);
			e.path = xstrdup(field[4]);
			e.from = files ? path_join(files, field[4]) : NULL;
		} else if (ok && e.kind == 'l' && nf == 3) {
			e.value = xstrdup(field[1]);
			e.path = xstrdup(field[2]);
		} else {
			*why = xasprintf("%s:%zu: malformed manifest line", name, line_no);
			return -1;
		}
		/* a path leaving its root could only come from a forged manifest */
		if (e.path[0] == '/' || strcmp(e.path, "..") == 0 || strncmp(e.path, "../", 3) == 0 ||
		    strstr(e.path, "/../") || strstr(e.path, "//")) {
			*why = xasprintf("%s:%zu: path '%s' leaves its directory", name, line_no, e.path);
			free(e.path);
			free(e.value);
			free(e.from);
			return -1;
		}
		e.owner = xstrdup(owner ? owner : "");
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*out = xrealloc(*out, *cap * sizeof(**out));
		}
		(*out)[(*n)++] = e;
		line = end + 1;
	}
	return 0;
}

int tree_manifest_parse_entries(const char *name, char *text, const char *files, const char *owner,
                                struct tree_entry **out, size_t *n, size_t *cap, char **why)
{
	if (strncmp(text, TREE_MANIFEST_HEADER, strlen(TREE_MANIFEST_HEADER)) != 0) {
		*why = xasprintf("'%s' is not a crossroot manifest (version 2)", name);
		return -1;
	}
	return parse_lines(name, text + strlen(TREE_MANIFEST_HEADER), 2, files, owner, out, n, cap,
	                   why);
}

int tree_manifest_parse_body(struct tree_manifest *m, const char *name, const char *text,
                             size_t first_line, char **why)
{
	char *copy = xstrdup(text);
	*why = NULL;
	int rc = parse_lines(name, copy, first_line, NULL, NULL, &m->entries, &m->n, &m->cap, why);
	free(copy);
	return rc;
}

void tree_entries_free(struct tree_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].value);
		free(e[i].path);
		free(e[i].from);
		free(e[i].owner);
	}
	free(e);
}

int tree_manifest_parse(struct tree_manifest *m, const char *name, const char *text,
                         char **why)
{
	char *copy = xstrdup(text);
	*why = NULL;
	int rc = tree_manifest_parse_entries(name, copy, NULL, NULL, &m->entries, &m->n, &m->cap, why);
	free(copy);
	return rc;
}

void tree_manifest_release(struct tree_manifest *m)
{
	tree_entries_free(m->entries, m->n);
	memset(m, 0, sizeof(*m));
}

/* ---- the tar writer ---- */

struct tree_tar {
	struct archive *a;
	struct archive_entry *e;
	char *path, *tmp;
	long long mtime;
	bool failed;
};

struct tree_tar *tree_tar_open(const char *path, enum tree_tar_filter filter, long long mtime)
{
	struct tree_tar *t = xcalloc(1, sizeof(*t));
	t->a = archive_write_new();
	t->e = archive_entry_new();
	t->path = xstrdup(path);
	t->tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	t->mtime = mtime;
	int added = filter == TREE_TAR_XZ ? archive_write_add_filter_xz(t->a)
	                                  : archive_write_add_filter_zstd(t->a);
	if (added != ARCHIVE_OK || archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_open_filename(t->a, t->tmp) != ARCHIVE_OK) {
		error("cannot write '%s': %s", t->tmp, archive_error_string(t->a));
		tree_tar_close(t, false);
		return NULL;
	}
	return t;
}

static int tar_write(struct tree_tar *t, const void *data, size_t len, const char *path)
{
	if (archive_write_data(t->a, data, len) != (la_ssize_t)len) {
		error("cannot write '%s' into '%s': %s", path, t->tmp, archive_error_string(t->a));
		return -1;
	}
	return 0;
}

int tree_tar_add(struct tree_tar *t, const struct tree_tar_entry *e, const void *data, int fd,
                 const char *from)
{
	struct archive_entry *ae = t->e;
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, e->path);
	archive_entry_set_mtime(ae, (time_t)t->mtime, 0);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	archive_entry_set_filetype(ae, e->kind == 'd' ? AE_IFDIR : e->kind == 'l' ? AE_IFLNK : AE_IFREG);
	archive_entry_set_perm(ae, e->kind == 'l' ? 0777 : e->mode);
	if (e->kind == 'l')
		archive_entry_set_symlink(ae, e->link);
	archive_entry_set_size(ae, e->kind == 'f' ? e->size : 0);
	int rc = 0;
	if (archive_write_header(t->a, ae) != ARCHIVE_OK) {
		error("cannot write '%s' into '%s': %s", e->path, t->tmp, archive_error_string(t->a));
		rc = -1;
	} else if (e->kind == 'f' && data) {
		rc = tar_write(t, data, (size_t)e->size, e->path);
	} else if (e->kind == 'f') {
		static char chunk[1 << 16];
		long long total = 0;
		ssize_t got;
		while (rc == 0 && (got = read(fd, chunk, sizeof(chunk))) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				error("cannot read '%s':", from);
				rc = -1;
			} else if ((total += got) > e->size) {
				break;
			} else {
				rc = tar_write(t, chunk, (size_t)got, e->path);
			}
		}
		if (rc == 0 && total != e->size) {
			error("'%s' changed since it was described (%s%lld bytes, not %lld)", from,
			      total > e->size ? "more than " : "", total, e->size);
			rc = -1;
		}
	}
	if (rc < 0)
		t->failed = true;
	return rc;
}

int tree_tar_close(struct tree_tar *t, bool keep)
{
	int rc = keep && !t->failed ? 0 : -1;
	if (rc == 0 && archive_write_close(t->a) != ARCHIVE_OK) {
		error("cannot write '%s': %s", t->tmp, archive_error_string(t->a));
		rc = -1;
	}
	archive_entry_free(t->e);
	archive_write_free(t->a);
	if (rc == 0 && rename(t->tmp, t->path) < 0) {
		error("cannot rename '%s' to '%s':", t->tmp, t->path);
		rc = -1;
	}
	if (rc < 0)
		unlink(t->tmp);
	free(t->tmp);
	free(t->path);
	free(t);
	return keep ? rc : -1;
}

/* ---- the tar reader ---- */

struct tree_tar_reader {
	struct archive *a;
	struct archive_entry *e;   /* the current member's header */
	struct tree_tar_member m;
	char *path;                /* m.path's storage */
};

struct tree_tar_reader *tree_tar_read_open(const char *path, bool zstd_only, char **why)
{
	struct tree_tar_reader *r = xcalloc(1, sizeof(*r));
	r->a = archive_read_new();
	if (zstd_only)
		archive_read_support_filter_zstd(r->a);
	else
		archive_read_support_filter_all(r->a);
	archive_read_support_format_tar(r->a);
	*why = NULL;
	if (archive_read_open_filename(r->a, path, 1 << 17) != ARCHIVE_OK) {
		*why = xstrdup(archive_error_string(r->a) ? archive_error_string(r->a) : "unreadable");
		tree_tar_read_close(r);
		return NULL;
	}
	return r;
}

int tree_tar_read_next(struct tree_tar_reader *r, const struct tree_tar_member **m)
{
	int got = archive_read_next_header(r->a, &r->e);
	if (got == ARCHIVE_EOF)
		return 0;
	if (got != ARCHIVE_OK)
		return -1;
	/* tar writers end a directory's name with '/' */
	free(r->path);
	const char *name = archive_entry_pathname(r->e);
	r->path = xstrdup(name ? name : "");
	size_t len = strlen(r->path);
	while (len > 1 && r->path[len - 1] == '/')
		r->path[--len] = '\0';
	mode_t type = archive_entry_filetype(r->e);
	const char *hard = archive_entry_hardlink(r->e);
	r->m = (struct tree_tar_member){
		.kind = hard ? 'h' : type == AE_IFDIR ? 'd' : type == AE_IFREG ? 'f' :
		        type == AE_IFLNK ? 'l' : '?',
		.mode = (unsigned)archive_entry_perm(r->e) & 07777,
		.path = r->path,
		.link = hard ? hard : type == AE_IFLNK ? archive_entry_symlink(r->e) : NULL,
		.size = archive_entry_size(r->e),
	};
	if (r->m.kind == 'l' && !r->m.link)
		r->m.kind = '?';
	*m = &r->m;
	return 1;
}

int tree_tar_read_data(struct tree_tar_reader *r, char sha256[DIGEST_HEX_LEN + 1],
                       long long *size, struct buf *keep, size_t keep_max)
{
	struct digest d;
	digest_init(&d);
	static char chunk[1 << 16];
	la_ssize_t n;
	*size = 0;
	while ((n = archive_read_data(r->a, chunk, sizeof(chunk))) > 0) {
		digest_update(&d, chunk, (size_t)n);
		*size += n;
		if (keep && keep->len + (size_t)n <= keep_max)
			buf_add(keep, chunk, (size_t)n);
	}
	digest_final(&d, sha256);
	return n < 0 ? -1 : 0;
}

const char *tree_tar_read_error(const struct tree_tar_reader *r)
{
	const char *why = archive_error_string(r->a);
	return why ? why : "unknown error";
}

void tree_tar_read_close(struct tree_tar_reader *r)
{
	if (!r)
		return;
	archive_read_free(r->a);
	free(r->path);
	free(r);
}

/* ---- the checked unpacker ---- */

int tree_entry_by_path(const void *a, const void *b)
{
	return strcmp(((const struct tree_entry *)a)->path, ((const struct tree_entry *)b)->path);
}

static int write_failed(struct archive *out, const char *dest, const char *name,
                        struct buf *why)
{
	int e = archive_errno(out);
	if (e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == ENOMEM || e == EMFILE ||
	    e == ENFILE) {
		error("cannot write '%s/%s': %s", dest, name, archive_error_string(out));
		return -1;
	}
	buf_printf(why, "the extractor refused '%s' of its data: %s", name,
	           archive_error_string(out));
	return 1;
}

int tree_tar_unpack(const char *archive_path, const char *dest, const struct tree_manifest *m,
                    struct buf *why)
{
	bool *seen = xcalloc(m->n + 1, sizeof(*seen));
	struct archive *out = archive_write_disk_new();
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	                               ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	                               ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS |
	                               ARCHIVE_EXTRACT_NO_OVERWRITE);
	int rc = -1;
	char *unreadable = NULL;
	struct tree_tar_reader *in = NULL;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(dest) < 0) {
		error("cannot enter '%s':", dest);
		goto out;
	}
	if (!(in = tree_tar_read_open(archive_path, true, &unreadable))) {
		buf_printf(why, "its data cannot be read: %s", unreadable);
		rc = 1;
		goto back;
	}
	const struct tree_tar_member *mem;
	int got;
	while ((got = tree_tar_read_next(in, &mem)) > 0) {
		struct tree_entry key = {.path = (char *)mem->path};
		const struct tree_entry *it = !m->n ? NULL : bsearch(&key, m->entries, m->n,
		                                                     sizeof(key), tree_entry_by_path);
		bool *it_seen = it ? &seen[it - m->entries] : NULL;
		bool fits = it && !*it_seen && it->kind == mem->kind &&
		            (it->kind == 'd' || (it->kind == 'f' && mem->size == it->size) ||
		             (it->kind == 'l' && !strcmp(mem->link, it->value)));
		if (!fits) {
			buf_printf(why, "its data holds '%s', which the signed manifest %s", mem->path,
			           !it ? "does not list" : *it_seen ? "lists once" :
			           "lists with another type, size or link target");
			rc = 1;
			goto back;
		}
		*it_seen = true;
		const char *name = archive_entry_pathname(in->e);
		if (archive_write_header(out, in->e) != ARCHIVE_OK) {
			rc = write_failed(out, dest, name, why);
			goto back;
		}
		const void *block;
		size_t size;
		la_int64_t offset;
		int r;
		while ((r = archive_read_data_block(in->a, &block, &size, &offset)) == ARCHIVE_OK)
			if (archive_write_data_block(out, block, size, offset) < ARCHIVE_OK) {
				rc = write_failed(out, dest, name, why);
				goto back;
			}
		if (r != ARCHIVE_EOF) {
			buf_printf(why, "its data is damaged at '%s': %s", name, tree_tar_read_error(in));
			rc = 1;
			goto back;
		}
		/* a warning here is a size or mode that could not be set: not a complete file */
		if (archive_write_finish_entry(out) != ARCHIVE_OK) {
			rc = write_failed(out, dest, name, why);
			goto back;
		}
	}
	if (got < 0) {
		buf_printf(why, "its data is damaged: %s", tree_tar_read_error(in));
		rc = 1;
		goto back;
	}
	if (archive_write_close(out) != ARCHIVE_OK)
		error("cannot finish '%s': %s", dest, archive_error_string(out));
	else
		rc = 0;
back:
	if (fchdir(cwd) < 0) {
		error("cannot return to the working directory:");
		rc = -1;
	}
out:
	if (cwd >= 0)
		close(cwd);
	tree_tar_read_close(in);
	archive_write_free(out);
	free(unreadable);
	free(seen);
	return rc;
}
