/* fetch: parallel, verified downloads into the content-addressed cache. See fetch.h. */
#define _GNU_SOURCE
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apt.h"
#include "digest.h"
#include "util.h"

struct transfer {
	struct source *source;
	size_t origin;              /* index of the origin being tried */
	int attempt;                /* 0 for the first try of this origin */
	double not_before;          /* backoff: do not start before this time */
	char *url;                  /* resolved URL of the current origin */
	char *part_path;
	int fd;
	struct digest digest;
	long long bytes, total;     /* received, expected (0: unknown) */
	bool too_large, write_failed;
	CURL *curl;
	char errbuf[CURL_ERROR_SIZE];
	char *result;               /* cache path once verified */
	bool done, failed;
};

char *fetch_cached_path(const struct fetch_options *opts, const struct source *source)
{
	for (size_t i = 0; i < source->n_origins; i++) {
		char *path = path_join(opts->cache_dir, source->origins[i].sha256);
		if (path_exists(path))
			return path;
		free(path);
	}
	return NULL;
}

static const char *origin_name(const struct origin *o, char *out, size_t n)
{
	if (o->kind == ORIGIN_URL)
		snprintf(out, n, "%s", o->url);
	else
		snprintf(out, n, "Debian source package %s=%s, file %s", o->package, o->version, o->file);
	return out;
}

static size_t on_data(char *data, size_t size, size_t count, void *arg)
{
	struct transfer *t = arg;
	size_t n = size * count;
	const struct origin *o = &t->source->origins[t->origin];
	if (t->bytes + (long long)n > o->max_size) {
		t->too_large = true;
		return 0;
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(t->fd, data + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			t->write_failed = true;
			return 0;
		}
		off += (size_t)w;
	}
	digest_update(&t->digest, data, n);
	t->bytes += (long long)n;
	return n;
}

static void close_part(struct transfer *t, bool remove)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->digest.ctx)
		digest_release(&t->digest);
	if (remove && t->part_path)
		unlink(t->part_path);
}

/* Resolve the current origin to a URL; false if this origin cannot be used. */
static bool resolve_origin(const struct fetch_options *opts, struct transfer *t)
{
	const struct origin *o = &t->source->origins[t->origin];
	free(t->url);
	t->url = NULL;
	if (o->kind == ORIGIN_URL) {
		t->url = xstrdup(o->url);
		return true;
	}
	char listed[DIGEST_HEX_LEN + 1];
	char *url = NULL;
	if (apt_locate(opts->apt_dir, o->package, o->version, o->file, &url, listed) < 0)
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
	char *tmp = path_join(opts->cache_dir, "tmp");
	if (mkdir_p(tmp, 0755) < 0) {
		free(tmp);
		return NULL;
	}
	free(t->part_path);
	t->part_path = xasprintf("%s/%s.%ld.part", tmp, t->source->origins[t->origin].sha256,
	                         (long)getpid());
	free(tmp);
	t->fd = open(t->part_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		error("cannot create '%s':", t->part_path);
		return NULL;
	}
	digest_init(&t->digest);
	t->bytes = t->total = 0;
	t->too_large = t->write_failed = false;
	t->errbuf[0] = '\0';
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, t->url);
	curl_easy_setopt(c, CURLOPT_PRIVATE, t);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, t->errbuf);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 8L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, opts->stall_seconds);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)t->source->origins[t->origin].max_size);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "crossroot/" CROSSROOT_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
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
	if (t->origin >= t->source->n_origins) {
		t->failed = true;
		t->done = true;
	}
}

/* Handle the end of one attempt; sets up the next attempt, success or failure. */
static void finish(const struct fetch_options *opts, struct transfer *t, CURLcode code)
{
	const struct origin *o = &t->source->origins[t->origin];
	long http = 0;
	curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_cleanup(t->curl);
	t->curl = NULL;
	char name[4200];
	origin_name(o, name, sizeof(name));
	if (code == CURLE_OK) {
		char actual[DIGEST_HEX_LEN + 1];
		digest_final(&t->digest, actual);
		if (strcmp(actual, o->sha256) != 0) {
			error("%s: sha256 mismatch for %s (%s): expected %s, got %s (%lld bytes); "
			      "the file was discarded", t->source->name, name, t->url, o->sha256, actual,
			      t->bytes);
			close_part(t, true);
			next_origin(t);
			return;
		}
		if (fsync(t->fd) < 0) {
			error("cannot write '%s':", t->part_path);
			close_part(t, true);
			next_origin(t);
			return;
		}
		close_part(t, false);
		char *final = path_join(opts->cache_dir, o->sha256);
		if (rename(t->part_path, final) < 0) {
			error("cannot rename '%s' to '%s':", t->part_path, final);
			unlink(t->part_path);
			free(final);
			next_origin(t);
			return;
		}
		char size[32];
		info("fetched %s %s (%s, sha256 verified) from %s", t->source->name, t->source->version,
		     format_size((double)t->bytes, size), t->url);
		t->result = final;
		t->done = true;
		return;
	}
	close_part(t, true);
	const char *why = t->too_large ? "larger than its max-size" :
	                  t->write_failed ? "cannot write to the download cache" :
	                  t->errbuf[0] ? t->errbuf : curl_easy_strerror(code);
	if (!t->too_large && !t->write_failed && transient(code, http) && t->attempt < opts->retries) {
		double delay = 1 << t->attempt;
		t->attempt++;
		warn("%s: %s: %s; retrying in %.0f s (attempt %d of %d)", t->source->name, t->url, why,
		     delay, t->attempt + 1, opts->retries + 1);
		t->not_before = now_seconds() + delay;
		return;
	}
	bool more = t->origin + 1 < t->source->n_origins;
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
			total += len > 0 ? len : ts[i].bytes;
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
		if (paths[i]) {
			ts[i].done = true;
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
			if (t->attempt == 0 && !resolve_origin(opts, t)) {
				next_origin(t);
				i--;        /* look at the same transfer again */
				continue;
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
			close_part(&ts[i], true);
		}
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
	}
	free(ts);
	return rc;
}
