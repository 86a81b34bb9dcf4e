/* cache: stage results, their manifests, checks, union into a sysroot, prune. See cache.h. */
#define _GNU_SOURCE
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"


char *cache_result_dir(const char *dir, const char *key)
{
	return path_join(dir, key);
}

char *cache_result_manifest(const char *dir, const char *key)
{
	return xasprintf("%s/%s/manifest", dir, key);
}

char *cache_result_files(const char *dir, const char *key)
{
	return xasprintf("%s/%s/files", dir, key);
}

char *cache_scratch_dir(const char *dir, const char *what, const char *key)
{
	return xasprintf("%s/.tmp-%s-%s-%ld", dir, what, key, (long)getpid());
}

static char *result_file(const char *dir, const char *key, const char *name)
{
	return xasprintf("%s/%s/%s", dir, key, name);
}

/* parse_entries for the cache's own manifests: a problem is an error. */
static int parse_manifest(const char *path, char *text, const char *files, const char *owner,
                          struct tree_entry **out, size_t *n, size_t *cap)
{
	char *why = NULL;
	int rc = tree_manifest_parse_entries(path, text, files, owner, out, n, cap, &why);
	if (rc < 0)
		error("%s", why);
	free(why);
	return rc;
}

/* The first line where two manifests differ, for the warning. */
static char *first_difference(const char *want, const char *have)
{
	while (*want && *want == *have) {
		const char *a = strchr(want, '\n'), *b = strchr(have, '\n');
		if (!a || !b || a - want != b - have || strncmp(want, have, (size_t)(a - want)))
			break;
		want = a + 1;
		have = b + 1;
	}
	size_t a = strcspn(want, "\n"), b = strcspn(have, "\n");
	return xasprintf("expected '%.*s', found '%.*s'", (int)a, want, (int)b, have);
}

/* ---- the stat record (cache.h): what a use compares instead of a full check ---- */

int cache_record_settle = CACHE_RECORD_SETTLE;

#define RECORD_HEADER "crossroot-checked 1\n"
#define RECORD_DEPTH 64   /* deeper trees are checked in full every time */

struct recorded {
	char kind;                  /* 'm', 'o', 'd', 'f' ('l' entries are not recorded) */
	unsigned long long ino;
	long long sec, nsec, size;
	unsigned mode;
	char *path;                 /* relative to files/; "." for files/ itself */
};

static void record_line(struct buf *b, char kind, const struct stat *st, const char *path)
{
	long long size = kind == 'd' ? 0 : (long long)st->st_size;
	buf_printf(b, "%c\t%llu\t%lld\t%ld\t%lld", kind, (unsigned long long)st->st_ino,
	           (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, size);
	if (path)
		buf_printf(b, "\t%o\t%s", (unsigned)(st->st_mode & 07777), path);
	buf_puts(b, "\n");
}

static bool same_stat(const struct recorded *r, const struct stat *st)
{
	bool type = r->kind == 'd' ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode);
	return type && r->ino == (unsigned long long)st->st_ino &&
	       r->sec == (long long)st->st_ctim.tv_sec && r->nsec == st->st_ctim.tv_nsec &&
	       (r->kind == 'd' || r->size == (long long)st->st_size) &&
	       (r->kind == 'm' || r->kind == 'o' || r->mode == (unsigned)(st->st_mode & 07777));
}

/* lstat, through directory descriptors and never following a link, every directory and
 * file of `e` (manifest order: parents first, each directory's entries together), below the
 * directory `files`, whose own stat goes to *root. st[i] is e[i]'s (links: untouched).
 * -1: something is not where or what the list says, or the order is not a walk's. */
