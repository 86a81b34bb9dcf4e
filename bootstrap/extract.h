/* extract: unpack a verified archive (tar, tar.gz, tar.xz, zip, ... via libarchive) into a
 * new directory, safely and only in part if asked.
 *
 * Safety: an entry is refused, and the whole extraction fails, if its path is absolute or has
 * a `..` component, if it is a device, FIFO or socket, or if it carries set-user/group-id
 * bits. Names are taken as the file system takes them (`.` and `//` do not count). Links
 * are resolved as the kernel would, through the links extracted before (and, at the end,
 * after) them: a symbolic link whose target leads outside or loops is refused, as is any
 * entry written through a symbolic link or replacing one, a hard link whose target goes
 * through one, and a hard link to a symbolic link that leads outside from its new place.
 * libarchive's secure flags enforce the same underneath. Limits bound the entry count and
 * the bytes written.
 * Modes: build steps read trees as another user (nobody, as root), so every directory is
 * 0755 and every file readable by all, executable by all if by anyone, writable by its owner
 * at most: no tarball's 0700 directory or 0666 file reaches a step as it was.
 * Atomicity: entries go to DEST.tmp.<pid>, renamed to DEST at the end; DEST exists only
 * when complete. Every write must succeed whole: a full disk (which libarchive reports only
 * as a warning) is an error naming the file and errno's words. On any failure nothing is
 * left but what existed before. */
#ifndef CROSSROOT_EXTRACT_H
#define CROSSROOT_EXTRACT_H

#include <stddef.h>

#include "util.h"

struct extract_options {
	const char *archive;        /* the file to read */
	const char *dest;           /* must not exist yet */
	int strip;                  /* leading path components removed; entries left empty skipped */
	const struct strlist *include;  /* fnmatch patterns on the stripped path; empty: all */
	const struct strlist *exclude;  /* patterns never extracted (a match on any prefix) */
	size_t max_entries;         /* 0: default (1,000,000) */
	long long max_bytes;        /* bound on what the archive expands to (all entries' sizes,
	                               extracted or not); 0: extract_default_max_bytes() */
};

/* The default bound follows the archive itself: sources expand 5x (gzip) to 11x (xz), so 32
 * times the archive's size, at least 64 MiB and at most 16 GiB. A few kilobytes of xz that
 * expand to gigabytes are refused at the first entry's header, before any decompression. */
enum {
	EXTRACT_RATIO = 32,
};
#define EXTRACT_MIN_BYTES (64LL << 20)
#define EXTRACT_MAX_BYTES (16LL << 30)
long long extract_default_max_bytes(long long archive_size);

/* What went wrong, for the caller's exit status: the archive's fault (exit 3, "could not
 * be extracted") or the machine's (exit 1). */
enum extract_failure {
	EXTRACT_FAILED = -1,    /* the file system failed: no space (ENOSPC), cannot create, rename,
	                           the destination exists, interrupted */
	EXTRACT_REFUSED = -2,   /* the archive is refused: a hostile entry (path, type, set-id,
	                           link), over a limit (entries, bytes), damaged or unreadable by
	                           libarchive, or nothing in it matched `include` */
};

/* Returns 0, or EXTRACT_FAILED or EXTRACT_REFUSED after error() naming the archive and the
 * offending entry or file. */
int extract_archive(const struct extract_options *opts);

/* Copy the regular-file member `member` of `archive` (its path as stored, a leading "./"
 * ignored) to the new file `out_path`, hashing it: `hex` receives its sha256. At most
 * `max_bytes` are written. Returns 0, or EXTRACT_REFUSED (no such member, not a regular file,
 * too large, damaged) or EXTRACT_FAILED (writing) after error(); on failure `out_path` is
 * removed. The caller compares `hex` with its pin before anything uses the file. */
int extract_member(const char *archive, const char *member, const char *out_path,
                   long long max_bytes, char *hex);

/* Does `pattern` match `path` or one of its leading directories? (exported for the tests) */
int extract_path_matches(const char *pattern, const char *path);

/* Is `path` (after the archive's stripped components) in what `include` and `exclude` choose?
 * An empty or NULL include list takes everything. */
bool extract_wanted(const struct strlist *include, const struct strlist *exclude,
                    const char *path);

#endif
