/* openpgp: check a detached OpenPGP signature with gpgv against one keyring pinned in the
 * repository, and nothing else (not the user's keyrings, not a key server). A missing, bad
 * or unknown-key signature is an error, never a warning. */
#ifndef CROSSROOT_OPENPGP_H
#define CROSSROOT_OPENPGP_H

#include "util.h"

/* Verify `signature` (armored or binary) of `file` with the keys of `keyring` (an armored
 * .asc export or a binary keyring). `scratch_dir` holds the binary form of the keyring.
 * Returns 0 if gpgv reports a good signature; else -1, with gpgv's words in `why`. */
int openpgp_verify(const char *keyring, const char *signature, const char *file,
                   const char *scratch_dir, struct buf *why);

#endif