static int stat_entries(const char *files, const struct recorded *e, size_t n,
                        struct stat *root, struct stat *st)
{
	int fds[RECORD_DEPTH];
	size_t lens[RECORD_DEPTH];
	const char *paths[RECORD_DEPTH];
	size_t depth = 1;
	int rc = 0;
	fds[0] = open(files, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	lens[0] = 0;
	paths[0] = "";
	if (fds[0] < 0 || fstat(fds[0], root) < 0)
		rc = -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (e[i].kind != 'd' && e[i].kind != 'f')
			continue;
		const char *slash = strrchr(e[i].path, '/');
		size_t parent = slash ? (size_t)(slash - e[i].path) : 0;
		while (depth > 1 && !(lens[depth - 1] == parent &&
		                      strncmp(paths[depth - 1], e[i].path, parent) == 0))
			close(fds[--depth]);
		if (lens[depth - 1] != parent) {
			rc = -1;   /* its directory came before, and was left: not a walk's order */
			break;
		}
		const char *name = slash ? slash + 1 : e[i].path;
		if (e[i].kind == 'f') {
			if (fstatat(fds[depth - 1], name, &st[i], AT_SYMLINK_NOFOLLOW) < 0)
				rc = -1;
			continue;
		}
		int fd = depth < RECORD_DEPTH ? openat(fds[depth - 1], name, O_RDONLY | O_DIRECTORY |
		                                       O_NOFOLLOW | O_CLOEXEC) : -1;
		if (fd < 0 || fstat(fd, &st[i]) < 0) {
			if (fd >= 0)
				close(fd);
			rc = -1;
			break;
		}
		fds[depth] = fd;
		lens[depth] = strlen(e[i].path);
		paths[depth] = e[i].path;
		depth++;
	}
	while (depth > 0)
		if (fds[--depth] >= 0)
			close(fds[depth]);
	return rc;
}

/* Parse the record at `path`: its output id into `id`, its lines into *out (free with
 * free(); paths point into *text). -1: missing or malformed. */
