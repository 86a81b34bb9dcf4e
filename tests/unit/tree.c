/* Unit tests of tree: the manifest scan's shortcut for files unchanged since a check. */
#define _GNU_SOURCE
#include "unit.h"

#include "tree.h"

/* A file whose size is the known entry's and whose ctime is not after `published` takes the
 * known hash unread; a file changed after `published` is hashed. The known hash here is made
 * up, so the scan's output shows which happened. */
TEST(tree_known_hash)
{
	char *root = xasprintf("%s/t", scratch);
	char *sub = xasprintf("%s/t/usr", scratch);
	char *file = xasprintf("%s/t/usr/a.txt", scratch);
	mkdir_p(sub, 0755);
	write_text(file, "hello\n");
	const char *fake = "0000000000000000000000000000000000000000000000000000000000000001";
	struct tree_entry known[] = {
		{.kind = 'd', .mode = 0755, .path = "usr", .order = 1},
		{.kind = 'f', .mode = 0644, .size = 6, .value = (char *)fake, .path = "usr/a.txt",
		 .order = 2},
	};
	struct tree_scan w = {.known = known, .n_known = 2};
	clock_gettime(CLOCK_REALTIME, &w.published);
	w.published.tv_sec += 3600;   /* everything is older than the "publish" */
	CHECK(tree_scan(&w, root) == 0);
	CHECK(w.out.s && strstr(w.out.s, fake));
	buf_release(&w.out);
	/* changed after the publish: hashed again, the made-up hash is gone */
	struct tree_scan again = {.known = known, .n_known = 2};
	CHECK(tree_scan(&again, root) == 0);
	CHECK(again.out.s && !strstr(again.out.s, fake) &&
	      strstr(again.out.s, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"));
	buf_release(&again.out);
	free(root);
	free(sub);
	free(file);
}
