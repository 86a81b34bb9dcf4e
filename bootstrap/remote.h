/* remote: a stage cache shared over HTTP(S). Finished stage results are pulled by key before a
 * stage would be built, and pushed after one was built (read-write mode), with plain GET, PUT,
 * DELETE and MOVE: the protocol of Bazel's and ccache's HTTP caches, which nginx's WebDAV
 * module serves. The stage key never depends on any of this.
 *
 * Layout on the server (URL = the configured base URL):
 *   URL/<key>.tar.zst    the result's files: a tar (pax) made here entry by entry from the
 *                        manifest, in its order, with owner 0, mtime 0 and the manifest's
 *                        modes, zstd-compressed; the same files give the same bytes
 *   URL/<key>.manifest   the result's manifest, exactly as in the local stage cache (cache.h);
 *                        its sha256 is the result's output id
 *   URL/<key>.sig        written last: the entry exists for readers once this exists
 * Signature file format (version 1):
 *   crossroot-remote-signature 1
 *   public-key ed25519:<64 hex>
 *   data <sha256 of the .tar.zst> <its size>
 *   signature <128 hex>
 * The signature (Ed25519, sign.h) is over the message
 *   "crossroot-remote-entry 1\nkey <key>\noutput <output id>\ndata <sha256> <size>\n"
 * so it binds the key (an entry cannot be replayed under another key), the manifest (through
 * its hash) and the data's bytes.
 *
 * Nothing remote is trusted blindly. A pull takes the entry only if its public key is trusted,
 * the signature verifies over the key asked for, the manifest fetched and the data fetched
 * (which must hash to the signed sha256, and is never read past the signed size); the data is
 * then unpacked into the stage cache's scratch (every entry must be in the signed manifest,
 * with its type and size) and published through cache_publish_expected(): only if every file,
 * hashed and with modes normalised, gives the signed manifest byte for byte. Anything else is
 * a warning naming the entry's URL and key, and the stage is built here. A server that cannot
 * be reached (connection refused, reset, timeout, a truncated body) is one warning, and the
 * remote cache is not asked again for the rest of the run; an HTTP error is a warning for that
 * entry. None of this ever fails a build.
 *
 * A push uploads the data under a temporary name (URL/<key>.tar.zst.part-<pid>-<random>) and
 * MOVEs it into place (a server without MOVE gets a PUT of the final name instead), then the
 * manifest, then the signature last; an older signature of the key is deleted first. A reader
 * therefore sees no signature, or one whose data and manifest are complete. Two writers of one
 * key at once can leave a signature beside the other's data: readers refuse that entry (the
 * hash differs) until the next push, which is safe.
 *
 * Configuration: $CROSSROOT_REMOTE_CACHE_CONFIG, else $XDG_CONFIG_HOME/crossroot/remote-cache,
 * else ~/.config/crossroot/remote-cache (a missing default file is fine): lines of
 * `name = value`, '#' starts a comment:
 *   url = https://cache.example/crossroot      the base URL (--remote-cache overrides it)
 *   mode = read | read-write                   default read (--remote-cache-mode overrides)
 *   signing-key = FILE                         private key for pushes (read-write needs it);
 *                                              relative to the file's directory; ~/ is $HOME
 *   trusted-key = ed25519:<hex>                repeatable; the signing key's own public half
 *                                              is trusted too
 *   timeout = SECONDS                          default 600: one entry's pull (signature,
 *                                              manifest and data together) that has not ended
 *                                              by then is abandoned (a miss, warned, naming the
 *                                              entry and the limit), and, as a server too slow
 *                                              to use, the remote cache is not asked again in
 *                                              this run; a server dripping bytes never holds a
 *                                              build longer than this
 *   max-entry-size = SIZE                      default 4G: bytes, or with a K, M, G or T suffix
 *                                              (powers of 1024); an entry whose signed data (or
 *                                              manifest) is larger is refused before its data
 *                                              is asked for (a miss, warned with the limit) */
#ifndef CROSSROOT_REMOTE_H
#define CROSSROOT_REMOTE_H

#include <stdbool.h>
#include <stdio.h>

#include "plan.h"
#include "sign.h"
#include "util.h"

/* ---- the transport ----
 * Every exchange with the server is one of four operations on a name under the base URL
 * ("<key>.sig"): remote_http.h does them over HTTP(S), and the unit tests put an in-memory
 * fake in its place. The policy (what to ask for, limits, hashes, signatures, what a failure
 * means) is remote.c's alone. Each operation says what happened and, for anything but
 * REMOTE_OK, puts words for a message in `why` (REMOTE_WHY_SIZE bytes): "HTTP status 500",
 * "Failed to connect to 127.0.0.1 port 1: Connection refused". */
enum remote_outcome {
	REMOTE_OK,
	REMOTE_MISSING,             /* the server has no such name (HTTP 404 or 410) */
	REMOTE_FAILED,              /* the server answered with another error (a MOVE refused) */
	REMOTE_UNREACHABLE,         /* no whole answer: refused, reset, timed out, cut off in the
	                               middle of a body, or stopped by Ctrl-C (`interrupted`) */
	REMOTE_STOPPED,             /* our side stopped it: the sink took no more bytes, or the
	                               file to upload could not be read */
};
enum { REMOTE_WHY_SIZE = 320 };

