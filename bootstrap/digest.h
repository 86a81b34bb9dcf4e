/* digest: streaming SHA-256 through OpenSSL's EVP interface, and hex helpers.
 * Every byte crossroot trusts goes through here: downloads are hashed while they stream. */
#ifndef CROSSROOT_DIGEST_H
#define CROSSROOT_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#define DIGEST_HEX_LEN 64   /* sha256 as lowercase hex, without the NUL */

struct digest {
	void *ctx;          /* EVP_MD_CTX */
};

/* Start a SHA-256 computation. digest_init never fails (allocation failure aborts). */
void digest_init(struct digest *d);
void digest_update(struct digest *d, const void *data, size_t len);
void digest_update_string(struct digest *d, const char *s);   /* includes the NUL: unambiguous */
/* Finish into `hex` (DIGEST_HEX_LEN + 1 bytes) and free the context. */
void digest_final(struct digest *d, char *hex);
void digest_release(struct digest *d);   /* abandon without finishing; safe twice */
/* The hash of what was added so far, into `hex`; `d` goes on (is a resumed part complete?). */
void digest_peek(const struct digest *d, char *hex);

/* Hash a whole file. Returns -1 (with error()) if it cannot be read. */
int digest_file(const char *path, char *hex);
/* Hash what is left to read of `fd` (`name` for messages); the caller closes it. */
int digest_fd(int fd, const char *name, char *hex);
/* Is `s` 64 lowercase hex digits? */
bool digest_is_valid_hex(const char *s);

#endif
