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
