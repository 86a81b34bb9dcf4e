/* Unit tests of fetch: the download cache is checked on every use.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "digest.h"
#include "fetch.h"

struct cached_call {
	struct fetch_options opts;
	struct source *source;
	char *path;
};

static int call_cached_path(void *arg)
{
	struct cached_call *c = arg;
	c->path = fetch_cached_path(&c->opts, c->source);
	return c->path ? 0 : -1;
}

TEST(fetch_cache_verify)
{
	const char *sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	char *cache = xasprintf("%s/downloads", scratch);
	mkdir_p(cache, 0755);
	char *file = xasprintf("%s/%s", cache, sha);
	char *record = xasprintf("%s/verified/%s", cache, sha);
	write_text(file, "abc");
	struct origin origin = {.kind = ORIGIN_URL, .url = "http://127.0.0.1:1/abc"};
	memcpy(origin.sha256, sha, sizeof(origin.sha256));
	struct source source = {.name = "abc", .version = "1", .origins = &origin, .n_origins = 1};
	struct cached_call call = {{.cache_dir = cache}, &source, NULL};
	int rc;
	char *err = capture_stderr(call_cached_path, &call, &rc);
	CHECK(rc == 0 && strcmp(call.path, file) == 0);
	CHECK(path_exists(record));   /* hashed once, then recorded */
	free(call.path);
	free(err);
	/* Changed bytes whose stat data still match the record (forged here: a real write
	 * changes the ctime) pass the cheap check; `verify` hashes the file whatever the record
	 * says, and the bad file goes, with a warning naming it. */
	write_text(file, "abd");
	struct stat st;
	CHECK(stat(file, &st) == 0);
	char *forged = xasprintf("crossroot-verified 1\n%lld %lld.%09ld %lld.%09ld %llu %llu\n",
	                         (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	                         st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
	                         st.st_ctim.tv_nsec, (unsigned long long)st.st_ino,
	                         (unsigned long long)st.st_dev);
	write_text(record, forged);
	free(forged);
	err = capture_stderr(call_cached_path, &call, &rc);
	CHECK(rc == 0);
	free(call.path);
	free(err);
	call.opts.verify = true;
	err = capture_stderr(call_cached_path, &call, &rc);
	char *expected = xasprintf("download cache file '%s' has sha256 ", file);
	CHECK(rc < 0 && strstr(err, expected) && strstr(err, "fetching it again"));
	CHECK(!path_exists(file) && !path_exists(record));
	free(expected);
	free(err);
	free(record);
	free(file);
	free(cache);
}
