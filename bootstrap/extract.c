/* extract: secure, partial, atomic archive extraction with libarchive. See extract.h. */
#define _GNU_SOURCE
#include "extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "digest.h"

int extract_path_matches(const char *pattern, const char *path)
{
	char *p = xstrdup(path);
	int matched = 0;
	/* Try the whole path, then each leading directory: "libcxx" matches "libcxx/src/x.cpp". */
	for (;;) {
		if (fnmatch(pattern, p, FNM_PATHNAME | FNM_PERIOD) == 0) {
			matched = 1;
			break;
		}
		char *slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(p);
	return matched;
}

/* An entry name as the file system will see it: `.` and empty components dropped, then
 * `strip` leading components removed. NULL if nothing is left. Returns a malloc'd string.
 * Names with `..` are refused before this (has_dotdot), so no component goes up. */
static char *normalize_path(const char *path, int strip)
{
	struct buf out = {0};
	int skipped = 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		bool keep = n > 0 && !(n == 1 && p[0] == '.');
		if (keep && skipped < strip)
			skipped++;
		else if (keep) {
			if (out.len)
				buf_puts(&out, "/");
			buf_add(&out, p, n);
		}
		p += n;
		while (*p == '/')
			p++;
	}
	if (!out.len) {
		buf_release(&out);
		return NULL;
	}
	return buf_detach(&out);
}

static int has_dotdot(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 1;
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

/* The symbolic links extracted so far, by normalised path: an open-addressing hash table,
 * because every entry's parent directories are looked up in it. */
struct link {
	char *path;         /* normalised, relative to the extraction directory */
	char *target;       /* as stored in the archive */
	char *name;         /* the entry's name in the archive, for messages */
};

struct links {
	struct link *slots;
	size_t cap, n;
};

static size_t hash_path(const char *s, size_t len)
{
	size_t h = 14695981039346656037u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

/* The link at the first `len` bytes of `path`, or NULL. */
static const struct link *links_find(const struct links *l, const char *path, size_t len)
{
	if (!l->n)
		return NULL;
	for (size_t i = hash_path(path, len) & (l->cap - 1);; i = (i + 1) & (l->cap - 1)) {
		const struct link *k = &l->slots[i];
		if (!k->path)
			return NULL;
		if (strncmp(k->path, path, len) == 0 && k->path[len] == '\0')
			return k;
	}
}

static void links_put(struct links *l, struct link k)
{
	if (2 * (l->n + 1) > l->cap) {
		struct links grown = {xcalloc(l->cap ? 2 * l->cap : 64, sizeof(struct link)),
		                      l->cap ? 2 * l->cap : 64, 0};
		for (size_t i = 0; i < l->cap; i++)
			if (l->slots[i].path)
				links_put(&grown, l->slots[i]);
		free(l->slots);
		*l = grown;
	}
	size_t i = hash_path(k.path, strlen(k.path)) & (l->cap - 1);
	while (l->slots[i].path)
		i = (i + 1) & (l->cap - 1);
	l->slots[i] = k;
	l->n++;
}

static void links_release(struct links *l)
{
	for (size_t i = 0; i < l->cap; i++) {
		free(l->slots[i].path);
		free(l->slots[i].target);
		free(l->slots[i].name);
	}
	free(l->slots);
	memset(l, 0, sizeof(*l));
}

/* The extracted link that is a parent directory of `path` (something would be written
 * through it), or NULL. */
static const struct link *link_above(const struct links *l, const char *path)
{
	for (const char *slash = strchr(path, '/'); slash && l->n; slash = strchr(slash + 1, '/')) {
		const struct link *k = links_find(l, path, (size_t)(slash - path));
		if (k)
			return k;
	}
	return NULL;
}

/* Does `target`, read in directory `dir` ("" for the root), stay inside the root? Resolved
 * as the kernel would: components one by one, `..` going up from where the walk really is,
 * every extracted link on the way replaced by its own target (at most 40 of them, as
 * Linux's ELOOP). Not by counting slashes: `a -> .` makes `a/a/a/../../..` leave. */
enum reach { INSIDE, OUTSIDE, LOOP };

static enum reach link_reach(const struct links *l, const char *dir, const char *target)
{
	if (target[0] == '/')
		return OUTSIDE;
	struct buf at = {0}, rest = {0};
	buf_puts(&at, dir);
	buf_puts(&rest, target);
	enum reach reach = INSIDE;
	int hops = 0;
	for (size_t p = 0; p < rest.len && reach == INSIDE;) {
		const char *c = rest.s + p;
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (!at.len)
				reach = OUTSIDE;
			char *slash = at.len ? strrchr(at.s, '/') : NULL;
			at.len = slash ? (size_t)(slash - at.s) : 0;
			if (at.s)
				at.s[at.len] = '\0';
		} else if (n > 0 && !(n == 1 && c[0] == '.')) {
			size_t parent = at.len;
			if (at.len)
				buf_puts(&at, "/");
			buf_add(&at, c, n);
			const struct link *k = links_find(l, at.s, at.len);
			if (k) {
				/* continue from the link's directory with its target, then the rest */
				if (++hops > 40 || k->target[0] == '/') {
					reach = hops > 40 ? LOOP : OUTSIDE;
					break;
				}
				at.len = parent;
				at.s[at.len] = '\0';
				char *more = xasprintf("%s/%s", k->target, c + n);
				buf_release(&rest);
				buf_puts(&rest, more);
				free(more);
				p = 0;
				continue;
			}
		}
		p += n;
		while (p < rest.len && rest.s[p] == '/')
			p++;
	}
	buf_release(&at);
	buf_release(&rest);
	return reach;
}

/* The directory part of a normalised path ("" at the top); malloc'd. */
static char *parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup("");
}