static int read_record(const char *path, char **text, char id[DIGEST_HEX_LEN + 1],
                       struct recorded **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	*text = path_exists(path) ? read_file(path, NULL) : NULL;
	if (!*text || strncmp(*text, RECORD_HEADER, strlen(RECORD_HEADER)) != 0)
		return -1;
	char *line = *text + strlen(RECORD_HEADER);
	char *end = strchr(line, '\n');
	if (!end || end - line != DIGEST_HEX_LEN)
		return -1;
	memcpy(id, line, DIGEST_HEX_LEN);
	id[DIGEST_HEX_LEN] = '\0';
	size_t cap = 0;
	for (line = end + 1; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			return -1;
		*end = '\0';
		struct recorded r = {0};
		int used = 0;
		if (sscanf(line, "%c\t%llu\t%lld\t%lld\t%lld%n", &r.kind, &r.ino, &r.sec, &r.nsec,
		           &r.size, &used) != 5)
			return -1;
		if (r.kind == 'd' || r.kind == 'f') {
			char *tab = line + used;
			char *path_tab = *tab == '\t' ? strchr(tab + 1, '\t') : NULL;
			if (!path_tab)
				return -1;
			r.mode = (unsigned)strtoul(tab + 1, NULL, 8);
			r.path = path_tab + 1;
		} else if (r.kind != 'm' && r.kind != 'o') {
			return -1;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = r;
	}
	return 0;
}

/* Is the result as the record says (manifest, output, files/ and each entry unchanged)? */
static bool record_holds(const char *result, char output[DIGEST_HEX_LEN + 1])
{
	char *record = path_join(result, "checked"), *text = NULL;
	char *manifest = path_join(result, "manifest"), *output_path = path_join(result, "output");
	char *files = path_join(result, "files");
	struct recorded *e = NULL;
	size_t n = 0;
	char id[DIGEST_HEX_LEN + 1];
	bool holds = false;
	struct stat m, o, root;
	if (read_record(record, &text, id, &e, &n) == 0 && n >= 3 && e[0].kind == 'm' &&
	    e[1].kind == 'o' && e[2].kind == 'd' && strcmp(e[2].path, ".") == 0 &&
	    lstat(manifest, &m) == 0 && S_ISREG(m.st_mode) && same_stat(&e[0], &m) &&
	    lstat(output_path, &o) == 0 && S_ISREG(o.st_mode) && same_stat(&e[1], &o)) {
		struct stat *st = xcalloc(n, sizeof(*st));
		if (stat_entries(files, e + 3, n - 3, &root, st + 3) == 0 && same_stat(&e[2], &root)) {
			holds = true;
			for (size_t i = 3; i < n && holds; i++)
				holds = same_stat(&e[i], &st[i]);
		}
		free(st);
	}
	if (holds)
		memcpy(output, id, sizeof(id));
	free(e);
	free(text);
	free(record);
	free(manifest);
	free(output_path);
	free(files);
	return holds;
}

static bool settled(const struct stat *st, time_t now)
{
	return st->st_ctim.tv_sec < now - cache_record_settle ||
	       (cache_record_settle == 0 && st->st_ctim.tv_sec <= now);
}

/* After a full check passed: record what was checked (`entries`: the manifest's, parsed),
 * unless something changed too recently to trust its ctime. Failures only lose the record. */
static void record_check(const char *result, const char *id, const struct tree_entry *entries,
                         size_t n)
{
	char *manifest = path_join(result, "manifest"), *output_path = path_join(result, "output");
	char *files = path_join(result, "files"), *record = path_join(result, "checked");
	struct recorded *e = xcalloc(n + 1, sizeof(*e));
	struct stat *st = xcalloc(n + 1, sizeof(*st));
	struct stat m, o, root;
	struct buf b = {0};
	time_t now = time(NULL);
	/* the manifest's order (entries came sorted by path) */
	for (size_t i = 0; i < n; i++) {
		e[entries[i].order] = (struct recorded){.kind = entries[i].kind,
		                                        .path = entries[i].path};
	}
	bool ok = lstat(manifest, &m) == 0 && lstat(output_path, &o) == 0 &&
	          stat_entries(files, e, n, &root, st) == 0 && settled(&m, now) &&
	          settled(&o, now) && settled(&root, now);
	if (ok) {
		buf_puts(&b, RECORD_HEADER);
		buf_printf(&b, "%s\n", id);
		record_line(&b, 'm', &m, NULL);
		record_line(&b, 'o', &o, NULL);
		record_line(&b, 'd', &root, ".");
	}
	for (size_t i = 0; i < n && ok; i++) {
		if (e[i].kind != 'd' && e[i].kind != 'f')
			continue;
		ok = settled(&st[i], now);
		record_line(&b, e[i].kind, &st[i], e[i].path);
	}
	if (ok)
		write_file_atomic(record, b.s, b.len, 0644);
	else
		unlink(record);
	buf_release(&b);
	free(e);
	free(st);
	free(manifest);
	free(output_path);
	free(files);
	free(record);
}

int cache_lookup(const char *dir, const char *key, bool verify, char output[DIGEST_HEX_LEN + 1])
{
	char *result = cache_result_dir(dir, key);
	char *manifest = result_file(dir, key, "manifest");
	char *output_path = result_file(dir, key, "output");
	char *files = result_file(dir, key, "files");
	char *text = NULL, *out_text = NULL, *problem = NULL;
	struct tree_entry *entries = NULL;
	size_t n = 0, cap = 0;
	struct tree_scan w = {0};
	int rc = 0;
	struct stat st;
	if (lstat(result, &st) < 0)
		goto out;   /* not there: nothing to say */
	if (!verify && record_holds(result, output)) {
		rc = 1;   /* nothing changed since the last full check */
		utimensat(AT_FDCWD, result, NULL, 0);
		goto out;
	}
	if (lstat(manifest, &st) < 0 || !(text = read_file(manifest, NULL))) {
		problem = xstrdup("its manifest is missing");
		goto out;
	}
	w.published = st.st_ctim;
	out_text = path_exists(output_path) ? read_file(output_path, NULL) : NULL;
	char id[DIGEST_HEX_LEN + 1];
	struct digest d;
	digest_init(&d);
	digest_update(&d, text, strlen(text));
	digest_final(&d, id);
	if (!out_text || strncmp(out_text, id, DIGEST_HEX_LEN) != 0) {
		problem = xstrdup("its output id does not match its manifest");
		goto out;
	}
	if (!is_dir(files)) {
		problem = xstrdup("its files are missing");
		goto out;
	}
	char *copy = xstrdup(text);
	int parsed = parse_manifest(manifest, copy, NULL, NULL, &entries, &n, &cap);
	free(copy);
	if (parsed < 0) {
		problem = xstrdup("its manifest is malformed");
		goto out;
	}
	qsort(entries, n, sizeof(*entries), tree_entry_compare);
	w.known = verify ? NULL : entries;
	w.n_known = n;
	buf_puts(&w.out, TREE_MANIFEST_HEADER);
	if (tree_scan(&w, files) < 0) {
		problem = xstrdup("its files cannot be read");
		goto out;
	}
	if (strcmp(w.out.s, text) != 0) {
		problem = first_difference(text, w.out.s);
		goto out;
	}
	memcpy(output, id, sizeof(id));
	rc = 1;
	utimensat(AT_FDCWD, result, NULL, 0);   /* recently used: `prune` keeps it */
	record_check(result, id, entries, n);
out:
	if (problem) {
		warn("stage result '%s' fails its check (%s): removed, it will be rebuilt", result,
		     problem);
		if (remove_tree(result) < 0)
			rc = -1;
	}
	free(problem);
	tree_entries_free(entries, n);
	buf_release(&w.out);
	free(text);
	free(out_text);
	free(result);
	free(manifest);
	free(output_path);
	free(files);
	return rc;
}

static int write_record(const char *dir, const char *name, const char *text)
{
	char *path = path_join(dir, name);
	int rc = write_file_atomic(path, text, strlen(text), 0644);
	free(path);
	return rc;
}

/* Publish `destdir` under `key`; with `expect` (a manifest made elsewhere), only if the tree's
 * manifest equals it: else nothing is published, *why says where they differ, and 0 is
 * returned. */
static int publish(const char *dir, const char *key, const char *destdir, const char *expect,
                   char **why, const struct strlist *inputs, const char *owner, double seconds,
                   char output[DIGEST_HEX_LEN + 1])
{
	char *tmp = xasprintf("%s/.tmp-%s-%ld", dir, key, (long)getpid());
	char *files = path_join(tmp, "files");
	char *result = cache_result_dir(dir, key);
	struct tree_scan w = {.normalise = true};
	struct buf lines = {0};
	int rc = -1;
	buf_puts(&w.out, TREE_MANIFEST_HEADER);
	if (remove_tree(tmp) < 0 || mkdir_p(tmp, 0755) < 0)
		goto out;
	/* a step may have replaced its ${destdir} with a link: never moved, never followed */
	char *whose = xasprintf("the stage '%s' left", owner && *owner ? owner : key);
	int dest_fd = tree_open(destdir, whose, false);
	free(whose);
	if (dest_fd < 0)
		goto out;
	close(dest_fd);
	if (rename(destdir, files) < 0) {
		/* the cache may live on another file system than the work directory */
		if (errno != EXDEV || copy_tree(destdir, files, false) < 0) {
			error("cannot move '%s' to '%s':", destdir, files);
			goto out;
		}
		remove_tree(destdir);
	}
	if (tree_scan(&w, files) < 0)
		goto out;
	if (expect && strcmp(w.out.s, expect) != 0) {
		*why = first_difference(expect, w.out.s);
		remove_tree(tmp);
		rc = 0;
		goto out;
	}
	struct digest d;
	digest_init(&d);
	digest_update(&d, w.out.s, w.out.len);
	digest_final(&d, output);
	for (size_t i = 0; i < inputs->n; i++)
		buf_printf(&lines, "%s\n", inputs->v[i]);
	char *owner_line = xasprintf("%s\n", owner);
	char *seconds_line = xasprintf("%.1f\n", seconds);
	char *output_line = xasprintf("%s\n", output);
	/* the manifest last: its ctime is the moment from which any change is a tampering */
	rc = write_record(tmp, "inputs", lines.s ? lines.s : "") |
	     write_record(tmp, "owner", owner_line) | write_record(tmp, "seconds", seconds_line) |
	     write_record(tmp, "output", output_line) | write_record(tmp, "manifest", w.out.s);
	free(owner_line);
	free(seconds_line);
	free(output_line);
	if (rc < 0)
		goto out;
	if (rename(tmp, result) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			error("cannot rename '%s' to '%s':", tmp, result);
			rc = -1;
			goto out;
		}
		/* another crossroot published the same key first: use its result */
		remove_tree(tmp);
		if (cache_lookup(dir, key, false, output) != 1) {
			error("stage result '%s' vanished while publishing", result);
			rc = -1;
		}
	}
	if (expect && rc == 0)
		rc = 1;
out:
	if (rc < 0)
		remove_tree(tmp);
	buf_release(&w.out);
	buf_release(&lines);
	free(tmp);
	free(files);
	free(result);
	return rc;
}

