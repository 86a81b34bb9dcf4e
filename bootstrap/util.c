/* util: error reporting, memory, strings and small file-system helpers.
 * See util.h for the contracts. */
#define _GNU_SOURCE
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile int interrupted;
static bool status_shown;

void status_show(const char *text)
{
	printf("\r\033[K%.*s", 200, text);
	fflush(stdout);
	status_shown = true;
}

void status_clear(void)
{
	if (!status_shown)
		return;
	printf("\r\033[K");
	fflush(stdout);
	status_shown = false;
}

char shell_unsafe_char(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) &&
		    !strchr("/._+-,=:@%", *s))
			return *s;
	return '\0';
}

static bool scheme_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '-' || c == '.';
}

char *url_redact(const char *text)
{
	struct buf out = {0};
	buf_puts(&out, "");
	const char *p = text;
	for (const char *sep; (sep = strstr(p, "://"));) {
		const char *host = sep + 3;
		/* the authority ends at the path, query, fragment, or where the text stops being
		 * a URL (space, quote, bracket) */
		size_t span = strcspn(host, "/?#\"' \t\n<>()[]{}`");
		const char *at = NULL;
		for (const char *c = host; c < host + span; c++)
			if (*c == '@')
				at = c;
		if (sep == p || !scheme_char(sep[-1]) || !at) {
			buf_add(&out, p, (size_t)(host - p));
			p = host;
			continue;
		}
		const char *colon = memchr(host, ':', (size_t)(at - host));
		buf_add(&out, p, (size_t)((colon ? colon + 1 : host) - p));
		buf_puts(&out, "***");
		p = at;
	}
	buf_puts(&out, p);
	return out.s;
}

void vprint_redacted(FILE *f, const char *fmt, va_list ap)
{
	char *text;
	if (vasprintf(&text, fmt, ap) < 0)
		abort();
	char *shown = url_redact(text);
	fputs(shown, f);
	free(shown);
	free(text);
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	int saved = errno;
	size_t n = strlen(fmt);

	status_clear();
	fflush(stdout);
	fprintf(stderr, "crossroot: %s", prefix);
	vprint_redacted(stderr, fmt, ap);
	if (n > 0 && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
	errno = saved;
}

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;
	status_clear();
	va_start(ap, fmt);
	vprint_redacted(stdout, fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t count, size_t n)
{
	void *p = calloc(count ? count : 1, n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_puts(b, s);
	free(s);
}

void buf_release(struct buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *buf_detach(struct buf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void strlist_take(struct strlist *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = s;
}

void strlist_add(struct strlist *l, const char *s)
{
	strlist_take(l, xstrdup(s));
}

bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strlist_sort(struct strlist *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), compare_strings);
}

void strlist_release(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			error("cannot create directory '%s':", p);
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST) {
		error("cannot create directory '%s':", p);
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP) {
		/* directories may have been made read-only by a build */
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		chmod(path, 0700);
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	}
	if (flag == FTW_DNR) {
		chmod(path, 0700);
		return 1; /* signal a retry */
	}
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (error("cannot remove '%s':", path), -1);
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0) {
			error("cannot remove '%s':", path);
			return -1;
		}
		return 0;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		int rc = nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
		if (rc == 0)
			return 0;
		if (rc < 0 && errno != ENOENT)
			break;
	}
	if (path_exists(path)) {
		error("cannot remove '%s':", path);
		return -1;
	}
	return 0;
}

int open_regular(const char *path, const char *what)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait forever */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		error("cannot open %s '%s':", what, path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		error("%s '%s' is not a regular file (%s)", what, path,
		      S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" :
		      S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
		      S_ISSOCK(st.st_mode) ? "a socket" : "another kind of file");
		close(fd);
		return -1;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

static char *read_fd(int fd, const char *path, size_t *len);

char *read_regular_file(const char *path, const char *what, size_t *len)
{
	int fd = open_regular(path, what);
	return fd < 0 ? NULL : read_fd(fd, path, len);
}

char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s':", path);
		return NULL;
	}
	return read_fd(fd, path, len);
}

static char *read_fd(int fd, const char *path, size_t *len)
{
	struct buf b = {0};
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error("cannot read '%s':", path);
			close(fd);
			buf_release(&b);
			return NULL;
		}
		if (n == 0)
			break;
		buf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	if (len)
		*len = b.len;
	return buf_detach(&b);
}

int write_all(int fd, const void *data, size_t len, const char *name)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;   /* a short write is a full disk: say so */
			error("cannot write '%s':", name);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		error("cannot create '%s':", tmp);
		free(tmp);
		return -1;
	}
	if (write_all(fd, data, len, tmp) < 0)
		goto fail;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		error("cannot write '%s':", tmp);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		error("cannot rename '%s' to '%s':", tmp, path);
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return -1;
}