bool extract_wanted(const struct strlist *include, const struct strlist *exclude,
                    const char *path)
{
	if (exclude)
		for (size_t i = 0; i < exclude->n; i++)
			if (extract_path_matches(exclude->v[i], path))
				return false;
	if (!include || include->n == 0)
		return true;
	for (size_t i = 0; i < include->n; i++)
		if (extract_path_matches(include->v[i], path))
			return true;
	return false;
}

static int wanted(const struct extract_options *o, const char *path)
{
	return extract_wanted(o->include, o->exclude, path);
}

static bool is_xz(const char *path)
{
	unsigned char magic[6] = {0};
	FILE *f = fopen(path, "rbe");
	if (!f)
		return false;
	size_t n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == 6 && memcmp(magic, "\xfd" "7zXZ\0", 6) == 0;
}

static bool xz_available(void)
{
	const char *path = getenv("PATH");
	char *copy = xstrdup(path ? path : "/usr/bin:/bin");
	bool found = false;
	for (char *dir = strtok(copy, ":"); dir && !found; dir = strtok(NULL, ":")) {
		char *candidate = path_join(dir, "xz");
		found = access(candidate, X_OK) == 0;
		free(candidate);
	}
	free(copy);
	return found;
}

/* One extraction in progress. */
struct extraction {
	const struct extract_options *o;
	struct archive *in, *out;
	struct links links;
	size_t entries, written, max_entries;
	long long bytes;            /* data written */
	long long declared;         /* sizes of all entries so far, extracted or not */
	long long max_bytes;
};

/* Refuse what no archive of sources needs, whether it is extracted or not: absolute paths,
 * `..`, devices, FIFOs, sockets, set-id bits. Returns 0, or EXTRACT_REFUSED after error(). */