int cache_publish(const char *dir, const char *key, const char *destdir,
                  const struct strlist *inputs, const char *owner, double seconds,
                  char output[DIGEST_HEX_LEN + 1])
{
	return publish(dir, key, destdir, NULL, NULL, inputs, owner, seconds, output);
}

int cache_publish_expected(const char *dir, const char *key, const char *destdir,
                           const char *manifest, char **why, const struct strlist *inputs,
                           const char *owner, char output[DIGEST_HEX_LEN + 1])
{
	*why = NULL;
	return publish(dir, key, destdir, manifest, why, inputs, owner, 0, output);
}

/* ---- union of results into a directory ---- */

/* A result that changed since it was checked: said, naming the stage, and removed, so the
 * next build makes (or pulls) it again. */
static void changed_since_check(const char *result, const char *owner, const char *what)
{
	error("the result of stage %s changed since it was checked: %s; removed from the stage "
	      "cache, the next build makes it again", owner, what);
	if (result && remove_tree(result) < 0)
		error("cannot remove '%s'", result);
}

int cache_union_add(struct cache_union *u, const char *dir, const char *key, const char *owner,
                    const char *output)
{
	char *result = cache_result_dir(dir, key);
	char *manifest = result_file(dir, key, "manifest");
	char *files = result_file(dir, key, "files");
	char *text = NULL;
	int rc = -1;
	if (!output || !digest_is_valid_hex(output)) {
		error("the result of stage %s was never checked: it cannot be copied", owner);
	} else if (!path_exists(manifest) || !is_dir(files)) {
		error("the result of stage %s (%s) is missing from the stage cache: run the build "
		      "again", owner, manifest);
	} else if ((text = read_file(manifest, NULL))) {
		char id[DIGEST_HEX_LEN + 1];
		struct digest d;
		digest_init(&d);
		digest_update(&d, text, strlen(text));
		digest_final(&d, id);
		if (strcmp(id, output) != 0) {
			char *what = xasprintf("its manifest is not the one of output %.12s", output);
			changed_since_check(result, owner, what);
			free(what);
		} else {
			rc = parse_manifest(manifest, text, files, owner, &u->entries, &u->n, &u->cap);
		}
	}
	if (rc == 0) {
		strlist_add(&u->results, owner);
		strlist_add(&u->results, result);
	}
	free(text);
	free(result);
	free(manifest);
	free(files);
	return rc;
}

