/* fetch: parallel, verified downloads into the content-addressed cache. See fetch.h. */
#define _GNU_SOURCE
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apt.h"
#include "digest.h"
#include "extract.h"
#include "openpgp.h"
#include "util.h"

struct transfer {
	struct source *source;
	struct origin *origins;     /* mirrors first, then the source's own origins (copies) */
	char **mirror_of;           /* per origin: the mirror's base URL, or NULL */
	size_t n_origins;
	size_t origin;              /* index of the origin being tried */
	int attempt;                /* 0 for the first try of this origin */
	double not_before;          /* backoff: do not start before this time */
	char *url;                  /* resolved URL of the current origin */
	char *part_path;            /* tmp/<sha256>.part, locked while we write it */
	int fd;
	struct digest digest;
	long long bytes;            /* in the part file (resumed ones included) */
	long long resumed_from;     /* bytes already there when this attempt started */
	bool too_large, checked_resume;
	bool part_complete;         /* the part an earlier run left already hashes to the pin */
	int write_errno;            /* why writing the part failed (ENOSPC...), 0 if it did not */
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
	char *result;               /* cache path once verified */
	bool done, failed;
};

/* Write all of `data`, going on after a short write: the next write then says why (ENOSPC).
 * Returns 0, or -1 with errno set. */
