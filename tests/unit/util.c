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
	CHECK(strcmp(format_size(1500000, out), "1.5 MB") == 0);
}