void cache_union_release(struct cache_union *u)
{
	tree_entries_free(u->entries, u->n);
	strlist_release(&u->results);
	memset(u, 0, sizeof(*u));
}

static bool same_content(const struct tree_entry *a, const struct tree_entry *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == 'd')
		return true;
	return strcmp(a->value, b->value) == 0 && (a->kind == 'l' || a->mode == b->mode);
}

/* Copy all of `in` to `out`: a reflink where the file system shares blocks, else the bytes.
 * A short or failed write is an error (a full disk says so). */
static int copy_data(int in, int out, const char *to)
{
	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			break;
		/* plain copy */
		char chunk[1 << 16];
		for (;;) {
			ssize_t r = read(in, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return r < 0 ? (error("cannot read for '%s':", to), -1) : 0;
			if (write_all(out, chunk, (size_t)r, to) < 0)
				return -1;
		}
	}
	error("cannot write '%s':", to);
	return -1;
}

/* The result directory of the stage named `owner` (cache_union_add). */
static const char *result_of(const struct cache_union *u, const char *owner)
{
	for (size_t i = 0; i + 1 < u->results.n; i += 2)
		if (strcmp(u->results.v[i], owner) == 0)
			return u->results.v[i + 1];
	return NULL;
}

/* Open the directory that holds `rel` inside `rootfd`, never following a link. */
static int open_parent(int rootfd, const char *rel, const char **leaf)
{
	int fd = dup(rootfd);
	const char *p = rel;
	for (;;) {
		const char *slash = strchr(p, '/');
		if (!slash) {
			*leaf = p;
			return fd;
		}
		char *part = xstrndup(p, (size_t)(slash - p));
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(part);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p = slash + 1;
	}
}