/* Takes a GET's body, piece by piece, in order; false stops the transfer (REMOTE_STOPPED). */
typedef bool remote_sink(void *arg, const void *data, size_t n);

struct remote_transport;
struct remote_transport_ops {
	enum remote_outcome (*get)(struct remote_transport *t, const char *name, remote_sink *sink,
	                           void *arg, char *why);
	/* `size` bytes read from `from` become `name`, replacing what was there */
	enum remote_outcome (*put)(struct remote_transport *t, const char *name, FILE *from,
	                           long long size, char *why);
	/* `from` becomes `to`, replacing what was there (WebDAV's MOVE with Overwrite: T) */
	enum remote_outcome (*move)(struct remote_transport *t, const char *from, const char *to,
	                            char *why);
	enum remote_outcome (*delete)(struct remote_transport *t, const char *name, char *why);
	void (*free)(struct remote_transport *t);
};
/* Implementations put this first in their own struct. `deadline` (now_seconds(), util.h) is
 * set by remote.c while an entry is pulled, 0 otherwise: a request still running then is
 * ended (REMOTE_UNREACHABLE); a transport that cannot keep it must at least not wait past it
 * for a request to start. */
struct remote_transport {
	const struct remote_transport_ops *ops;
	double deadline;
};

enum { REMOTE_DEFAULT_TIMEOUT = 600 };
#define REMOTE_DEFAULT_MAX_ENTRY_SIZE (4LL << 30)

struct remote_cache {
	char *url;                  /* base URL, no trailing '/'; NULL: no remote cache */
	bool push;                  /* read-write: built results are pushed */
	struct strlist trusted;     /* public keys (sign.h text) whose entries are taken */
	struct sign_key *signer;    /* read-write: what entries are signed with */
	char *config;               /* the configuration file read, or NULL (for messages) */
	char *key_file;             /* the signing key's file, or NULL (steps must not read it) */
	bool unreachable;           /* the server failed this run: not asked again */
	long timeout_seconds;       /* one entry's pull; 0: REMOTE_DEFAULT_TIMEOUT */
	long long max_entry_size;   /* bytes; 0: REMOTE_DEFAULT_MAX_ENTRY_SIZE */
	struct remote_transport *transport;   /* for `url`; remote_release() frees it */
};

/* Read the configuration file, then apply the command line's `url` and `mode` (either may be
 * NULL). With no URL anywhere, r->url stays NULL and nothing else is required. Returns 0, or -1
 * after error() (a malformed file names its line; read-write without a signing key, a URL
 * that is not http(s), no trusted key at all): a usage error. The transport is HTTP's
 * (remote_http.h) with `ca_bundle` and `stall_seconds`. A test may instead fill the struct
 * itself: url (allocated), push, trusted, signer, config and its own transport. */
int remote_configure(struct remote_cache *r, const char *url, const char *mode,
                     const char *ca_bundle, long stall_seconds);
void remote_release(struct remote_cache *r);

/* The remote cache as a plan_source (plan.h): plan_pull() and plan_pull_stage() decide which
 * stages are asked for and write the node states; the remote cache only pulls.
 * remote_pull_plan: before a build, every stage whose key is known (and, as their dependencies
 * become cached, pending ones), then trees only pulled stages needed are skipped.
 * remote_pull_stage: one stage whose key is known (NODE_WAITING): 1 if it is now NODE_CACHED,
 * 0 if not (no entry, refused or unreachable: warned), -1 on a local error (the stage cache
 * cannot be written). `r` may be NULL, or have no URL: nothing is asked. */
int remote_pull_plan(struct remote_cache *r, struct plan *p);
int remote_pull_stage(struct remote_cache *r, struct plan *p, struct node *n);

/* After a stage was built and published locally: push it (read-write mode; else nothing).
 * Failures are warnings. */
void remote_push_stage(struct remote_cache *r, const struct plan *p, const struct node *n);

/* The same by key, for a stage cache directory (cache.h), without a plan. remote_pull: the
 * entry `key` into `stage_cache`, published with `inputs` and `owner` as cache_publish()
 * records them; `label` names the stage in messages. 1 if pulled (`output` holds its output
 * id), 0 if not (no entry, refused or unreachable: warned; nothing is left behind), -1 on a
 * local error. Nothing is asked once the server was unreachable in this run. remote_push:
 * result `key` of `stage_cache` to the server (read-write mode; else nothing), warnings only. */
int remote_pull(struct remote_cache *r, const char *stage_cache, const char *key,
                const char *label, const struct strlist *inputs, const char *owner,
                char output[DIGEST_HEX_LEN + 1]);
void remote_push(struct remote_cache *r, const char *stage_cache, const char *key,
                 const char *label);

/* `crossroot key generate [FILE]` and `crossroot key public FILE`: argv holds the words after
 * "key". Returns an exit code. */
int remote_key_command(int argc, char **argv);

#endif