static int check_entry(struct extraction *x, struct archive_entry *e, const char *name,
                       mode_t type)
{
	const char *archive = x->o->archive;
	if (name[0] == '/' || has_dotdot(name)) {
		error("archive '%s': entry '%s' %s; refusing the archive", archive, name,
		      name[0] == '/' ? "has an absolute path" : "has a '..' component");
		return EXTRACT_REFUSED;
	}
	if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
		error("archive '%s': entry '%s' is a %s; refusing the archive", archive, name,
		      type == AE_IFCHR || type == AE_IFBLK ? "device node" :
		      type == AE_IFIFO ? "FIFO" : type == AE_IFSOCK ? "socket" : "special file");
		return EXTRACT_REFUSED;
	}
	if (archive_entry_mode(e) & (S_ISUID | S_ISGID)) {
		error("archive '%s': entry '%s' has set-user-ID or set-group-ID bits; refusing the "
		      "archive", archive, name);
		return EXTRACT_REFUSED;
	}
	const char *hard = archive_entry_hardlink(e);
	if (hard && (hard[0] == '/' || has_dotdot(hard))) {
		error("archive '%s': entry '%s' is a hard link to '%s' outside the extraction "
		      "directory; refusing the archive", archive, name, hard);
		return EXTRACT_REFUSED;
	}
	return 0;
}

static int refuse_link(struct extraction *x, const char *name, const char *target,
                       enum reach reach, const char *why)
{
	error("archive '%s': entry '%s' is a symbolic link to '%s', %s%s; refusing the archive",
	      x->o->archive, name, target, reach == LOOP ? "in a loop of more than 40 links" :
	      "outside the extraction directory", why);
	return EXTRACT_REFUSED;
}

/* Check a symbolic link entry at normalised `path` against the links extracted so far. */
static int check_symlink(struct extraction *x, const char *name, const char *path,
                         const char *target)
{
	char *dir = parent_of(path);
	enum reach reach = link_reach(&x->links, dir, target);
	free(dir);
	return reach == INSIDE ? 0 : refuse_link(x, name, target, reach, "");
}

/* Nothing is ever written through a link, nor replaces one, and a hard link may not reach
 * through one either: the file system then holds exactly the links the table knows. A hard
 * link to a symbolic link is a second symbolic link (link(2) does not follow it): its
 * target must stay inside from its own directory. Returns 0 or EXTRACT_REFUSED. */
static int check_written_links(struct extraction *x, const char *name, const char *path,
                               const char *hard, const char *hard_path)
{
	const char *archive = x->o->archive;
	const struct link *k = link_above(&x->links, path);
	if (k) {
		error("archive '%s': entry '%s' would be written through the symbolic link '%s'; "
		      "refusing the archive", archive, name, k->name);
		return EXTRACT_REFUSED;
	}
	if ((k = links_find(&x->links, path, strlen(path)))) {
		error("archive '%s': entry '%s' would replace the symbolic link '%s'; refusing the "
		      "archive", archive, name, k->name);
		return EXTRACT_REFUSED;
	}
	if (!hard_path)
		return 0;
	if ((k = link_above(&x->links, hard_path))) {
		error("archive '%s': entry '%s' is a hard link to '%s' through the symbolic link "
		      "'%s'; refusing the archive", archive, name, hard,
		      k->name);
		return EXTRACT_REFUSED;
	}
	return 0;
}

/* The bound on what the whole archive expands to, checked on each entry's declared size
 * before its data is decompressed (a bomb is refused at once), whether it is extracted or
 * not (skipping an entry decompresses it too). */
static int check_size(struct extraction *x, struct archive_entry *e)
{
	if (!archive_entry_size_is_set(e) || archive_entry_size(e) <= 0)
		return 0;
	long long size = archive_entry_size(e);
	x->declared += size;
	if (x->declared <= x->max_bytes)
		return 0;
	error("archive '%s': entry '%s' (%lld bytes) takes the extracted size over %lld bytes%s; "
	      "refusing the archive", x->o->archive, archive_entry_pathname(e), size, x->max_bytes,
	      x->o->max_bytes ? "" : " (the bound for an archive of its size)");
	return EXTRACT_REFUSED;
}

/* libarchive's words for a failed write name neither the file nor, always, the reason (a
 * full disk is "Write failed", and only a warning): say both. */
static void write_failed(struct extraction *x, const char *path)
{
	int err = archive_errno(x->out);
	error("archive '%s': cannot write '%s/%s': %s", x->o->archive, x->o->dest, path,
	      err ? strerror(err) : archive_error_string(x->out));
}

/* Write the data of the current entry. Every block must be written whole: libarchive reports
 * a failed or short write (ENOSPC) as ARCHIVE_WARN, and finishing the entry would then
 * extend the file with zeros to its size. Returns 0, or EXTRACT_REFUSED (damaged, over the
 * bound) or EXTRACT_FAILED (the write) after error(). */