static int write_bytes(int fd, const char *data, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, data + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Records of verified files, DIR/verified/<sha256>, written when a file was hashed and found
 * right (version 1):
 *   crossroot-verified 1
 *   <size> <mtime s>.<ns> <ctime s>.<ns> <inode> <device>
 * A cached file whose stat data still match its record is used as it is (a stat and a small
 * read, not a hash); any write to it changes its ctime, which cannot be set back, so a
 * changed file is hashed again before use. Written to a temporary name, then renamed. */
static char *record_path(const struct fetch_options *opts, const char *sha256)
{
	return xasprintf("%s/verified/%s", opts->cache_dir, sha256);
}

static void format_record(const struct stat *st, char *out, size_t n)
{
	snprintf(out, n, "crossroot-verified 1\n%lld %lld.%09ld %lld.%09ld %llu %llu\n",
	         (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
	         (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
	         (unsigned long long)st->st_ino, (unsigned long long)st->st_dev);
}

/* Record that `path` was just verified. A record that cannot be written costs a hash on
 * the next use, nothing else: a warning, not an error. */
static void record_verified(const struct fetch_options *opts, const char *sha256,
                            const char *path)
{
	struct stat st;
	char text[256];
	char *record = record_path(opts, sha256);
	char *tmp = xasprintf("%s.tmp.%ld", record, (long)getpid());
	char *dir = path_join(opts->cache_dir, "verified");
	int fd = -1;
	if (stat(path, &st) < 0 || (mkdir(dir, 0755) < 0 && errno != EEXIST))
		goto fail;
	format_record(&st, text, sizeof(text));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_bytes(fd, text, strlen(text)) < 0 || close(fd) < 0 ||
	    rename(tmp, record) < 0) {
		fd = -1;
		goto fail;
	}
	goto out;
fail:
	warn("cannot record that '%s' was verified in '%s': %s; it will be hashed again on its "
	     "next use", path, record, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	free(dir);
	free(tmp);
	free(record);
}

static bool record_matches(const struct fetch_options *opts, const char *sha256,
                           const struct stat *st)
{
	char *record = record_path(opts, sha256);
	char expected[256], found[256] = "";
	int fd = open(record, O_RDONLY | O_CLOEXEC);
	free(record);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, found, sizeof(found) - 1);
	close(fd);
	found[n > 0 ? n : 0] = '\0';
	format_record(st, expected, sizeof(expected));
	return strcmp(found, expected) == 0;
}

/* Is the cached file at `path` still what its name says? Cheap when its record matches and
 * `verify` is off; else hashed. A file that does not match is removed, with a warning that
 * names it, so it is fetched again. */
static bool cached_file_good(const struct fetch_options *opts, const char *path,
                             const char *sha256)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	if (!S_ISREG(st.st_mode)) {
		warn("download cache entry '%s' is not a regular file; ignoring it", path);
		return false;
	}
	if (!opts->verify && record_matches(opts, sha256, &st))
		return true;
	char actual[DIGEST_HEX_LEN + 1];
	if (digest_file(path, actual) < 0)
		return false;
	if (strcmp(actual, sha256) != 0) {
		char *record = record_path(opts, sha256);
		warn("download cache file '%s' has sha256 %s, not the one it is named by: it changed "
		     "after it was verified; removing it and fetching it again", path, actual);
		if (unlink(path) < 0 && errno != ENOENT)
			warn("cannot remove '%s': %s", path, strerror(errno));
		unlink(record);
		free(record);
		return false;
	}
	record_verified(opts, sha256, path);
	return true;
}

char *fetch_cached_path(const struct fetch_options *opts, const struct source *source)
{
	for (size_t i = 0; i < source->n_origins; i++) {
		char *path = path_join(opts->cache_dir, source->origins[i].sha256);
		if (cached_file_good(opts, path, source->origins[i].sha256))
			return path;
		free(path);
	}
	return NULL;
}

static const char *origin_name(const struct origin *o, char *out, size_t n)
{
	if (o->kind == ORIGIN_URL)
		snprintf(out, n, "%s", o->url);
	else if (o->kind == ORIGIN_POOL)
		snprintf(out, n, "the Debian archive's pool/%s", o->file);
	else if (o->kind == ORIGIN_DEB)
		snprintf(out, n, "Debian package %s:%s=%s", o->package, o->arch, o->version);
	else
		snprintf(out, n, "Debian source package %s=%s, file %s", o->package, o->version, o->file);
	return out;
}

/* The file name an origin serves, for mirrors that keep upstream names. */
static char *origin_file_name(const struct origin *o)
{
	if (o->kind == ORIGIN_APT || o->kind == ORIGIN_DEB)
		return xstrdup(o->file);
	if (o->kind == ORIGIN_POOL)
		return xstrdup(strrchr(o->file, '/') + 1);
	const char *end = o->url + strcspn(o->url, "?#");
	const char *slash = end;
	while (slash > o->url && slash[-1] != '/')
		slash--;
	return xstrndup(slash, (size_t)(end - slash));
}

static void add_origin(struct transfer *t, const struct origin *o, const char *url,
                       const char *mirror)
{
	t->origins = xrealloc(t->origins, (t->n_origins + 1) * sizeof(*t->origins));
	t->mirror_of = xrealloc(t->mirror_of, (t->n_origins + 1) * sizeof(*t->mirror_of));
	struct origin *c = &t->origins[t->n_origins];
	*c = *o;
	c->kind = url ? ORIGIN_URL : o->kind;
	c->url = url ? xstrdup(url) : o->url ? xstrdup(o->url) : NULL;
	c->package = o->package ? xstrdup(o->package) : NULL;
	c->version = o->version ? xstrdup(o->version) : NULL;
	c->arch = o->arch ? xstrdup(o->arch) : NULL;
	c->file = o->file ? xstrdup(o->file) : NULL;
	c->signature = o->signature ? xstrdup(o->signature) : NULL;
	t->mirror_of[t->n_origins++] = mirror ? xstrdup(mirror) : NULL;
}

/* A pool origin is a URL under each archive the host's apt uses, its signature beside it. */
static void add_pool_origins(struct transfer *t, const struct origin *o)
{
	struct strlist bases = {0};
	if (apt_archive_bases(&bases) == 0) {
		char name[512];
		warn("%s:%zu:%zu: %s: the host's apt configuration names no http, https or file "
		     "archive; skipping it", o->where.path, o->where.line, o->where.column,
		     origin_name(o, name, sizeof(name)));
	}
	for (size_t i = 0; i < bases.n; i++) {
		char *url = xasprintf("%s/pool/%s", bases.v[i], o->file);
		add_origin(t, o, url, NULL);
		struct origin *c = &t->origins[t->n_origins - 1];
		if (o->signature) {
			free(c->signature);
			c->signature = xasprintf("%.*s%s", (int)(strrchr(url, '/') + 1 - url), url,
			                         o->signature);
		}
		free(url);
	}
	strlist_release(&bases);
}

/* Mirrors are asked first, by sha256 (the layout of a crossroot download cache) and by file
 * name; then the source's own origins in order. */
static void expand_origins(const struct fetch_options *opts, struct transfer *t)
{
	const struct source *s = t->source;
	for (size_t m = 0; opts->mirrors && m < opts->mirrors->n; m++) {
		const char *mirror = opts->mirrors->v[m];
		char *base = mirror[0] == '/' ? xasprintf("file://%s", mirror) : xstrdup(mirror);
		size_t len = strlen(base);
		while (len > 0 && base[len - 1] == '/')
			base[--len] = '\0';
		for (size_t i = 0; i < s->n_origins; i++) {
			bool seen = false;
			for (size_t j = 0; j < i; j++)
				seen |= strcmp(s->origins[j].sha256, s->origins[i].sha256) == 0;
			if (seen)
				continue;
			char *url = xasprintf("%s/%s", base, s->origins[i].sha256);
			add_origin(t, &s->origins[i], url, base);
			free(url);
		}
		for (size_t i = 0; i < s->n_origins; i++) {
			char *name = origin_file_name(&s->origins[i]);
			char *url = xasprintf("%s/%s", base, name);
			add_origin(t, &s->origins[i], url, base);
			free(url);
			free(name);
		}
		free(base);
	}
	for (size_t i = 0; i < s->n_origins; i++)
		if (s->origins[i].kind == ORIGIN_POOL)
			add_pool_origins(t, &s->origins[i]);
		else
			add_origin(t, &s->origins[i], NULL, NULL);
}

static void release_origins(struct transfer *t)
{
	for (size_t i = 0; i < t->n_origins; i++) {
		free(t->origins[i].url);
		free(t->origins[i].package);
		free(t->origins[i].version);
		free(t->origins[i].arch);
		free(t->origins[i].file);
		free(t->origins[i].signature);
		free(t->mirror_of[i]);
	}
	free(t->origins);
	free(t->mirror_of);
}

/* Start the part over: empty file, fresh digest. */
static int reset_part(struct transfer *t)
{
	if (ftruncate(t->fd, 0) < 0 || lseek(t->fd, 0, SEEK_SET) < 0) {
		error("cannot truncate '%s':", t->part_path);
		return -1;
	}
	if (t->digest.ctx)
		digest_release(&t->digest);
	digest_init(&t->digest);
	t->bytes = 0;
	return 0;
}

static size_t on_data(char *data, size_t size, size_t count, void *arg)
{
	struct transfer *t = arg;
	size_t n = size * count;
	const struct origin *o = &t->origins[t->origin];
	if (!t->checked_resume) {
		/* A server that ignored our Range sends the whole file again. */
		long code = 0;
		curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
		if (t->resumed_from > 0 && code == 200 && reset_part(t) < 0) {
			t->write_errno = errno ? errno : EIO;
			return 0;
		}
		t->checked_resume = true;
	}
	if (t->bytes + (long long)n > o->max_size) {
		t->too_large = true;
		return 0;
	}
	if (write_bytes(t->fd, data, n) < 0) {
		t->write_errno = errno;
		return 0;
	}
	digest_update(&t->digest, data, n);
	t->bytes += (long long)n;
	return n;
}

static void close_part(struct transfer *t, bool remove)
{
	if (remove && t->part_path && t->fd >= 0)
		unlink(t->part_path);   /* while we still hold its lock */
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->digest.ctx)
		digest_release(&t->digest);
}

