/* Unit tests of package: verify against a package manifest.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "digest.h"
#include "package.h"

/* verify against a hand-written manifest: the same, a changed byte, an extra and a missing
 * file, no manifest */
TEST(package_verify)
{
	char *root = xasprintf("%s/pkgtree", scratch);
	char *meta = xasprintf("%s/share/crossroot/package", root);
	CHECK(mkdir_p(meta, 0755) == 0);
	char *file = xasprintf("%s/a.txt", root);
	CHECK(write_file_atomic(file, "hello\n", 6, 0644) == 0);
	char *link = xasprintf("%s/b", root);
	CHECK(symlink("a.txt", link) == 0);
	char hex[DIGEST_HEX_LEN + 1];
	CHECK(digest_file(file, hex) == 0);
	char *manifest = xasprintf("crossroot-package 1\ntarget\tt\nf\t644\t6\t%s\ta.txt\n"
	                           "l\ta.txt\tb\nd\t755\tshare\nd\t755\tshare/crossroot\n"
	                           "d\t755\tshare/crossroot/package\n", hex);
	char *mpath = xasprintf("%s/%s", root, PACKAGE_MANIFEST);
	CHECK(write_file_atomic(mpath, manifest, strlen(manifest), 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(write_file_atomic(file, "hellO\n", 6, 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(write_file_atomic(file, "hello\n", 6, 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(unlink(link) == 0 && symlink("elsewhere", link) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(unlink(link) == 0 && symlink("a.txt", link) == 0);
	CHECK(chmod(file, 0755) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(chmod(file, 0600) == 0);   /* a umask's doing: only the execute bit counts */
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(unlink(file) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(unlink(mpath) == 0);
	CHECK(package_verify(root) == PACKAGE_UNREADABLE);
	free(mpath);
	free(manifest);
	free(link);
	free(file);
	free(meta);
	free(root);
}
