/* Unit tests of util: small helpers.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

TEST(util)
{
	CHECK(edit_distance("stage", "stages") == 1);
	CHECK(edit_distance("", "abc") == 3);
	CHECK(edit_distance("kitten", "sitting") == 3);
	char *p = xasprintf("%s/a/b/c", scratch);
	CHECK(mkdir_p(p, 0755) == 0 && is_dir(p));
	char *f = xasprintf("%s/file", p);
	CHECK(write_file_atomic(f, "data", 4, 0600) == 0 && file_has(f, "data"));
	char *top = xasprintf("%s/a", scratch);
	CHECK(remove_tree(top) == 0 && !path_exists(top));
	CHECK(remove_tree(top) == 0);
	free(p);
	free(f);
	free(top);
	char out[32];
	CHECK(strcmp(format_duration(75, out), "1 min 15 s") == 0);
	CHECK(strcmp(format_duration(3599, out), "59 min 59 s") == 0);
	CHECK(strcmp(format_duration(2 * 3600 + 5 * 60 + 59, out), "2 h 05 min") == 0);
	CHECK(strcmp(format_size(1500000, out), "1.5 MB") == 0);
}

static bool redacts(const char *text, const char *want)
{
	char *got = url_redact(text);
	bool same = strcmp(got, want) == 0;
	if (!same)
		fprintf(stderr, "url_redact('%s') is '%s', not '%s'\n", text, got, want);
	free(got);
	return same;
}

static int warn_with_url(void *arg)
{
	warn("cannot fetch %s: HTTP status 500", (const char *)arg);
	info("fetched from %s", (const char *)arg);
	return 0;
}

/* No message shows a URL's password or token. */
TEST(url_redact)
{
	CHECK(redacts("https://user:secret@host/x", "https://user:***@host/x"));
	CHECK(redacts("see 'https://tok3n@host:8080/a@b' and http://a:b@c?d=e@f.",
	              "see 'https://***@host:8080/a@b' and http://a:***@c?d=e@f."));
	CHECK(redacts("https://u:p:q@x@host", "https://u:***@host"));
	CHECK(redacts("no url, a@b, ://x@y and file:///p@q", "no url, a@b, ://x@y and file:///p@q"));
	CHECK(redacts("https://host/path", "https://host/path"));
	int rc;
	char *text = capture_output(warn_with_url, "https://me:hunter2@cache.example/k.sig", &rc);
	CHECK(text && !strstr(text, "hunter2") &&
	      strstr(text, "cannot fetch https://me:***@cache.example/k.sig") &&
	      strstr(text, "fetched from https://me:***@cache.example/k.sig"));
	free(text);
}