/* Open and lock tmp/<sha256>.part; what an earlier run left there is re-hashed and resumed.
 * Returns 1 if opened, 0 if another process holds it (try later), -1 on error. */
static int open_part(const struct fetch_options *opts, struct transfer *t)
{
	const struct origin *o = &t->origins[t->origin];
	char *tmp = path_join(opts->cache_dir, "tmp");
	if (mkdir_p(tmp, 0755) < 0) {
		free(tmp);
		return -1;
	}
	free(t->part_path);
	t->part_path = xasprintf("%s/%s.part", tmp, o->sha256);
	free(tmp);
	t->fd = open(t->part_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		error("cannot create '%s':", t->part_path);
		return -1;
	}
	if (flock(t->fd, LOCK_EX | LOCK_NB) < 0) {
		close(t->fd);
		t->fd = -1;
		return 0;
	}
	struct stat st;
	if (fstat(t->fd, &st) < 0 || st.st_nlink == 0) {
		/* the previous holder renamed or removed it after we opened it: look again */
		close(t->fd);
		t->fd = -1;
		return 0;
	}
	digest_init(&t->digest);
	t->bytes = 0;
	char chunk[1 << 16];
	for (;;) {
		ssize_t n = read(t->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		digest_update(&t->digest, chunk, (size_t)n);
		t->bytes += n;
	}
	/* killed between the last byte and the rename: nothing is left to download */
	char so_far[DIGEST_HEX_LEN + 1] = "";
	if (t->bytes > 0)
		digest_peek(&t->digest, so_far);
	t->part_complete = strcmp(so_far, o->sha256) == 0;
	if (!t->part_complete && t->bytes >= o->max_size && reset_part(t) < 0)
		return -1;
	return 1;
}

void fetch_curl_defaults(CURL *c, const char *url, char *errbuf, const char *protocols,
                         long connect_seconds, long stall_seconds, const char *ca_bundle)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 8L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, protocols);
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_seconds);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_seconds);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "crossroot/" CROSSROOT_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (ca_bundle)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca_bundle);
}