static int copy_entry_data(struct extraction *x, const char *name, const char *path)
{
	for (;;) {
		const void *block;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(x->in, &block, &size, &offset);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN) {
			error("archive '%s': entry '%s': %s", x->o->archive, name,
			      archive_error_string(x->in));
			return EXTRACT_REFUSED;
		}
		/* sizes may be missing or wrong (zip, damaged headers): count the bytes too */
		x->bytes += (long long)size;
		if (x->bytes > x->max_bytes) {
			error("archive '%s': entry '%s' takes the extracted size over %lld bytes; "
			      "refusing the archive", x->o->archive, name, x->max_bytes);
			return EXTRACT_REFUSED;
		}
		if (archive_write_data_block(x->out, block, size, offset) != ARCHIVE_OK) {
			write_failed(x, path);
			return EXTRACT_FAILED;
		}
	}
}

/* The mode an entry gets: steps run as another user (nobody, as root) and only read source
 * trees, so a directory is 0755 and a file readable by all, executable by all if by anyone,
 * writable by its owner at most (a tarball's 0700 directory cannot lock a step out, nor its
 * 0666 file be changed by another user). Set-id bits were refused before. */
static mode_t source_mode(mode_t perm, bool directory)
{
	if (directory)
		return 0755;
	return (perm & 0200) | 0444 | (perm & 0111 ? 0111 : 0);
}

/* Extract one entry whose header was just read: check, then write (or skip). */
static int extract_entry(struct extraction *x, struct archive_entry *e)
{
	const struct extract_options *o = x->o;
	if (!archive_entry_pathname(e))
		return 0;
	if (++x->entries > x->max_entries) {
		error("archive '%s': more than %zu entries; refusing it", o->archive, x->max_entries);
		return EXTRACT_REFUSED;
	}
	mode_t type = archive_entry_filetype(e);
	const char *hard = archive_entry_hardlink(e);
	if (hard)
		type = AE_IFREG;   /* tar hard links may carry no file type of their own */
	if (check_entry(x, e, archive_entry_pathname(e), type) < 0 || check_size(x, e) < 0)
		return EXTRACT_REFUSED;
	/* copies: setting the entry's path and link below frees the strings they point to */
	char *name = xstrdup(archive_entry_pathname(e));
	char *path = normalize_path(name, o->strip);
	char *hard_path = hard ? normalize_path(hard, o->strip) : NULL;
	char *hard_name = hard ? xstrdup(hard) : NULL;
	const char *sym = type == AE_IFLNK ? archive_entry_symlink(e) : NULL;
	struct link record = {0};   /* the link this entry adds, if any */
	int rc = EXTRACT_REFUSED;
	if (!path) {
		rc = 0;
		goto out;
	}
	if (hard && !hard_path) {
		error("archive '%s': entry '%s' is a hard link to '%s' outside the extraction "
		      "directory; refusing the archive", o->archive, name, hard_name);
		goto out;
	}
	if (sym && check_symlink(x, name, path, sym) < 0)
		goto out;
	if (!wanted(o, path)) {
		rc = 0;
		goto out;
	}
	if (check_written_links(x, name, path, hard_name, hard_path) < 0)
		goto out;
	const struct link *target_link = hard_path ? links_find(&x->links, hard_path,
	                                                        strlen(hard_path)) : NULL;
	if (target_link) {
		char *dir = parent_of(path);
		enum reach reach = link_reach(&x->links, dir, target_link->target);
		free(dir);
		if (reach != INSIDE) {
			error("archive '%s': entry '%s' is a hard link to the symbolic link '%s' (to "
			      "'%s'), outside the extraction directory from '%s'; refusing the archive",
			      o->archive, name, target_link->name, target_link->target, path);
			goto out;
		}
		sym = target_link->target;
	}
	if (sym)
		record = (struct link){xstrdup(path), xstrdup(sym), xstrdup(name)};
	/* the archive passed every check: what fails from here is the file system */
	rc = EXTRACT_FAILED;
	archive_entry_set_pathname(e, path);
	if (hard_path)
		archive_entry_set_hardlink(e, hard_path);
	if (type != AE_IFLNK)
		archive_entry_set_perm(e, source_mode(archive_entry_perm(e), type == AE_IFDIR));
	if (archive_write_header(x->out, e) < ARCHIVE_WARN) {
		write_failed(x, path);
		goto out;
	}
	if (archive_entry_size(e) > 0 && (rc = copy_entry_data(x, name, path)) < 0)
		goto out;
	rc = EXTRACT_FAILED;
	/* a warning here is a size or mode that could not be set: not a complete file */
	if (archive_write_finish_entry(x->out) != ARCHIVE_OK) {
		write_failed(x, path);
		goto out;
	}
	if (record.path) {
		links_put(&x->links, record);
		record = (struct link){0};
	}
	x->written++;
	rc = 0;
out:
	free(record.path);
	free(record.target);
	free(record.name);
	free(hard_name);
	free(hard_path);
	free(path);
	free(name);
	return rc;
}

