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

/* Remove `strip` leading components; NULL if nothing is left. Returns a malloc'd string. */
static char *strip_path(const char *path, int strip)
{
	while (*path == '.' && path[1] == '/')
		path += 2;
	for (int i = 0; i < strip; i++) {
		const char *slash = strchr(path, '/');
		if (!slash)
			return NULL;
		path = slash + 1;
		while (*path == '/')
			path++;
	}
	size_t n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	return n ? xstrndup(path, n) : NULL;
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

/* Does a symlink at `path` with `target` stay inside the root? Checked lexically. */
static int symlink_stays_inside(const char *path, const char *target)
{
	if (target[0] == '/')
		return 0;
	int depth = 0;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			depth++;
	for (const char *p = target; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			depth--;
		else if (n > 0 && !(n == 1 && p[0] == '.'))
			depth++;
		if (depth < 0)
			return 0;
		p += n;
		while (*p == '/')
			p++;
	}
	return 1;
}

static int wanted(const struct extract_options *o, const char *path)
{
	if (o->exclude)
		for (size_t i = 0; i < o->exclude->n; i++)
			if (extract_path_matches(o->exclude->v[i], path))
				return 0;
	if (!o->include || o->include->n == 0)
		return 1;
	for (size_t i = 0; i < o->include->n; i++)
		if (extract_path_matches(o->include->v[i], path))
			return 1;
	return 0;
}

static int copy_data(struct archive *in, struct archive *out, long long *bytes, long long max)
{
	for (;;) {
		const void *block;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(in, &block, &size, &offset);
		if (r == ARCHIVE_EOF)
			return ARCHIVE_OK;
		if (r < ARCHIVE_WARN)
			return r;
		*bytes += (long long)size;
		if (*bytes > max)
			return ARCHIVE_FATAL - 1;   /* our own code: limit exceeded */
		if (archive_write_data_block(out, block, size, offset) < ARCHIVE_WARN)
			return ARCHIVE_FATAL;
	}
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

int extract_archive(const struct extract_options *o)
{
	size_t max_entries = o->max_entries ? o->max_entries : 1000000;
	long long max_bytes = o->max_bytes ? o->max_bytes : 16LL << 30;
	if (path_exists(o->dest)) {
		error("cannot extract '%s': '%s' already exists", o->archive, o->dest);
		return -1;
	}
	char *tmp = xasprintf("%s.tmp.%ld", o->dest, (long)getpid());
	remove_tree(tmp);
	if (mkdir_p(tmp, 0755) < 0) {
		free(tmp);
		return -1;
	}
	int rc = -1;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct archive *in = archive_read_new();
	struct archive *out = archive_write_disk_new();
	if (is_xz(o->archive) && xz_available()) {
		/* libarchive decodes xz on one core; xz itself uses them all on multi-block streams
		 * (Debian's big orig tarballs are). libarchive still parses every entry. */
		static const char xz_magic[] = "\xfd" "7zXZ";
		archive_read_support_filter_program_signature(in, "xz -dc -T0", xz_magic, 6);
	} else {
		archive_read_support_filter_all(in);
	}
	archive_read_support_format_all(in);
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
	                               ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	                               ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	                               ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	if (cwd < 0 || chdir(tmp) < 0) {
		error("cannot enter '%s':", tmp);
		goto out;
	}
	if (archive_read_open_filename(in, o->archive, 1 << 17) != ARCHIVE_OK) {
		error("cannot read archive '%s': %s", o->archive, archive_error_string(in));
		goto out;
	}
	size_t entries = 0, written = 0;
	long long bytes = 0;
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		if (interrupted)
			goto out;
		const char *name = archive_entry_pathname(e);
		if (!name)
			continue;
		if (++entries > max_entries) {
			error("archive '%s': more than %zu entries; refusing it", o->archive, max_entries);
			goto out;
		}
		if (name[0] == '/' || has_dotdot(name)) {
			error("archive '%s': entry '%s' %s; refusing the archive", o->archive, name,
			      name[0] == '/' ? "has an absolute path" : "has a '..' component");
			goto out;
		}
		mode_t type = archive_entry_filetype(e);
		const char *hard = archive_entry_hardlink(e);
		if (hard)
			type = AE_IFREG;   /* tar hard links may carry no file type of their own */
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
			error("archive '%s': entry '%s' is a %s; refusing the archive", o->archive, name,
			      type == AE_IFCHR || type == AE_IFBLK ? "device node" :
			      type == AE_IFIFO ? "FIFO" : type == AE_IFSOCK ? "socket" : "special file");
			goto out;
		}
		if (archive_entry_mode(e) & (S_ISUID | S_ISGID)) {
			error("archive '%s': entry '%s' has set-user-ID or set-group-ID bits; refusing "
			      "the archive", o->archive, name);
			goto out;
		}
		char *path = strip_path(name, o->strip);
		if (!path)
			continue;
		const char *sym = type == AE_IFLNK ? archive_entry_symlink(e) : NULL;
		char *hard_stripped = NULL;
		if (hard) {
			hard_stripped = strip_path(hard, o->strip);
			if (!hard_stripped || hard[0] == '/' || has_dotdot(hard)) {
				error("archive '%s': entry '%s' is a hard link to '%s' outside the "
				      "extraction directory; refusing the archive", o->archive, name, hard);
				free(path);
				free(hard_stripped);
				goto out;
			}
		}
		if (sym && !symlink_stays_inside(path, sym)) {
			error("archive '%s': entry '%s' is a symbolic link to '%s', outside the "
			      "extraction directory; refusing the archive", o->archive, name, sym);
			free(path);
			goto out;
		}
		if (!wanted(o, path)) {
			free(path);
			free(hard_stripped);
			continue;
		}
		archive_entry_set_pathname(e, path);
		if (hard_stripped)
			archive_entry_set_hardlink(e, hard_stripped);
		free(hard_stripped);
		r = archive_write_header(out, e);
		if (r < ARCHIVE_WARN) {
			error("archive '%s': cannot write entry '%s': %s", o->archive, name,
			      archive_error_string(out));
			free(path);
			goto out;
		}
		if (archive_entry_size(e) > 0) {
			r = copy_data(in, out, &bytes, max_bytes);
			if (r == ARCHIVE_FATAL - 1) {
				error("archive '%s': entry '%s' takes the extracted size over %lld bytes; "
				      "refusing the archive", o->archive, name, max_bytes);
				free(path);
				goto out;
			}
			if (r != ARCHIVE_OK) {
				error("archive '%s': entry '%s': %s", o->archive, name,
				      archive_error_string(r == ARCHIVE_FATAL ? out : in));
				free(path);
				goto out;
			}
		}
		if (archive_write_finish_entry(out) < ARCHIVE_WARN) {
			error("archive '%s': cannot finish entry '%s': %s", o->archive, name,
			      archive_error_string(out));
			free(path);
			goto out;
		}
		free(path);
		written++;
	}
	if (r != ARCHIVE_EOF) {
		error("archive '%s' is damaged: %s", o->archive, archive_error_string(in));
		goto out;
	}
	if (archive_write_close(out) != ARCHIVE_OK) {
		error("archive '%s': %s", o->archive, archive_error_string(out));
		goto out;
	}
	if (written == 0) {
		error("archive '%s': nothing matched the paths to extract", o->archive);
		goto out;
	}
	rc = 0;
out:
	archive_read_free(in);
	archive_write_free(out);
	if (cwd >= 0) {
		if (fchdir(cwd) < 0)
			error("cannot return to the working directory:");
		close(cwd);
	}
	if (rc == 0 && rename(tmp, o->dest) < 0) {
		error("cannot rename '%s' to '%s':", tmp, o->dest);
		rc = -1;
	}
	if (rc != 0)
		remove_tree(tmp);
	free(tmp);
	return rc;
}