/* A source transfer: the common options, file:// origins too, and a size limit. */
static CURL *new_handle(const struct fetch_options *opts, const char *url, char *errbuf,
                        long long max_size)
{
	CURL *c = curl_easy_init();
	if (!c)
		abort();
	fetch_curl_defaults(c, url, errbuf, "http,https,file", 20L, opts->stall_seconds, opts->ca_bundle);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_size);
	return c;
}

struct small_file {
	int fd;
	int write_errno;
};

static size_t on_small_data(char *data, size_t size, size_t count, void *arg)
{
	struct small_file *f = arg;
	if (write_bytes(f->fd, data, size * count) < 0) {
		f->write_errno = errno;
		return 0;
	}
	return size * count;
}

static bool transient(CURLcode code, long http);

/* One attempt of fetch_small. Returns 0; -1 with `why`, `code` and `http` set when the
 * transfer failed; -2 with `why` when the file could not be written (not worth a retry). */
static int fetch_small_once(const struct fetch_options *opts, const char *url, const char *path,
                            CURLcode *code, long *http, struct buf *why)
{
	struct small_file out = {open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), 0};
	if (out.fd < 0) {
		buf_printf(why, "cannot create '%s': %s", path, strerror(errno));
		return -2;
	}
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *c = new_handle(opts, url, errbuf, 64 << 10);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_small_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
	*code = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http);
	curl_easy_cleanup(c);
	if (*code == CURLE_OK && (fsync(out.fd) < 0 || close(out.fd) < 0))
		out.write_errno = errno;
	else if (*code != CURLE_OK)
		close(out.fd);
	if (out.write_errno) {
		buf_printf(why, "cannot write '%s': %s", path, strerror(out.write_errno));
		return -2;
	}
	if (*code != CURLE_OK) {
		buf_printf(why, "cannot fetch signature %s: %s", url,
		           errbuf[0] ? errbuf : curl_easy_strerror(*code));
		return -1;
	}
	return 0;
}