/* A link checked when it was extracted can lead outside through a link extracted after it
 * (`d/b -> c/../..`, then `d/c -> ..`): check them all again against the final set. */
static int check_final_links(struct extraction *x)
{
	for (size_t i = 0; i < x->links.cap; i++) {
		const struct link *k = &x->links.slots[i];
		if (!k->path)
			continue;
		char *dir = parent_of(k->path);
		enum reach reach = link_reach(&x->links, dir, k->target);
		free(dir);
		if (reach != INSIDE)
			return refuse_link(x, k->name, k->target, reach,
			                   " (through links extracted after it)");
	}
	return 0;
}

static struct archive *open_reader(const char *archive)
{
	struct archive *in = archive_read_new();
	if (is_xz(archive) && xz_available()) {
		/* libarchive decodes xz on one core; xz itself uses them all on multi-block streams
		 * (Debian's big orig tarballs are). libarchive still parses every entry. */
		static const char xz_magic[] = "\xfd" "7zXZ";
		archive_read_support_filter_program_signature(in, "xz -dc -T0", xz_magic, 6);
	} else {
		archive_read_support_filter_all(in);
	}
	archive_read_support_format_all(in);
	return in;
}

/* Read every entry into the current directory. Returns 0, EXTRACT_REFUSED or
 * EXTRACT_FAILED, after error(). */
static int extract_all(struct extraction *x)
{
	const char *archive = x->o->archive;
	if (archive_read_open_filename(x->in, archive, 1 << 17) != ARCHIVE_OK) {
		error("cannot read archive '%s': %s", archive, archive_error_string(x->in));
		return EXTRACT_REFUSED;
	}
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(x->in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		if (interrupted)
			return EXTRACT_FAILED;
		int rc = extract_entry(x, e);
		if (rc < 0)
			return rc;
	}
	if (r != ARCHIVE_EOF) {
		error("archive '%s' is damaged: %s", archive, archive_error_string(x->in));
		return EXTRACT_REFUSED;
	}
	if (check_final_links(x) < 0)
		return EXTRACT_REFUSED;
	if (archive_write_close(x->out) != ARCHIVE_OK) {
		error("archive '%s': %s", archive, archive_error_string(x->out));
		return EXTRACT_FAILED;
	}
	if (x->written == 0) {
		error("archive '%s': nothing matched the paths to extract", archive);
		return EXTRACT_REFUSED;
	}
	return 0;
}

long long extract_default_max_bytes(long long archive_size)
{
	long long bound = archive_size > EXTRACT_MAX_BYTES / EXTRACT_RATIO ? EXTRACT_MAX_BYTES :
	                  archive_size * EXTRACT_RATIO;
	return bound < EXTRACT_MIN_BYTES ? EXTRACT_MIN_BYTES : bound;
}

