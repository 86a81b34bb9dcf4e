/* Unit tests of sign: Ed25519 keys, signatures, and a key file others may read.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "sign.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

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

/* A key file that is a FIFO is refused at once (never waited on); an encrypted key is an
 * error saying so, never a prompt for its pass phrase. */
TEST(sign_key_files)
{
	int rc;
	char *fifo = xasprintf("%s/keys/fifo.pem", scratch);
	mkdir_p(fifo, 0700);
	rmdir(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	alarm(10);   /* a hang is a failure, not a stuck test run */
	char *err = capture_stderr(load_key, fifo, &rc);
	alarm(0);
	CHECK(rc < 0 && err && strstr(err, "fifo.pem") && strstr(err, "not a regular file"));
	free(err);

	char *locked = xasprintf("%s/keys/locked.pem", scratch);
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	int fd = open(locked, O_WRONLY | O_CREAT | O_EXCL, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(pkey && f && PEM_write_PrivateKey(f, pkey, EVP_aes_256_cbc(),
	                                        (unsigned char *)"hunter2", 7, NULL, NULL) == 1);
	if (f)
		fclose(f);
	EVP_PKEY_free(pkey);
	alarm(10);
	err = capture_stderr(load_key, locked, &rc);
	alarm(0);
	CHECK(rc < 0 && err && strstr(err, "locked.pem") && strstr(err, "encrypted"));
	free(err);
	free(fifo);
	free(locked);
}
