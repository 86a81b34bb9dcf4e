/* cache: the stage cache. Finished stage results live under their key; each carries a
 * manifest of what it installed, and the sha256 of that manifest is the result's output id,
 * which is what stages depending on it key on (so a rebuild that installs the same bytes
 * changes nothing downstream: early cutoff).
 *
 * Layout (DIR = the stage cache directory):
 *   DIR/<key>/files/      the installed tree; files read-only, modes normalised
 *   DIR/<key>/manifest    see below; written last, so its ctime is the publish time
 *   DIR/<key>/output      sha256 of manifest: the output id
 *   DIR/<key>/inputs      the key's input lines (for `plan` explanations)
 *   DIR/<key>/owner       "<target> <stage>", for prune's grouping
 *   DIR/<key>/seconds     how long the build took
 *   DIR/<key>/checked     the stat record of the last full check (below); may be absent
 *   DIR/.tmp-<key>-<pid>  a publish in progress, renamed to DIR/<key> when complete
 *   DIR/.tmp-<what>-<key>-<pid>  scratch of other work on a key (remote.h: pull, push)
 *   DIR/.lock             builds hold it shared, prune exclusive
 *
 * The manifest's format, its scan and its parser are tree.h's. Modes are normalised when
 * published: no set-id or sticky bit, no group or other write.
 *
 * Nothing is trusted blindly: a result is checked against its manifest on every use (types,
 * modes, sizes, link targets and the set of names; a file changed since the publish, by its
 * ctime, is hashed again), and fully hashed with `verify`. A result that fails is removed
 * with a warning naming what differs, and rebuilt. Results are copied out (a reflink where
 * the file system can), never hard-linked, so a build step cannot change a cached result.
 *
 * The full check reads the manifest and every directory and looks at every entry; what a
 * use needs to know is only that nothing changed since the last full check. So a full check
 * that passed writes the stat record `checked`, and the next use compares with it instead:
 *   crossroot-checked 1
 *   <output id>
 *   m <inode> <ctime s> <ctime ns> <size>            the manifest
 *   o <inode> <ctime s> <ctime ns> <size>            the output file
 *   d <inode> <ctime s> <ctime ns> 0 <mode> .        files/ itself
 *   <d|f> <inode> <ctime s> <ctime ns> <size> <mode> <path>   every directory and file of
 *                                                     the manifest, in its order
 * Why that is enough: writing to a file, truncating, chmod, chown or a new hard link changes
 * the file's ctime, which nothing can set back (but the clock); adding, removing or renaming
 * an entry (a file, a link, a directory) changes its directory's ctime; replacing a file is
 * a new inode. So every directory and file is still looked at (one fstatat each, no reading
 * of directories, links or the manifest), and anything that differs from the record makes
 * the use do the full check, which writes a new record if the result passes. A link is not
 * looked at: it cannot change in place, only be replaced, which changes its directory. An
 * entry whose ctime is within CACHE_RECORD_SETTLE seconds of the check is not recorded (the
 * kernel's ctime is coarse: a change within the same tick could keep it), so a result
 * checked just after its publish gets its record at a later use. The record is trusted as
 * the manifest's ctime is (whoever rewrites it could rewrite the manifest); `verify` ignores
 * it. */
#ifndef CROSSROOT_CACHE_H
#define CROSSROOT_CACHE_H

#include <stdbool.h>

#include "digest.h"
#include "tree.h"
#include "util.h"

/* A result's directory: <dir>/<key>; its manifest and its files. Only this module knows the
 * layout: others ask for these paths. The caller frees them. */
char *cache_result_dir(const char *dir, const char *key);
char *cache_result_manifest(const char *dir, const char *key);
char *cache_result_files(const char *dir, const char *key);
/* A scratch directory (not created here) for this process's work on `key` beside the results,
 * on the same file system: <dir>/.tmp-<what>-<key>-<pid>. cache_remove_leftovers() removes
 * it once the process is gone. */
char *cache_scratch_dir(const char *dir, const char *what, const char *key);

/* Is `key` in the cache, whole and unchanged? On 1, `output` holds its output id. A result
 * that fails the check is removed (warning) and 0 returned. -1: an I/O error. */
int cache_lookup(const char *dir, const char *key, bool verify, char output[DIGEST_HEX_LEN + 1]);
/* Entries changed less than this long before a full check are not recorded (see above);
 * tests set 0. */
extern int cache_record_settle;
#define CACHE_RECORD_SETTLE 2

/* Move `destdir` (a finished stage's installed tree) into the cache under `key`, with its
 * manifest and the given records. On success `output` holds the output id. */
int cache_publish(const char *dir, const char *key, const char *destdir,
                  const struct strlist *inputs, const char *owner, double seconds,
                  char output[DIGEST_HEX_LEN + 1]);

/* cache_publish for a result made elsewhere (the remote cache, remote.h): `destdir` is
 * published only if the manifest it gets here, modes normalised and every file hashed, equals
 * `manifest` byte for byte. Returns 1 (published, `output` set), 0 (it differs: nothing is
 * published, `destdir` is removed, *why names the first differing line; free it) or -1. */
int cache_publish_expected(const char *dir, const char *key, const char *destdir,
                           const char *manifest, char **why, const struct strlist *inputs,
                           const char *owner, char output[DIGEST_HEX_LEN + 1]);

/* Union of several results, by their manifests: the set of paths each installs. Two results
 * that install the same path with different contents are an error naming both.
 * A result is checked (cache_lookup, or published) before a union takes it, and may change
 * after: the union copies only what matches the manifest that was checked. Its manifest must
 * still hash to the output id checked, and each file's copy is hashed and compared with its
 * manifest line after it is written (a reflink or a copy from a descriptor opened without
 * following a link or blocking on a FIFO). A result that differs is an error naming the
 * stage and the file, and is removed from the cache: the next build makes or pulls it again. */
struct cache_union {
	struct tree_entry *entries;
	size_t n, cap;
	struct strlist results;     /* owner, result directory, ...: what to remove if changed */
};
/* Add result `key` (made by `owner`, a name for messages) whose output id was checked to be
 * `output`. */
int cache_union_add(struct cache_union *u, const char *dir, const char *key, const char *owner,
                    const char *output);
/* Check for conflicts, then copy every entry into `dest` (which must exist). Nothing is
 * written through a symbolic link, and nothing outside `dest`. */
int cache_union_install(struct cache_union *u, const char *dest);
void cache_union_release(struct cache_union *u);

/* Source trees (work/src) are shared by stages and targets: the manifest of a tree is
 * recorded when it is extracted (`manifest`, beside it) and the tree is checked the same way
 * before a run uses it. cache_tree_check() returns 1 if it is whole, 0 (with a warning if it
 * changed) if it must be extracted again. */
int cache_tree_record(const char *dir, const char *manifest);
int cache_tree_check(const char *dir, const char *manifest, bool verify);

/* Lock the cache: shared for builds, exclusive for prune. Returns a descriptor to keep, -1
 * after error(), or -2 if `wait` is false and another holds a conflicting lock. */
int cache_lock(const char *dir, bool exclusive, bool wait);

/* Remove leftovers of killed runs (publishes whose process is gone). */
void cache_remove_leftovers(const char *dir);

/* Prune: keep every result in `keep_keys`, plus the `keep` most recently used of every
 * (target, stage); remove downloads (in `downloads`) whose hash is not in `pins`. Takes the
 * exclusive lock itself. */
int cache_prune(const char *dir, const char *downloads, const struct strlist *keep_keys,
                const struct strlist *pins, int keep, bool wait);

#endif