/* Sleep, cut short by an interrupt. */
static void pause_seconds(double seconds)
{
	double until = now_seconds() + seconds;
	while (!interrupted && now_seconds() < until) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Download a small file (a signature) to `path`, blocking; transient errors are retried
 * with backoff like the origins' files. Returns 0 or -1 with `why`. */
static int fetch_small(const struct fetch_options *opts, const char *url, const char *path,
                       struct buf *why)
{
	for (int attempt = 0;; attempt++) {
		struct buf failure = {0};
		CURLcode code = CURLE_OK;
		long http = 0;
		int rc = fetch_small_once(opts, url, path, &code, &http, &failure);
		if (rc == 0)
			return 0;
		if (rc == -2 || !transient(code, http) || attempt >= opts->retries || interrupted) {
			buf_puts(why, failure.s);
			buf_release(&failure);
			return -1;
		}
		double delay = opts->backoff_seconds * (1 << attempt);
		warn("%s; retrying in %.1f s (attempt %d of %d)", failure.s, delay, attempt + 2,
		     opts->retries + 1);
		buf_release(&failure);
		pause_seconds(delay);
	}
}

/* The signature's file name: what a mirror that keeps upstream names serves it as. */
static char *signature_file_name(const struct origin *o)
{
	if (o->kind == ORIGIN_APT || o->kind == ORIGIN_POOL)
		return xstrdup(o->signature);
	struct origin named = *o;
	named.url = o->signature;
	return origin_file_name(&named);
}

/* Fetch the signature from `url` into `sig` and check it against the verified part. */
static int verify_signature_from(const struct fetch_options *opts, struct transfer *t,
                                 const char *url, const char *listed, const char *sig,
                                 struct buf *why)
{
	char *keys = path_join(opts->cache_dir, "keys");
	int rc = fetch_small(opts, url, sig, why);
	if (rc == 0 && listed[0]) {
		char actual[DIGEST_HEX_LEN + 1];
		rc = digest_file(sig, actual);
		if (rc == 0 && strcmp(actual, listed) != 0) {
			buf_printf(why, "signature file %s has sha256 %s, Debian's index says %s", url,
			           actual, listed);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = openpgp_verify(t->source->keyring, sig, t->part_path, keys, why);
	if (rc == 0)
		info("%s %s: good OpenPGP signature (%s, keyring %s)", t->source->name,
		     t->source->version, url, t->source->keyring);
	unlink(sig);
	free(keys);
	return rc;
}

/* The verified part of a signed origin must also carry a good signature by the source's
 * pinned keyring. A file from a mirror takes its signature from the same mirror, by file
 * name, and from where the origin says only if the mirror has none that verifies: a mirror
 * is often all that can be reached. The pinned keyring is what is trusted, wherever the
 * signature comes from. Returns 0 if it verifies; else -1 with the reason in `why`. */
static int check_signature(const struct fetch_options *opts, struct transfer *t, struct buf *why)
{
	const struct origin *o = &t->origins[t->origin];
	char *sig = xasprintf("%s.sig", t->part_path);
	const char *mirror = t->mirror_of[t->origin];
	if (mirror) {
		char *name = signature_file_name(o);
		char *url = xasprintf("%s/%s", mirror, name);
		struct buf mirror_why = {0};
		int rc = verify_signature_from(opts, t, url, "", sig, &mirror_why);
		if (rc < 0)
			info("%s %s: no signature from the mirror (%s); asking where the origin says",
			     t->source->name, t->source->version, mirror_why.s);
		buf_release(&mirror_why);
		free(url);
		free(name);
		if (rc == 0 || interrupted) {
			free(sig);
			return interrupted ? -1 : 0;
		}
	}
	char *url = NULL;
	char listed[DIGEST_HEX_LEN + 1] = "";
	int rc = 0;
	if (o->kind == ORIGIN_APT) {
		if (apt_locate(opts->apt_dir, o->package, o->version, o->signature, &url, listed) < 0) {
			buf_printf(why, "Debian source package %s=%s has no signature file '%s'",
			           o->package, o->version, o->signature);
			rc = -1;
		}
	} else {
		url = xstrdup(o->signature);
	}
	if (rc == 0)
		rc = verify_signature_from(opts, t, url, listed, sig, why);
	free(sig);
	free(url);
	return rc;
}

/* Resolve the current origin to a URL; false if this origin cannot be used. */
static bool resolve_origin(const struct fetch_options *opts, struct transfer *t)
{
	const struct origin *o = &t->origins[t->origin];
	free(t->url);
	t->url = NULL;
	if (o->kind == ORIGIN_URL) {
		t->url = xstrdup(o->url);
		return true;
	}
	char listed[DIGEST_HEX_LEN + 1];
	char *url = NULL;
	if (o->kind == ORIGIN_DEB
	        ? apt_locate_deb(opts->apt_dir, o->package, o->arch, o->version, o->file, &url,
	                         listed) < 0
	        : apt_locate(opts->apt_dir, o->package, o->version, o->file, &url, listed) < 0)
		return false;
	if (strcmp(listed, o->sha256) != 0) {
		location_error(&o->where, "Debian's signed index lists %s of %s=%s with sha256 %s, "
		               "but this origin pins %s; skipping it", o->file, o->package, o->version,
		               listed, o->sha256);
		free(url);
		return false;
	}
	t->url = url;
	return true;
}

static CURL *start(const struct fetch_options *opts, struct transfer *t)
{
	const struct origin *o = &t->origins[t->origin];
	t->resumed_from = t->bytes;
	t->too_large = t->checked_resume = false;
	t->write_errno = 0;
	t->errbuf[0] = '\0';
	if (lseek(t->fd, 0, SEEK_END) < 0) {
		error("cannot seek '%s':", t->part_path);
		return NULL;
	}
	CURL *c = new_handle(opts, t->url, t->errbuf, o->max_size);
	curl_easy_setopt(c, CURLOPT_PRIVATE, t);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
	if (t->bytes > 0)
		curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)t->bytes);
	t->curl = c;
	return c;
}

static bool transient(CURLcode code, long http)
{
	switch (code) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_BAD_CONTENT_ENCODING:
		return true;
	case CURLE_HTTP_RETURNED_ERROR:
		return http >= 500 || http == 408 || http == 429;
	default:
		return false;
	}
}

/* Move to the next origin (or fail the transfer when none is left). */
static void next_origin(struct transfer *t)
{
	t->origin++;
	t->attempt = 0;
	t->not_before = 0;
	if (t->origin >= t->n_origins) {
		t->failed = true;
		t->done = true;
	}
}

/* Start this origin over from the first byte, now: the bytes kept from an earlier attempt
 * or run may be the bad ones. False when no attempt is left (the caller fails the origin). */
