/* sign: Ed25519 keys and signatures (OpenSSL's EVP_PKEY_ED25519) for what crossroot signs
 * itself: the entries of a remote stage cache (remote.h). Not OpenPGP: sources' upstream
 * signatures are openpgp.h's business.
 *
 * Text forms, as they appear in configuration files and signature files:
 *   public key   "ed25519:" and the raw 32-byte key as 64 lowercase hex digits
 *   signature    the raw 64-byte signature as 128 lowercase hex digits
 * A private key is a PKCS#8 PEM file ("-----BEGIN PRIVATE KEY-----"), mode 0600; one that
 * group or others may read is refused, as ssh refuses such a key. */
#ifndef CROSSROOT_SIGN_H
#define CROSSROOT_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#define SIGN_PUBLIC_LEN (8 + 64)    /* "ed25519:" + hex, without the NUL */
#define SIGN_SIGNATURE_LEN 128      /* hex, without the NUL */

struct sign_key;                    /* a private key (opaque) */

/* Make a new key into `path`, which must not exist (created 0600; missing parent directories
 * 0700), and write its public key's text into `public_key`. Returns 0, or -1 after error(). */
int sign_generate(const char *path, char public_key[SIGN_PUBLIC_LEN + 1]);

/* Load a private key file. NULL after error() naming the file and what is wrong with it. */
struct sign_key *sign_load(const char *path);
void sign_key_free(struct sign_key *k);
/* The text of the key's public half. */
void sign_public(const struct sign_key *k, char public_key[SIGN_PUBLIC_LEN + 1]);

/* Sign `data` into `signature` (hex). Returns 0, or -1 after error(). */
int sign_data(const struct sign_key *k, const void *data, size_t len,
              char signature[SIGN_SIGNATURE_LEN + 1]);

/* Does `signature` (hex) verify over `data` with `public_key` (text)? Malformed text of
 * either is simply false. */
bool sign_verify(const char *public_key, const char *signature, const void *data, size_t len);

/* Is `text` a well-formed public key? */
bool sign_public_valid(const char *text);

#endif