bool path_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

char *path_search(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	const char *path = getenv("PATH");
	char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *found = NULL;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *candidate = path_join(dir, name);
		if (dir[0] == '/' && access(candidate, X_OK) == 0)
			found = candidate;
		else
			free(candidate);
	}
	free(copy);
	return found;
}

bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_below(const char *path, size_t len, const char *dir)
{
	size_t n = strlen(dir);
	return len >= n && strncmp(path, dir, n) == 0 && (len == n || path[n] == '/');
}

char *path_join(const char *a, const char *b)
{
	if (b[0] == '/' || a[0] == '\0')
		return xstrdup(b);
	size_t n = strlen(a);
	return xasprintf("%s%s%s", a, a[n - 1] == '/' ? "" : "/", b);
}

int list_dir(const char *path, struct strlist *out)
{
	DIR *d = opendir(path);
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		error("cannot open directory '%s':", path);
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		strlist_add(out, e->d_name);
	}
	closedir(d);
	strlist_sort(out);
	return 0;
}

static int copy_regular(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		error("cannot open '%s':", from);
		return -1;
	}
	unlink(to);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 07777);
	if (out < 0) {
		error("cannot create '%s':", to);
		close(in);
		return -1;
	}
	char chunk[1 << 16];
	int rc = 0;
	for (;;) {
		ssize_t n = read(in, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error("cannot read '%s':", from);
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		if (write_all(out, chunk, (size_t)n, to) < 0)
			rc = -1;
		if (rc < 0)
			break;
	}
	close(in);
	if (close(out) < 0 && rc == 0) {
		error("cannot write '%s':", to);
		rc = -1;
	}
	fchmodat(AT_FDCWD, to, mode & 07777, 0);
	return rc;
}

int copy_tree(const char *from, const char *to, bool link_files)
{
	struct stat st;
	if (lstat(from, &st) < 0) {
		error("cannot stat '%s':", from);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(from, target, sizeof(target) - 1);
		if (n < 0) {
			error("cannot read link '%s':", from);
			return -1;
		}
		target[n] = '\0';
		unlink(to);
		if (symlink(target, to) < 0) {
			error("cannot create link '%s':", to);
			return -1;
		}
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if (link_files) {
			unlink(to);
			if (link(from, to) == 0)
				return 0;
		}
		return copy_regular(from, to, st.st_mode);
	}
	if (!S_ISDIR(st.st_mode)) {
		error("'%s' is neither a file, a link nor a directory", from);
		return -1;
	}
	if (mkdir(to, 0755) < 0 && errno != EEXIST) {
		error("cannot create directory '%s':", to);
		return -1;
	}
	struct strlist names = {0};
	if (list_dir(from, &names) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		char *a = path_join(from, names.v[i]);
		char *b = path_join(to, names.v[i]);
		rc = copy_tree(a, b, link_files);
		free(a);
		free(b);
	}
	strlist_release(&names);
	chmod(to, st.st_mode & 07777);
	return rc;
}

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *format_duration(double seconds, char out[32])
{
	if (seconds < 60)
		snprintf(out, 32, "%.1f s", seconds);
	else if (seconds < 3600)
		snprintf(out, 32, "%d min %02d s", (int)seconds / 60, (int)seconds % 60);
	else   /* an LLVM build's estimate: seconds would be noise */
		snprintf(out, 32, "%d h %02d min", (int)seconds / 3600, (int)seconds % 3600 / 60);
	return out;
}

const char *format_size(double bytes, char out[32])
{
	const char *unit[] = {"B", "kB", "MB", "GB", "TB"};
	int i = 0;
	while (bytes >= 1000 && i < 4) {
		bytes /= 1000;
		i++;
	}
	snprintf(out, 32, i ? "%.1f %s" : "%.0f %s", bytes, unit[i]);
	return out;
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xmalloc((lb + 1) * sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

char *str_replace_all(const char *text, const char *what, const char *with)
{
	struct buf out = {0};
	for (const char *at; (at = strstr(text, what)); text = at + strlen(what)) {
		buf_add(&out, text, (size_t)(at - text));
		buf_puts(&out, with);
	}
	buf_puts(&out, text);
	return buf_detach(&out);
}

/* A file's bytes, mapped (empty files: an empty string). `unmap_file` releases them. */
void *map_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		error("cannot read '%s':", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	void *data = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
	close(fd);
	if (data == MAP_FAILED) {
		error("cannot map '%s':", path);
		return NULL;
	}
	return data;
}

void unmap_file(void *data, size_t len)
{
	if (len)
		munmap(data, len);
}