static bool start_over(const struct fetch_options *opts, struct transfer *t, const char *why)
{
	if (t->attempt >= opts->retries)
		return false;
	warn("%s: %s: %s; starting over from the first byte (attempt %d of %d)", t->source->name,
	     t->url, why, t->attempt + 2, opts->retries + 1);
	t->attempt++;
	t->not_before = 0;
	if (reset_part(t) < 0) {
		close_part(t, true);
		t->done = t->failed = true;
	}
	return true;
}

/* The part holds every byte (its digest was checked by the caller or is checked here):
 * verify the signature if there is one, store it under its hash, record it as verified.
 * `complete_before` says it was complete before any request of this run. */
static void store_part(const struct fetch_options *opts, struct transfer *t, bool complete_before)
{
	const struct origin *o = &t->origins[t->origin];
	char name[4200];
	origin_name(o, name, sizeof(name));
	char actual[DIGEST_HEX_LEN + 1];
	digest_final(&t->digest, actual);
	if (strcmp(actual, o->sha256) != 0) {
		if (t->resumed_from > 0 &&
		    start_over(opts, t, "the resumed download does not match its sha256"))
			return;
		error("%s: sha256 mismatch for %s%s%s: expected %s, got %s (%lld bytes); "
		      "the file was discarded", t->source->name, name,
		      strcmp(name, t->url) ? " at " : "", strcmp(name, t->url) ? t->url : "",
		      o->sha256, actual, t->bytes);
		close_part(t, true);
		next_origin(t);
		return;
	}
	struct buf why = {0};
	if (o->signature && check_signature(opts, t, &why) < 0) {
		error("%s: OpenPGP signature check failed for %s%s%s (keyring %s): %s; the file "
		      "was discarded", t->source->name, name, strcmp(name, t->url) ? " at " : "",
		      strcmp(name, t->url) ? t->url : "", t->source->keyring, why.s);
		buf_release(&why);
		close_part(t, true);
		next_origin(t);
		return;
	}
	buf_release(&why);
	char *final = path_join(opts->cache_dir, o->sha256);
	if (fsync(t->fd) < 0 || rename(t->part_path, final) < 0) {
		/* the cache cannot take it (a full disk): no other origin helps */
		error("cannot store '%s' as '%s':", t->part_path, final);
		close_part(t, true);
		free(final);
		t->done = t->failed = true;
		return;
	}
	close_part(t, false);
	record_verified(opts, o->sha256, final);
	char size[32];
	format_size((double)t->bytes, size);
	if (complete_before)
		info("fetched %s %s (%s, sha256 verified): the part an earlier run left was "
		     "complete, nothing was downloaded", t->source->name, t->source->version, size);
	else
		info("fetched %s %s (%s, sha256 verified) from %s%s", t->source->name,
		     t->source->version, size, t->url, t->resumed_from ? " (resumed)" : "");
	t->result = final;
	t->done = true;
}

/* Handle the end of one attempt; sets up the next attempt, success or failure. */
static void finish(const struct fetch_options *opts, struct transfer *t, CURLcode code)
{
	long http = 0;
	curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_cleanup(t->curl);
	t->curl = NULL;
	if (http == 416 && t->resumed_from > 0) {
		/* Nothing after the part's end: it holds the whole file (a run killed before the
		 * rename), or more, or wrong bytes. libcurl may even call this a success. */
		char so_far[DIGEST_HEX_LEN + 1];
		digest_peek(&t->digest, so_far);
		if (strcmp(so_far, t->origins[t->origin].sha256) == 0) {
			store_part(opts, t, false);
			return;
		}
		char why[160];
		snprintf(why, sizeof(why), "nothing after the %lld bytes kept (HTTP 416), and they do "
		         "not match", t->bytes);
		if (start_over(opts, t, why))
			return;
	} else if (code == CURLE_OK) {
		store_part(opts, t, false);
		return;
	}
	if (t->write_errno) {
		/* the cache cannot take it (a full disk): no other origin or attempt helps */
		error("%s: cannot write '%s': %s; the part was removed", t->source->name,
		      t->part_path, strerror(t->write_errno));
		close_part(t, true);
		t->done = t->failed = true;
		return;
	}
	/* libcurl 8 enforces CURLOPT_MAXFILESIZE on a body without Content-Length too, before
	 * our own count does: the same failure, in our words */
	if (code == CURLE_FILESIZE_EXCEEDED)
		t->too_large = true;
	const char *why = t->too_large ? "larger than its max-size" :
	                  http == 416 ? "HTTP 416 (range not satisfiable)" :
	                  t->errbuf[0] ? t->errbuf : curl_easy_strerror(code);
	if (code == CURLE_RANGE_ERROR && t->attempt < opts->retries) {
		/* the server cannot resume: start this file over */
		warn("%s: %s cannot resume a download; starting it over", t->source->name, t->url);
		t->attempt++;
		if (reset_part(t) < 0) {
			close_part(t, true);
			next_origin(t);
		}
		return;
	}
	bool retry = !t->too_large && transient(code, http) &&
	             t->attempt < opts->retries;
	if (retry) {
		double delay = opts->backoff_seconds * (1 << t->attempt);
		t->attempt++;
		warn("%s: %s: %s; retrying in %.1f s%s (attempt %d of %d)", t->source->name, t->url,
		     why, delay, t->bytes ? ", resuming" : "", t->attempt + 1, opts->retries + 1);
		t->not_before = now_seconds() + delay;
		return;   /* the part and its digest stay: the next attempt resumes */
	}
	/* Bytes of a failed origin are kept only while they may still be resumed: never. */
	close_part(t, true);
	bool more = t->origin + 1 < t->n_origins;
	bool quiet = t->mirror_of[t->origin] &&
	             (http == 404 || code == CURLE_FILE_COULDNT_READ_FILE);
	if (!quiet)
		warn("%s: cannot fetch %s: %s%s", t->source->name, t->url, why,
		     more ? "; trying the next origin" : "");
	next_origin(t);
}

