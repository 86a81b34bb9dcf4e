/* remote_http: GET, PUT, MOVE and DELETE over HTTP(S) for the remote cache, with libcurl;
 * what each failure means is classified here once. See remote_http.h. */
#define _GNU_SOURCE
#include "remote_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"

struct http {
	struct remote_transport base;
	char *url;                  /* base URL */
	const char *ca_bundle;
	long stall_seconds;
	CURL *curl;                 /* one handle, so connections are reused */
	char errbuf[CURL_ERROR_SIZE];
};

/* Ctrl-C ends a transfer at once. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	(void)arg, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return interrupted ? 1 : 0;
}

/* The handle, reset, for `name` under the base URL, with what every request gets. */
static CURL *request(struct http *h, const char *name)
{
	CURL *c = h->curl;
	curl_easy_reset(c);
	h->errbuf[0] = '\0';
	char *url = xasprintf("%s/%s", h->url, name);
	/* a cache that does not answer soon is skipped: 10 s to connect */
	fetch_curl_defaults(c, url, h->errbuf, "http,https", 10L, h->stall_seconds, h->ca_bundle);
	free(url);   /* libcurl keeps its own copy */
	if (h->base.deadline > 0) {
		/* what is left of the entry's deadline (remote.h), never 0: libcurl's "no limit" */
		double left = (h->base.deadline - now_seconds()) * 1000.0;
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left < 1.0 ? 1L : (long)left + 1L);
	}
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	return c;
}

/* Run the request and say what happened: the one place libcurl's codes get a meaning. */
static enum remote_outcome perform(struct http *h, struct curl_slist *headers, char *why)
{
	CURLcode code = curl_easy_perform(h->curl);
	long status = 0;
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	if (code == CURLE_OK)
		return REMOTE_OK;
	if (code == CURLE_HTTP_RETURNED_ERROR) {
		snprintf(why, REMOTE_WHY_SIZE, "HTTP status %ld", status);
		return status == 404 || status == 410 ? REMOTE_MISSING : REMOTE_FAILED;
	}
	snprintf(why, REMOTE_WHY_SIZE, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(code));
	if (code == CURLE_WRITE_ERROR || code == CURLE_READ_ERROR)
		return REMOTE_STOPPED;
	return REMOTE_UNREACHABLE;
}

struct sink_call {
	remote_sink *sink;
	void *arg;
};

static size_t to_sink(char *data, size_t size, size_t count, void *arg)
{
	struct sink_call *s = arg;
	return s->sink(s->arg, data, size * count) ? size * count : 0;
}

static enum remote_outcome http_get(struct remote_transport *t, const char *name,
                                    remote_sink *sink, void *arg, char *why)
{
	struct http *h = (struct http *)t;
	struct sink_call s = {sink, arg};
	CURL *c = request(h, name);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	return perform(h, NULL, why);
}

static enum remote_outcome http_put(struct remote_transport *t, const char *name, FILE *from,
                                    long long size, char *why)
{
	struct http *h = (struct http *)t;
	CURL *c = request(h, name);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READDATA, from);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	return perform(h, NULL, why);
}

static enum remote_outcome http_move(struct remote_transport *t, const char *from,
                                     const char *to, char *why)
{
	struct http *h = (struct http *)t;
	CURL *c = request(h, from);
	char *destination = xasprintf("Destination: %s/%s", h->url, to);
	struct curl_slist *headers = curl_slist_append(NULL, destination);
	headers = curl_slist_append(headers, "Overwrite: T");
	free(destination);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "MOVE");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	return perform(h, headers, why);
}

static enum remote_outcome http_delete(struct remote_transport *t, const char *name, char *why)
{
	struct http *h = (struct http *)t;
	CURL *c = request(h, name);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
	return perform(h, NULL, why);
}

static void http_free(struct remote_transport *t)
{
	struct http *h = (struct http *)t;
	curl_easy_cleanup(h->curl);
	curl_global_cleanup();
	free(h->url);
	free(h);
}

static const struct remote_transport_ops http_ops = {http_get, http_put, http_move,
                                                     http_delete, http_free};

struct remote_transport *remote_http_new(const char *url, const char *ca_bundle,
                                         long stall_seconds)
{
	struct http *h = xcalloc(1, sizeof(*h));
	h->base.ops = &http_ops;
	h->url = xstrdup(url);
	h->ca_bundle = ca_bundle;
	h->stall_seconds = stall_seconds;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!(h->curl = curl_easy_init()))
		abort();
	return &h->base;
}
