/* sign: Ed25519 key files, signing and verifying through OpenSSL's EVP_PKEY interface.
 * See sign.h. */
#define _GNU_SOURCE
#include "sign.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define PREFIX "ed25519:"

struct sign_key {
	EVP_PKEY *pkey;
};

/* OpenSSL's last error as words, for messages. */
static const char *openssl_reason(void)
{
	static char text[256];
	unsigned long e = ERR_get_error();
	if (!e)
		return "unknown reason";
	ERR_error_string_n(e, text, sizeof(text));
	ERR_clear_error();
	return text;
}

static void to_hex(const unsigned char *raw, size_t n, char *hex)
{
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", raw[i]);
	hex[2 * n] = '\0';
}

/* Exactly 2*n lowercase hex digits into `raw`. */
static bool from_hex(const char *hex, unsigned char *raw, size_t n)
{
	if (strlen(hex) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;
		for (int j = 0; j < 2; j++) {
			char c = hex[2 * i + (size_t)j];
			if (c >= '0' && c <= '9')
				v = v * 16 + (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (unsigned)(c - 'a' + 10);
			else
				return false;
		}
		raw[i] = (unsigned char)v;
	}
	return true;
}

static void public_text(EVP_PKEY *pkey, char out[SIGN_PUBLIC_LEN + 1])
{
	unsigned char raw[32];
	size_t n = sizeof(raw);
	if (EVP_PKEY_get_raw_public_key(pkey, raw, &n) != 1 || n != sizeof(raw))
		abort();   /* an Ed25519 key always has one */
	memcpy(out, PREFIX, strlen(PREFIX));
	to_hex(raw, n, out + strlen(PREFIX));
}

bool sign_public_valid(const char *text)
{
	unsigned char raw[32];
	return strncmp(text, PREFIX, strlen(PREFIX)) == 0 &&
	       from_hex(text + strlen(PREFIX), raw, sizeof(raw));
}

int sign_generate(const char *path, char public_key[SIGN_PUBLIC_LEN + 1])
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir, 0700) < 0) {
			free(dir);
			return -1;
		}
	}
	free(dir);
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!pkey) {
		error("cannot generate an Ed25519 key: %s", openssl_reason());
		return -1;
	}
	int rc = -1;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (fd < 0)
		error(errno == EEXIST ? "'%s' already exists: a key is never overwritten"
		                      : "cannot create '%s':", path);
	else if (!f)
		error("cannot open '%s':", path);
	else if (PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL) != 1)
		error("cannot write the key to '%s': %s", path, openssl_reason());
	else if (fflush(f) != 0 || fsync(fd) < 0)
		error("cannot write '%s':", path);
	else
		rc = 0;
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	if (rc < 0 && fd >= 0)
		unlink(path);
	if (rc == 0)
		public_text(pkey, public_key);
	EVP_PKEY_free(pkey);
	return rc;
}

/* OpenSSL's pass phrase callback: records that one was needed, and gives none. */
static int no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf, (void)size, (void)rwflag;
	*(bool *)arg = true;
	return -1;
}

struct sign_key *sign_load(const char *path)
{
	int fd = open_regular(path, "signing key");
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		error("cannot open signing key '%s':", path);
		close(fd);
		return NULL;
	}
	if (st.st_mode & 077) {
		error("signing key '%s' may be read by others (mode %04o): chmod 600 it", path,
		      (unsigned)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		error("cannot open signing key '%s':", path);
		close(fd);
		return NULL;
	}
	/* never prompt for a pass phrase: an encrypted key is an error */
	bool encrypted = false;
	EVP_PKEY *pkey = PEM_read_PrivateKey(f, NULL, no_passphrase, &encrypted);
	fclose(f);
	if (!pkey && encrypted) {
		error("signing key '%s' is encrypted (it has a pass phrase), and crossroot never asks "
		      "for one: decrypt it ('openssl pkey -in KEY -out NEW', then chmod 600 NEW) or make "
		      "one with 'crossroot key generate'", path);
		return NULL;
	}
	if (!pkey) {
		error("'%s' is not a PEM private key: %s", path, openssl_reason());
		return NULL;
	}
	if (EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
		error("'%s' is not an Ed25519 key (crossroot key generate makes one)", path);
		EVP_PKEY_free(pkey);
		return NULL;
	}
	struct sign_key *k = xcalloc(1, sizeof(*k));
	k->pkey = pkey;
	return k;
}

void sign_key_free(struct sign_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

void sign_public(const struct sign_key *k, char public_key[SIGN_PUBLIC_LEN + 1])
{
	public_text(k->pkey, public_key);
}

int sign_data(const struct sign_key *k, const void *data, size_t len,
              char signature[SIGN_SIGNATURE_LEN + 1])
{
	unsigned char raw[64];
	size_t n = sizeof(raw);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int rc = -1;
	if (!ctx)
		abort();
	/* Ed25519 signs the message itself: no digest is named */
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) != 1 ||
	    EVP_DigestSign(ctx, raw, &n, data, len) != 1 || n != sizeof(raw))
		error("cannot sign: %s", openssl_reason());
	else {
		to_hex(raw, n, signature);
		rc = 0;
	}
	EVP_MD_CTX_free(ctx);
	return rc;
}

bool sign_verify(const char *public_key, const char *signature, const void *data, size_t len)
{
	unsigned char key[32], sig[64];
	if (!sign_public_valid(public_key) || !from_hex(public_key + strlen(PREFIX), key, 32) ||
	    !from_hex(signature, sig, sizeof(sig)))
		return false;
	EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key, sizeof(key));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool good = pkey && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
	            EVP_DigestVerify(ctx, sig, sizeof(sig), data, len) == 1;
	ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	return good;
}