/* Is the copy `out` (just written) what the manifest says of `e`? The copy is checked, not
 * the cached file: a cached file changed while it was copied cannot slip in. 1 or 0 (*what
 * says how it differs; free it), -1 if it cannot be read. */
static int copy_matches(int out, const char *to, const struct tree_entry *e, char **what)
{
	struct stat st;
	char hex[DIGEST_HEX_LEN + 1];
	if (lseek(out, 0, SEEK_SET) < 0 || fstat(out, &st) < 0 || digest_fd(out, to, hex) < 0) {
		error("cannot read back '%s':", to);
		return -1;
	}
	if ((long long)st.st_size == e->size && strcmp(hex, e->value) == 0)
		return 1;
	*what = xasprintf("'%s' has %lld bytes, sha256 %s; its manifest says %lld bytes, sha256 %s",
	                  e->path, (long long)st.st_size, hex, e->size, e->value);
	return 0;
}

static int install_entry(const struct cache_union *u, int rootfd, const char *dest,
                         const struct tree_entry *e)
{
	const char *leaf;
	int dirfd = open_parent(rootfd, e->path, &leaf);
	char *to = path_join(dest, e->path);
	int rc = -1;
	if (dirfd < 0) {
		error("cannot install '%s' (from stage %s): its directory is missing or a link:", to,
		      e->owner);
		free(to);
		return -1;
	}
	if (e->kind == 'd') {
		struct stat st;
		if (mkdirat(dirfd, leaf, 0755) == 0 ||
		    (errno == EEXIST && fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISDIR(st.st_mode)))
			rc = 0;
		else
			error("cannot create directory '%s':", to);
	} else if (e->kind == 'l') {
		if (symlinkat(e->value, dirfd, leaf) == 0)
			rc = 0;
		else
			error("cannot create link '%s':", to);
	} else {
		/* never blocked by a FIFO put in the file's place */
		int in = open(e->from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		int in_errno = errno;
		int out = in < 0 ? -1 : openat(dirfd, leaf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		                                             O_CLOEXEC, 0600);
		struct stat st;
		char *what = NULL;
		int matches = 0;
		if (in < 0 && (in_errno == ENOENT || in_errno == ELOOP || in_errno == ENXIO ||
		               in_errno == ENOTDIR)) {
			what = xasprintf("'%s' is missing or not a file", e->path);
			changed_since_check(result_of(u, e->owner), e->owner, what);
		} else if (in < 0) {
			errno = in_errno;
			error("cannot open '%s' (stage %s):", e->from, e->owner);
		} else if (out < 0) {
			error("cannot create '%s':", to);
		} else if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) ||
		           fcntl(in, F_SETFL, 0) < 0) {
			what = xasprintf("'%s' is not a file", e->path);
			changed_since_check(result_of(u, e->owner), e->owner, what);
		} else if (copy_data(in, out, to) == 0 &&
		           (matches = copy_matches(out, to, e, &what)) == 0) {
			changed_since_check(result_of(u, e->owner), e->owner, what);
		} else if (matches == 1) {
			if (fchmod(out, e->mode & 0755) < 0)
				error("cannot change the mode of '%s':", to);
			else if (close(out) < 0)
				error("cannot write '%s':", to);
			else
				rc = 0;
			out = -1;
		}
		free(what);
		if (in >= 0)
			close(in);
		if (out >= 0) {
			close(out);
			unlinkat(dirfd, leaf, 0);
		}
	}
	close(dirfd);
	free(to);
	return rc;
}

