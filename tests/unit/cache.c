/* Unit tests of cache: a result made elsewhere is published only if it gives the expected
 * manifest. */
#define _GNU_SOURCE
#include "unit.h"

#include "cache.h"

TEST(publish_expected)
{
	char *dir = xasprintf("%s/stages", scratch);
	char *tree = xasprintf("%s/tree", scratch);
	char *file = xasprintf("%s/tree/usr/a.txt", scratch);
	char *sub = xasprintf("%s/tree/usr", scratch);
	struct strlist inputs = {0};
	char output[DIGEST_HEX_LEN + 1], *why = NULL;
	mkdir_p(sub, 0755);
	write_text(file, "hello\n");
	CHECK(cache_publish(dir, "k1", tree, &inputs, "t s", 1, output) == 0);
	char *manifest_path = xasprintf("%s/k1/manifest", dir);
	char *manifest = read_file(manifest_path, NULL);
	/* the same tree again, under another key: published, same output id */
	char output2[DIGEST_HEX_LEN + 1];
	mkdir_p(sub, 0755);
	write_text(file, "hello\n");
	CHECK(cache_publish_expected(dir, "k2", tree, manifest, &why, &inputs, "t s", output2) == 1);
	CHECK(why == NULL && strcmp(output, output2) == 0);
	/* one byte differs: not published, the difference named, the tree removed */
	mkdir_p(sub, 0755);
	write_text(file, "hellO\n");
	CHECK(cache_publish_expected(dir, "k3", tree, manifest, &why, &inputs, "t s", output2) == 0);
	CHECK(why && strstr(why, "usr/a.txt"));
	char *k3 = xasprintf("%s/k3", dir);
	CHECK(!path_exists(k3) && !path_exists(tree));
	free(why);
	free(k3);
	free(manifest);
	free(manifest_path);
	free(dir);
	free(tree);
	free(file);
	free(sub);
}

/* A use compares the stat record of the last full check instead of checking in full; what a
 * full check finds must still be found: a one-byte edit in place, an added file. */
static void make_tree(const char *tree)
{
	char *sub = xasprintf("%s/usr/sub", tree), *a = xasprintf("%s/usr/a.txt", tree);
	char *b = xasprintf("%s/usr/sub/b.txt", tree), *link = xasprintf("%s/usr/link", tree);
	mkdir_p(sub, 0755);
	write_text(a, "hello\n");
	write_text(b, "world\n");
	CHECK(symlink("a.txt", link) == 0);
	free(sub);
	free(a);
	free(b);
	free(link);
}

static int lookup_quiet(void *arg)
{
	char out[DIGEST_HEX_LEN + 1];
	return cache_lookup((const char *)arg, "k", false, out);
}

TEST(cache_record)
{
	cache_record_settle = 0;
	char *dir = xasprintf("%s/stages", scratch), *tree = xasprintf("%s/tree", scratch);
	char *record = xasprintf("%s/k/checked", dir), *a = xasprintf("%s/k/files/usr/a.txt", dir);
	char *added = xasprintf("%s/k/files/usr/sub/new.txt", dir);
	struct strlist inputs = {0};
	char output[DIGEST_HEX_LEN + 1], found[DIGEST_HEX_LEN + 1];
	make_tree(tree);
	CHECK(cache_publish(dir, "k", tree, &inputs, "t s", 1, output) == 0);
	CHECK(cache_lookup(dir, "k", false, found) == 1 && strcmp(found, output) == 0);
	CHECK(path_exists(record));
	/* the next use answers from the record: one with another (made-up) output id says so */
	char *text = read_file(record, NULL);
	char *forged = xstrdup(text);
	memset(forged + strlen("crossroot-checked 1\n"), 'a', DIGEST_HEX_LEN);
	write_text(record, forged);
	CHECK(cache_lookup(dir, "k", false, found) == 1 && found[0] == 'a' && found[1] == 'a');
	write_text(record, text);
	CHECK(cache_lookup(dir, "k", false, found) == 1 && strcmp(found, output) == 0);
	/* the same bytes with a new ctime: checked in full, hashed, accepted, recorded again */
	usleep(20000);
	CHECK(chmod(a, 0644) == 0 && chmod(a, 0444) == 0);
	CHECK(cache_lookup(dir, "k", false, found) == 1 && strcmp(found, output) == 0);
	/* one byte appended in place: found, the result removed */
	usleep(20000);
	CHECK(chmod(a, 0644) == 0);
	FILE *f = fopen(a, "a");
	CHECK(f && fputc('X', f) == 'X' && fclose(f) == 0);
	int rc = -1;
	free(capture_stderr(lookup_quiet, dir, &rc));
	CHECK(rc == 0 && !path_exists(a));
	/* a file added to a directory: found */
	make_tree(tree);
	CHECK(cache_publish(dir, "k", tree, &inputs, "t s", 1, output) == 0);
	CHECK(cache_lookup(dir, "k", false, found) == 1 && path_exists(record));
	usleep(20000);
	write_text(added, "new\n");
	free(capture_stderr(lookup_quiet, dir, &rc));
	CHECK(rc == 0 && !path_exists(added));
	cache_record_settle = CACHE_RECORD_SETTLE;
	free(text);
	free(forged);
	free(dir);
	free(tree);
	free(record);
	free(a);
	free(added);
}
