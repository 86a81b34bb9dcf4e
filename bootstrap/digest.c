/* digest: SHA-256 over OpenSSL EVP (never the deprecated SHA256_Init family). */
#define _GNU_SOURCE
#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void digest_init(struct digest *d)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		abort();
	d->ctx = ctx;
}

void digest_update(struct digest *d, const void *data, size_t len)
{
	if (EVP_DigestUpdate(d->ctx, data, len) != 1)
		abort();
}

void digest_update_string(struct digest *d, const char *s)
{
	digest_update(d, s, strlen(s) + 1);
}

void digest_final(struct digest *d, char *hex)
{
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(d->ctx, raw, &n) != 1)
		abort();
	for (unsigned int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", raw[i]);
	hex[2 * n] = '\0';
	digest_release(d);
}

void digest_peek(const struct digest *d, char *hex)
{
	struct digest copy = {EVP_MD_CTX_new()};
	if (!copy.ctx || EVP_MD_CTX_copy_ex(copy.ctx, d->ctx) != 1)
		abort();
	digest_final(&copy, hex);
}

void digest_release(struct digest *d)
{
	EVP_MD_CTX_free(d->ctx);
	d->ctx = NULL;
}

int digest_file(const char *path, char *hex)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s':", path);
		return -1;
	}
	int rc = digest_fd(fd, path, hex);
	close(fd);
	return rc;
}

int digest_fd(int fd, const char *name, char *hex)
{
	struct digest d;
	digest_init(&d);
	static char chunk[1 << 17];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error("cannot read '%s':", name);
			digest_release(&d);
			return -1;
		}
		if (n == 0)
			break;
		digest_update(&d, chunk, (size_t)n);
	}
	digest_final(&d, hex);
	return 0;
}

bool digest_is_valid_hex(const char *s)
{
	size_t i = 0;
	for (; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == DIGEST_HEX_LEN;
}
