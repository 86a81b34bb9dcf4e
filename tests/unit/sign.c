/* Unit tests of sign: Ed25519 keys, signatures, and a key file others may read.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "sign.h"

static int sign_generate_again(void *path)
{
	char pub[SIGN_PUBLIC_LEN + 1];
	return sign_generate(path, pub);
}

static int load_key(void *path)
{
	struct sign_key *k = sign_load(path);
	sign_key_free(k);
	return k ? 0 : -1;
}

TEST(sign)
{
	char *path = xasprintf("%s/keys/k.pem", scratch);
	char pub[SIGN_PUBLIC_LEN + 1], again[SIGN_PUBLIC_LEN + 1], sig[SIGN_SIGNATURE_LEN + 1];
	CHECK(sign_generate(path, pub) == 0);
	CHECK(sign_public_valid(pub) && strncmp(pub, "ed25519:", 8) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	int rc;
	free(capture_stderr(sign_generate_again, path, &rc));
	CHECK(rc < 0);   /* never overwritten */
	struct sign_key *k = sign_load(path);
	CHECK(k != NULL);
	if (!k)
		return;
	sign_public(k, again);
	CHECK(strcmp(pub, again) == 0);
	const char msg[] = "crossroot-remote-entry 1\nkey abc\n";
	CHECK(sign_data(k, msg, strlen(msg), sig) == 0 && strlen(sig) == SIGN_SIGNATURE_LEN);
	CHECK(sign_verify(pub, sig, msg, strlen(msg)));
	CHECK(!sign_verify(pub, sig, msg, strlen(msg) - 1));       /* other data */
	char bad[SIGN_SIGNATURE_LEN + 1];
	memcpy(bad, sig, sizeof(bad));
	bad[0] = bad[0] == '0' ? '1' : '0';
	CHECK(!sign_verify(pub, bad, msg, strlen(msg)));           /* other signature */
	char other[SIGN_PUBLIC_LEN + 1];
	char *path2 = xasprintf("%s/keys/other.pem", scratch);
	CHECK(sign_generate(path2, other) == 0);
	CHECK(!sign_verify(other, sig, msg, strlen(msg)));         /* another key */
	CHECK(!sign_verify("ed25519:12", sig, msg, strlen(msg)));  /* malformed key text */
	CHECK(!sign_public_valid("ed25519:ABCDEF"));
	/* a key others may read is refused */
	chmod(path2, 0644);
	char *err = capture_stderr(load_key, path2, &rc);
	CHECK(rc < 0 && err && strstr(err, "may be read by others"));
	free(err);
	sign_key_free(k);
	free(path);
	free(path2);
}