int cache_union_install(struct cache_union *u, const char *dest)
{
	qsort(u->entries, u->n, sizeof(*u->entries), tree_entry_compare);
	int rc = 0;
	for (size_t i = 1; i < u->n; i++) {
		const struct tree_entry *a = &u->entries[i - 1], *b = &u->entries[i];
		if (strcmp(a->path, b->path) == 0 && !same_content(a, b)) {
			error("'%s' is installed by stage %s and by stage %s, with different contents",
			      b->path, a->owner, b->owner);
			rc = -1;
		}
	}
	if (rc < 0)
		return -1;
	int rootfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0) {
		error("cannot open '%s':", dest);
		return -1;
	}
	for (size_t i = 0; i < u->n && rc == 0; i++) {
		if (i > 0 && strcmp(u->entries[i - 1].path, u->entries[i].path) == 0)
			continue;   /* the same content from two stages */
		rc = install_entry(u, rootfd, dest, &u->entries[i]);
	}
	/* directory modes last, deepest first, so a read-only directory does not block its own
	 * children */
	for (size_t i = u->n; i-- > 0 && rc == 0;) {
		const struct tree_entry *e = &u->entries[i];
		if (e->kind != 'd' || (e->mode & 0777) == 0755)
			continue;
		const char *leaf;
		int dirfd = open_parent(rootfd, e->path, &leaf);
		if (dirfd < 0 || fchmodat(dirfd, leaf, e->mode & 0755, 0) < 0) {
			error("cannot change the mode of '%s/%s':", dest, e->path);
			rc = -1;
		}
		if (dirfd >= 0)
			close(dirfd);
	}
	close(rootfd);
	return rc;
}

/* ---- source trees: the same record and check, for trees shared by stages ---- */

int cache_tree_record(const char *dir, const char *manifest)
{
	struct tree_scan w = {0};
	buf_puts(&w.out, TREE_MANIFEST_HEADER);
	int rc = tree_scan(&w, dir);
	if (rc == 0)
		rc = write_file_atomic(manifest, w.out.s, w.out.len, 0644);
	buf_release(&w.out);
	return rc;
}

int cache_tree_check(const char *dir, const char *manifest, bool verify)
{
	struct stat st;
	char *text = NULL;
	struct tree_entry *entries = NULL;
	size_t n = 0, cap = 0;
	struct tree_scan w = {0};
	int ok = 0;
	if (lstat(manifest, &st) < 0 || !is_dir(dir) || !(text = read_file(manifest, NULL)))
		goto out;
	char *copy = xstrdup(text);
	int parsed = parse_manifest(manifest, copy, NULL, NULL, &entries, &n, &cap);
	free(copy);
	if (parsed < 0)
		goto out;
	qsort(entries, n, sizeof(*entries), tree_entry_compare);
	w.known = verify ? NULL : entries;
	w.n_known = n;
	w.published = st.st_ctim;
	buf_puts(&w.out, TREE_MANIFEST_HEADER);
	if (tree_scan(&w, dir) == 0 && strcmp(w.out.s, text) == 0)
		ok = 1;
	else if (w.out.s) {
		char *why = first_difference(text, w.out.s);
		warn("source tree '%s' changed since it was extracted (%s): extracting it again", dir,
		     why);
		free(why);
	}
out:
	tree_entries_free(entries, n);
	buf_release(&w.out);
	free(text);
	return ok;
}

/* ---- locking, leftovers, prune ---- */

int cache_lock(const char *dir, bool exclusive, bool wait)
{
	if (mkdir_p(dir, 0755) < 0)
		return -1;
	char *path = path_join(dir, ".lock");
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot open '%s':", path);
		free(path);
		return -1;
	}
	int how = exclusive ? LOCK_EX : LOCK_SH;
	if (flock(fd, how | LOCK_NB) < 0) {
		if (!wait) {
			close(fd);
			free(path);
			return -2;
		}
		info("waiting for the stage cache '%s' (%s)", dir,
		     exclusive ? "builds are using it" : "a prune is running");
		if (flock(fd, how) < 0) {
			error("cannot lock '%s':", path);
			close(fd);
			free(path);
			return -1;
		}
	}
	free(path);
	return fd;
}

