/* fetch: download every source a run needs into the content-addressed download cache,
 * in parallel (libcurl multi), each hashed while it streams.
 *
 * Cache layout (DIR = fetch_options.cache_dir):
 *   DIR/<sha256>              a verified file, named by its own hash; never modified
 *   DIR/tmp/<sha256>.part     bytes in flight, flock()ed by the process writing them; an
 *                             interrupted download is re-hashed and resumed (HTTP Range);
 *                             one already complete is stored without any request
 *   DIR/verified/<sha256>     when DIR/<sha256> was verified, its size, mtime, ctime,
 *                             inode and device (format in fetch.c): a changed file is hashed
 *                             again before use
 * A file is renamed into DIR only after its sha256 matched the origin's pin, so whatever a
 * reader finds there is verified. A write that fails (a full disk) fails the download at once,
 * naming the part file and errno's words, and removes the part: no origin can help. Origins
 * are tried in order; an origin that fails for good
 * (404, hash mismatch, too large, apt has no such file) passes to the next at once, a
 * transient failure (connect, reset, 5xx, stall) is retried with backoff first, and so are
 * signature downloads. A resumed download that does not match, or whose range the server
 * cannot serve (416) while the part does not match, starts over from the first byte. */
#ifndef CROSSROOT_FETCH_H
#define CROSSROOT_FETCH_H

#include <curl/curl.h>
#include <stdbool.h>

#include "recipes.h"

struct fetch_options {
	const char *cache_dir;      /* download cache */
	const char *apt_dir;        /* private apt state for apt origins */
	int parallel;               /* transfers at once */
	int retries;                /* extra attempts per origin on transient errors */
	long stall_seconds;         /* abort a transfer that moved no byte for this long */
	double backoff_seconds;     /* first retry delay; doubles with each retry */
	const struct strlist *mirrors;  /* asked before the origins: URLs or local directories */
	bool offline;               /* never touch the network: the cache must hold everything */
	const char *ca_bundle;      /* CA certificates for https (NULL: the system's) */
	bool verify;                /* hash every cached file before use, whatever its record */
};

/* Path of the verified file of `source` if the cache holds one (any origin's hash), else NULL.
 * A cached file is checked on every use: its stat data against its record in verified/
 * (cheap), and hashed when they differ, when it has no record, or when `verify` is set. A
 * file that no longer hashes to its name is removed with a warning naming it (and so
 * fetched again by fetch_sources). */
char *fetch_cached_path(const struct fetch_options *opts, const struct source *source);

/* Make sure every source is in the cache. On return paths[i] is the cached file of
 * sources[i] (or NULL where it failed). Returns 0 if all succeeded, -1 if any failed (each
 * failure described: URL or package, what was expected, what happened). */
int fetch_sources(const struct fetch_options *opts, struct source *const sources[], size_t n,
                  char *paths[]);

/* The archive inside the cached download `outer` that `source->member` names, as a file of
 * the download cache named by its own sha256 (source->member_sha256): copied out of `outer`
 * once, hashed while it is written and stored only when it matches its pin. Returns its path,
 * or NULL after error() naming the archive, the member and both hashes (*refused: the
 * archive's fault, exit 3; otherwise the machine's). */
char *fetch_member(const struct fetch_options *opts, const struct source *source,
                   const char *outer, bool *refused);

/* The options every crossroot transfer gets (sources here, the remote stage cache in
 * remote.c): errors as failures, at most 8 redirects and only to web protocols, TLS
 * verification left on (libcurl's default; a private CA bundle may replace the system's, never
 * switch it off), a connect timeout and a stall timeout. `protocols` is libcurl's list of
 * allowed schemes ("http,https,file"). */
void fetch_curl_defaults(CURL *c, const char *url, char *errbuf, const char *protocols,
                         long connect_seconds, long stall_seconds, const char *ca_bundle);

#endif