static void show_progress(struct transfer *ts, size_t n, double started, bool tty, bool final)
{
	long long bytes = 0, total = 0;
	size_t active = 0, done = 0;
	for (size_t i = 0; i < n; i++) {
		if (ts[i].done) {
			done++;
			bytes += ts[i].bytes;
			total += ts[i].bytes;
			continue;
		}
		if (ts[i].curl) {
			curl_off_t len = 0;
			curl_easy_getinfo(ts[i].curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
			active++;
			bytes += ts[i].bytes;
			total += len > 0 ? ts[i].resumed_from + len : ts[i].bytes;
		}
	}
	double elapsed = now_seconds() - started;
	double rate = elapsed > 0 ? (double)bytes / elapsed : 0;
	char a[32], b[32], r[32], eta[32] = "";
	if (rate > 0 && total > bytes)
		format_duration((double)(total - bytes) / rate, eta);
	format_size((double)bytes, a);
	format_size((double)total, b);
	format_size(rate, r);
	if (tty) {
		printf("\r\033[Kfetch: %zu/%zu done, %zu active, %s of %s, %s/s%s%s", done, n, active, a,
		       b, r, eta[0] ? ", ETA " : "", eta);
		if (final)
			printf("\r\033[K");
		fflush(stdout);
	} else if (!final) {
		info("fetch: %zu/%zu done, %zu active, %s of %s, %s/s%s%s", done, n, active, a, b, r,
		     eta[0] ? ", ETA " : "", eta);
	}
}

int fetch_sources(const struct fetch_options *opts, struct source *const sources[], size_t n,
                  char *paths[])
{
	if (mkdir_p(opts->cache_dir, 0755) < 0)
		return -1;
	struct transfer *ts = xcalloc(n, sizeof(*ts));
	size_t pending = 0;
	for (size_t i = 0; i < n; i++) {
		ts[i].source = sources[i];
		ts[i].fd = -1;
		paths[i] = fetch_cached_path(opts, sources[i]);
		if (!paths[i])
			expand_origins(opts, &ts[i]);   /* (reads apt's configuration for pool origins) */
		if (paths[i]) {
			ts[i].done = true;
		} else if (ts[i].n_origins == 0) {
			ts[i].done = ts[i].failed = true;   /* its only origins had nothing to expand to */
		} else if (opts->offline) {
			error("%s %s is not in the download cache '%s' and --offline forbids fetching it "
			      "(expected sha256 %s)", sources[i]->name, sources[i]->version, opts->cache_dir,
			      sources[i]->origins[0].sha256);
			ts[i].done = ts[i].failed = true;
		} else {
			pending++;
		}
	}
	if (pending == 0)
		goto out;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	CURLM *multi = curl_multi_init();
	bool tty = isatty(1);
	double started = now_seconds(), last_progress = started;
	size_t running = 0;
	for (;;) {
		/* Start what may start: bounded, and not before a retry's backoff. */
		bool waiting = false;
		for (size_t i = 0; i < n && running < (size_t)opts->parallel && !interrupted; i++) {
			struct transfer *t = &ts[i];
			if (t->done || t->curl)
				continue;
			if (t->not_before > now_seconds()) {
				waiting = true;
				continue;
			}
			if (t->fd < 0) {
				if (!resolve_origin(opts, t)) {
					next_origin(t);
					i--;        /* look at the same transfer again */
					continue;
				}
				int opened = open_part(opts, t);
				if (opened == 0) {
					/* another crossroot is fetching this very file: look again soon */
					const char *sha256 = t->origins[t->origin].sha256;
					char *final = path_join(opts->cache_dir, sha256);
					if (cached_file_good(opts, final, sha256)) {
						t->result = final;
						t->done = true;
					} else {
						free(final);
						t->not_before = now_seconds() + 0.5;
						waiting = true;
					}
					continue;
				}
				if (opened < 0) {
					t->done = t->failed = true;
					continue;
				}
				/* another crossroot may have finished it while we waited for the lock */
				const char *sha256 = t->origins[t->origin].sha256;
				char *final = path_join(opts->cache_dir, sha256);
				if (cached_file_good(opts, final, sha256)) {
					close_part(t, true);
					t->result = final;
					t->done = true;
					continue;
				}
				free(final);
				if (t->part_complete) {
					store_part(opts, t, true);
					if (!t->done)
						i--;   /* on to the next origin: look at it again */
					continue;
				}
			}
			if (!start(opts, t)) {
				close_part(t, true);
				t->done = t->failed = true;
				continue;
			}
			curl_multi_add_handle(multi, t->curl);
			running++;
		}
		if (running == 0 && !waiting)
			break;
		if (interrupted)
			break;
		int still;
		curl_multi_perform(multi, &still);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(multi, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct transfer *t;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
			CURLcode code = msg->data.result;
			curl_multi_remove_handle(multi, msg->easy_handle);
			running--;
			finish(opts, t, code);
		}
		curl_multi_poll(multi, NULL, 0, 200, NULL);
		double now = now_seconds();
		if (now - last_progress >= (tty ? 0.25 : 10.0)) {
			show_progress(ts, n, started, tty, false);
			last_progress = now;
		}
	}
	show_progress(ts, n, started, tty, true);
	for (size_t i = 0; i < n; i++) {
		if (ts[i].curl) {
			curl_multi_remove_handle(multi, ts[i].curl);
			curl_easy_cleanup(ts[i].curl);
		}
		close_part(&ts[i], false);   /* an interrupted part is resumed by the next run */
		if (ts[i].result)
			paths[i] = ts[i].result;
		else if (!paths[i] && !ts[i].failed && interrupted)
			ts[i].failed = true;
	}
	curl_multi_cleanup(multi);
	curl_global_cleanup();
out:;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (ts[i].failed || !paths[i]) {
			if (!opts->offline && !interrupted)
				error("%s %s: every origin failed (see above); nothing was stored in the "
				      "download cache", ts[i].source->name, ts[i].source->version);
			rc = -1;
		}
		free(ts[i].url);
		free(ts[i].part_path);
		release_origins(&ts[i]);
	}
	free(ts);
	return rc;
}