int extract_archive(const struct extract_options *o)
{
	struct extraction x = {
		.o = o,
		.max_entries = o->max_entries ? o->max_entries : 1000000,
		.max_bytes = o->max_bytes,
	};
	struct stat st;
	if (stat(o->archive, &st) < 0) {
		error("cannot read archive '%s':", o->archive);
		return EXTRACT_FAILED;
	}
	if (!x.max_bytes)
		x.max_bytes = extract_default_max_bytes((long long)st.st_size);
	if (path_exists(o->dest)) {
		error("cannot extract '%s': '%s' already exists", o->archive, o->dest);
		return EXTRACT_FAILED;
	}
	char *tmp = xasprintf("%s.tmp.%ld", o->dest, (long)getpid());
	remove_tree(tmp);
	if (mkdir_p(tmp, 0755) < 0) {
		free(tmp);
		return EXTRACT_FAILED;
	}
	int rc = EXTRACT_FAILED;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	x.in = open_reader(o->archive);
	x.out = archive_write_disk_new();
	archive_write_disk_set_options(x.out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
	                               ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	                               ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	                               ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	if (cwd < 0 || chdir(tmp) < 0)
		error("cannot enter '%s':", tmp);
	else
		rc = extract_all(&x);
	archive_read_free(x.in);
	archive_write_free(x.out);
	links_release(&x.links);
	if (cwd >= 0) {
		if (fchdir(cwd) < 0)
			error("cannot return to the working directory:");
		close(cwd);
	}
	if (rc == 0 && rename(tmp, o->dest) < 0) {
		error("cannot rename '%s' to '%s':", tmp, o->dest);
		rc = EXTRACT_FAILED;
	}
	if (rc != 0)
		remove_tree(tmp);
	free(tmp);
	return rc;
}

static const char *without_dot_slash(const char *path)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	return path;
}

int extract_member(const char *archive, const char *member, const char *out_path,
                   long long max_bytes, char *hex)
{
	struct archive *in = open_reader(archive);
	int rc = EXTRACT_REFUSED;
	int fd = -1;
	struct digest d;
	digest_init(&d);
	if (archive_read_open_filename(in, archive, 1 << 17) != ARCHIVE_OK) {
		error("cannot read archive '%s': %s", archive, archive_error_string(in));
		goto out;
	}
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		if (interrupted) {
			rc = EXTRACT_FAILED;
			goto out;
		}
		const char *name = archive_entry_pathname(e);
		if (!name || strcmp(without_dot_slash(name), without_dot_slash(member)) != 0)
			continue;
		if (archive_entry_filetype(e) != AE_IFREG) {
			error("archive '%s': member '%s' is not a regular file", archive, member);
			goto out;
		}
		if (archive_entry_size_is_set(e) && archive_entry_size(e) > max_bytes) {
			error("archive '%s': member '%s' is %lld bytes, over the limit of %lld", archive,
			      member, (long long)archive_entry_size(e), max_bytes);
			goto out;
		}
		fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			error("cannot create '%s':", out_path);
			rc = EXTRACT_FAILED;
			goto out;
		}
		long long total = 0;
		char block[1 << 16];
		la_ssize_t got;
		while ((got = archive_read_data(in, block, sizeof(block))) > 0) {
			total += got;
			if (total > max_bytes) {
				error("archive '%s': member '%s' is over the limit of %lld bytes", archive,
				      member, max_bytes);
				goto out;
			}
			digest_update(&d, block, (size_t)got);
			if (write_all(fd, block, (size_t)got, out_path) < 0) {
				rc = EXTRACT_FAILED;
				goto out;
			}
		}
		if (got < 0) {
			error("archive '%s': member '%s': %s", archive, member, archive_error_string(in));
			goto out;
		}
		if (fsync(fd) < 0 || close(fd) < 0) {
			fd = -1;
			error("cannot write '%s':", out_path);
			rc = EXTRACT_FAILED;
			goto out;
		}
		fd = -1;
		digest_final(&d, hex);
		rc = 0;
		goto out;
	}
	if (r != ARCHIVE_EOF)
		error("archive '%s' is damaged: %s", archive, archive_error_string(in));
	else
		error("archive '%s' has no member '%s'", archive, member);
out:
	digest_release(&d);
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(out_path);
	archive_read_free(in);
	return rc;
}