/* ".tmp-<key>-<pid>": is <pid> gone? */
static bool owner_gone(const char *name)
{
	const char *dash = strrchr(name, '-');
	long pid = dash ? atol(dash + 1) : 0;
	return pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

void cache_remove_leftovers(const char *dir)
{
	struct strlist names = {0};
	list_dir(dir, &names);
	for (size_t i = 0; i < names.n; i++)
		if (strncmp(names.v[i], ".tmp-", 5) == 0 && owner_gone(names.v[i])) {
			char *path = path_join(dir, names.v[i]);
			remove_tree(path);
			free(path);
		}
	strlist_release(&names);
}

struct prune_entry {
	char *key, *owner;
	double used;
	bool keep;
};

static int by_owner_then_newest(const void *a, const void *b)
{
	const struct prune_entry *x = a, *y = b;
	int c = strcmp(x->owner, y->owner);
	if (c)
		return c;
	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

static long long tree_size(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	long long total = S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
	if (S_ISDIR(st.st_mode)) {
		struct strlist names = {0};
		list_dir(path, &names);
		for (size_t i = 0; i < names.n; i++) {
			char *child = path_join(path, names.v[i]);
			total += tree_size(child);
			free(child);
		}
		strlist_release(&names);
	}
	return total;
}

static int remove_counted(const char *path, long long *freed)
{
	*freed += tree_size(path);
	return remove_tree(path);
}

int cache_prune(const char *dir, const char *downloads, const struct strlist *keep_keys,
                const struct strlist *pins, int keep, bool wait)
{
	int lock = cache_lock(dir, true, wait);
	if (lock == -2) {
		error("the stage cache '%s' is in use by a build; prune when it ends, or use --wait",
		      dir);
		return -2;
	}
	if (lock < 0)
		return -1;
	struct strlist names = {0};
	if (list_dir(dir, &names) < 0) {
		close(lock);
		return -1;
	}
	struct prune_entry *e = xcalloc(names.n + 1, sizeof(*e));
	size_t n = 0, removed = 0, dropped = 0;
	long long freed = 0;
	int rc = 0;
	for (size_t i = 0; i < names.n; i++) {
		char *path = path_join(dir, names.v[i]);
		if (strncmp(names.v[i], ".tmp-", 5) == 0) {   /* no build runs: all are leftovers */
			rc |= remove_counted(path, &freed);
		} else if (names.v[i][0] != '.') {
			char *owner_path = path_join(path, "owner");
			char *owner = path_exists(owner_path) ? read_file(owner_path, NULL) : NULL;
			struct stat st;
			e[n].key = xstrdup(names.v[i]);
			e[n].owner = owner ? owner : xstrdup("? ?");
			e[n].used = stat(path, &st) == 0 ? (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 : 0;
			e[n].keep = strlist_has(keep_keys, names.v[i]);
			n++;
			free(owner_path);
		}
		free(path);
	}
	qsort(e, n, sizeof(*e), by_owner_then_newest);
	for (size_t i = 0, rank = 0; i < n; i++) {
		rank = i > 0 && strcmp(e[i].owner, e[i - 1].owner) == 0 ? rank + 1 : 0;
		if (e[i].keep || (int)rank < keep)
			continue;
		char *path = path_join(dir, e[i].key);
		rc |= remove_counted(path, &freed);
		removed++;
		free(path);
	}
	struct strlist files = {0};
	list_dir(downloads, &files);
	for (size_t i = 0; i < files.n; i++) {
		if (!digest_is_valid_hex(files.v[i]) || strlist_has(pins, files.v[i]))
			continue;
		char *path = path_join(downloads, files.v[i]);
		char *record = xasprintf("%s/verified/%s", downloads, files.v[i]);
		rc |= remove_counted(path, &freed);
		remove_tree(record);   /* the download's stat record (fetch.h) */
		dropped++;
		free(path);
		free(record);
	}
	char size[32];
	info("pruned %zu stage results and %zu downloads, freed %s; kept %zu stage results "
	     "(every result the current recipes need, and up to %d per target and stage)",
	     removed, dropped, format_size((double)freed, size), n - removed, keep);
	for (size_t i = 0; i < n; i++) {
		free(e[i].key);
		free(e[i].owner);
	}
	free(e);
	strlist_release(&names);
	strlist_release(&files);
	close(lock);
	return rc ? -1 : 0;
}