char *fetch_member(const struct fetch_options *opts, const struct source *source,
                   const char *outer, bool *refused)
{
	*refused = false;
	char *path = path_join(opts->cache_dir, source->member_sha256);
	if (cached_file_good(opts, path, source->member_sha256))
		return path;
	char *tmp_dir = path_join(opts->cache_dir, "tmp");
	char *part = xasprintf("%s/%s.member.%ld", tmp_dir, source->member_sha256, (long)getpid());
	char hex[DIGEST_HEX_LEN + 1];
	struct stat st;
	long long limit = stat(outer, &st) == 0 ? extract_default_max_bytes(st.st_size) : 0;
	int rc = mkdir_p(tmp_dir, 0755) < 0 ? EXTRACT_FAILED
	         : extract_member(outer, source->member, part, limit, hex);
	if (rc == 0 && strcmp(hex, source->member_sha256) != 0) {
		error("%s: member '%s' of '%s' has sha256 %s, expected %s (member-sha256 in %s)",
		      source->name, source->member, outer, hex, source->member_sha256, source->path);
		unlink(part);
		rc = EXTRACT_REFUSED;
	}
	if (rc == 0 && rename(part, path) < 0) {
		error("cannot rename '%s' to '%s':", part, path);
		unlink(part);
		rc = EXTRACT_FAILED;
	}
	if (rc == 0)
		record_verified(opts, source->member_sha256, path);
	*refused = rc == EXTRACT_REFUSED;
	if (*refused)
		error("%s: nothing of it was extracted (its 'member' is in %s)", source->name,
		      source->path);
	free(tmp_dir);
	free(part);
	if (rc != 0) {
		free(path);
		return NULL;
	}
	return path;
}
