/* Unit tests of digest: SHA-256 of strings and files, and the hex check.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "digest.h"

TEST(digest)
{
	struct digest d;
	char hex[DIGEST_HEX_LEN + 1];
	digest_init(&d);
	digest_update(&d, "abc", 3);
	digest_final(&d, hex);
	CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
	/* streaming in pieces gives the same hash as one piece */
	digest_init(&d);
	digest_update(&d, "a", 1);
	char hex2[DIGEST_HEX_LEN + 1];
	digest_peek(&d, hex2);   /* the hash so far, and the digest goes on */
	CHECK(strcmp(hex2, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb") == 0);
	digest_update(&d, "bc", 2);
	digest_final(&d, hex2);
	CHECK(strcmp(hex, hex2) == 0);
	char *path = xasprintf("%s/abc", scratch);
	write_text(path, "abc");
	CHECK(digest_file(path, hex2) == 0 && strcmp(hex, hex2) == 0);
	free(path);
	CHECK(digest_is_valid_hex(hex));
	CHECK(!digest_is_valid_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
	CHECK(!digest_is_valid_hex("abc"));
	CHECK(digest_file("/nonexistent/file", hex2) < 0);
}
