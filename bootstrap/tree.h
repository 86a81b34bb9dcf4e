/* tree: a directory tree that a build step made (or may have touched), walked through
 * directory descriptors so that nothing a step left behind makes crossroot act elsewhere.
 *
 * The one link/type policy: a walk starts at a directory it opens itself with O_NOFOLLOW (a
 * link there is refused, naming it), looks at every entry with fstatat(AT_SYMLINK_NOFOLLOW),
 * descends only into real directories opened with O_NOFOLLOW relative to their parent, and
 * reports a link as a link: it never resolves one. Entries come parents first, names in
 * strcmp order, so every walk over the same tree sees the same sequence.
 *
 * Callers act on an entry through its directory descriptor (`dirfd` + `name`: fchmodat,
 * fchownat, openat with O_NOFOLLOW, readlinkat), never through a path string. */
#ifndef CROSSROOT_TREE_H
#define CROSSROOT_TREE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "digest.h"
#include "util.h"

struct tree_item {
	int dirfd;          /* the directory holding it, open for the visit's duration */
	const char *name;   /* its name there */
	const char *path;   /* relative to the walk's root */
	const char *root;   /* the root as given, for messages */
	struct stat st;     /* lstat() of it */
};

/* What a visit returns: TREE_NEXT (go on; into a directory's entries too), TREE_SKIP (not into
 * this directory), or -1 (stop: the walk returns -1; the visit has reported why). */
enum { TREE_NEXT = 0, TREE_SKIP = 1 };
typedef int (*tree_visit_fn)(const struct tree_item *it, void *arg);

/* Open `path` as a directory (O_CLOEXEC) without following a link in its last component;
 * links in the components before it are followed (callers name directories crossroot made,
 * with a step's output at most the last component). A link there is refused as "WHOSE a link
 * where a directory must be: 'PATH' (crossroot never follows it)", anything else that is not
 * a directory as "WHOSE 'PATH', which is not a directory", where WHOSE is `whose` (e.g. "the
 * stage 'musl' left") or "found" when whose is NULL. Returns the descriptor; -2 (no error
 * printed) when it does not exist and `missing_ok`; else -1 after error() (a missing path
 * too: "cannot open the directory 'PATH': No such file or directory"). */
int tree_open(const char *path, const char *whose, bool missing_ok);

/* Visit every entry below `root` (not root itself). Returns 0, or -1 (after error() or a
 * visit's -1). `whose` as in tree_open(). A missing root is an error. */
int tree_walk(const char *root, const char *whose, tree_visit_fn visit, void *arg);
/* The same from a directory already open (borrowed: not closed). */
int tree_walk_fd(int rootfd, const char *root, tree_visit_fn visit, void *arg);

/* Read an entry's link target into `out` (size bytes). Returns 0, or -1 after error(). */
int tree_read_link(const struct tree_item *it, char *out, size_t size);
/* Open an entry's regular file for reading (O_NOFOLLOW). Returns the descriptor or -1. */
int tree_open_file(const struct tree_item *it);

/* Make `rel` (a relative path of directories, "a/b/c") below the directory `rootfd`, each
 * component with mode `mode` if absent; an existing link or non-directory on the way is
 * refused naming `root`/`rel`. Returns a descriptor of the last directory, or -1. */
int tree_make_dirs(int rootfd, const char *root, const char *rel, mode_t mode);

/* Give every entry below `root`, and root itself, to uid:gid (links themselves, never what they
 * name). Returns 0 or -1 after error(). */
int tree_chown(const char *root, uid_t uid, gid_t gid);

/* ---- manifests ----
 * The text form of a tree, one entry per line, tab separated, parents before children, in
 * tree_walk()'s order (the stage cache's and the remote cache's manifests, cache.h, remote.h):
 *   crossroot-manifest 2
 *   d <mode octal> <path>
 *   f <mode octal> <size> <sha256> <path>
 *   l <link target> <path>
 * A manifest, parsed: one entry per line, in its order. This is the format's one reader. */
#define TREE_MANIFEST_HEADER "crossroot-manifest 2\n"
struct tree_entry {
	char kind;                  /* 'd', 'f' or 'l' */
	unsigned mode;              /* d, f */
	long long size;             /* f */
	char *value;                /* sha256 (f) or link target (l) */
	char *path;                 /* relative; never absolute, through "..", or with "//" */
	char *from;                 /* f, in a union: the cached file to copy; else NULL */
	char *owner;                /* in a union: the result it is from, for messages; else "" */
	size_t order;               /* its line's position */
};
struct tree_manifest {
	struct tree_entry *entries;
	size_t n, cap;
};
/* Parse manifest `text` (not changed) into `m` (zeroed by the caller). `name` is for the
 * message: -1 with *why as "NAME:3: malformed manifest line" (free it); release `m` all the
 * same. A line with a sha256 that is not 64 lowercase hex digits, or a path that could leave
 * its directory, is malformed. */
int tree_manifest_parse(struct tree_manifest *m, const char *name, const char *text,
                         char **why);
void tree_manifest_release(struct tree_manifest *m);

/* The entry lines alone, for a text with another header that the caller checked (a package
 * manifest's input records, package.h): `text` starts at the first entry line, which is line
 * `first_line` of `name` (for messages). As tree_manifest_parse() otherwise. */
int tree_manifest_parse_body(struct tree_manifest *m, const char *name, const char *text,
                             size_t first_line, char **why);
/* One entry's line, as above, appended to `out`: the format's one writer (the scan, package
 * manifests and their overlay records). */
void tree_entry_line(const struct tree_entry *e, struct buf *out);

/* The parser under tree_manifest_parse(): `text` is changed in place, entries are appended to
 * *out (n, cap), `files` (or NULL) prefixes each file's `from`, `owner` (or NULL) is copied
 * into each entry. -1 with *why (free it). */
int tree_manifest_parse_entries(const char *name, char *text, const char *files, const char *owner,
                                struct tree_entry **out, size_t *n, size_t *cap, char **why);
void tree_entries_free(struct tree_entry *e, size_t n);
/* By path, then line order: for qsort and bsearch over entries. */
int tree_entry_compare(const void *a, const void *b);

/* The scan that writes a manifest: the tree at `root` walked with tree_walk(), one line per
 * entry into `out` (the caller puts TREE_MANIFEST_HEADER first). Publishing (`normalise`)
 * fixes modes (no set-id, sticky, group or other write; files read-only) and refuses what a
 * sysroot must not hold (names or link targets with a tab or newline, other file types);
 * checking takes the hash of a file unchanged since `published` from `known` (sorted by
 * tree_entry_compare; NULL: hash every file). */
struct tree_scan {
	struct buf out;
	bool normalise;
	const struct tree_entry *known;
	size_t n_known;
	struct timespec published;   /* files changed after this are hashed again */
};
int tree_scan(struct tree_scan *s, const char *root);

/* ---- a deterministic tar writer ----
 * What the remote cache's entries and the packages are: pax (restricted) tar through zstd or
 * xz, every entry made from what the caller says (type, mode, size, link target), owner 0:0
 * and one mtime, nothing taken from the file system but a file's bytes. Written to a
 * temporary name and renamed into place by tree_tar_close(), so a failed or interrupted
 * write leaves nothing. */
enum tree_tar_filter { TREE_TAR_ZSTD, TREE_TAR_XZ };
struct tree_tar_entry {
	char kind;            /* 'd', 'f' or 'l' */
	unsigned mode;        /* permission bits (a link's are 0777) */
	const char *path;     /* its name in the archive */
	const char *link;     /* 'l': the target */
	long long size;       /* 'f': exactly this many bytes must come */
};
struct tree_tar;
/* Start `path` (NULL after error()). */
struct tree_tar *tree_tar_open(const char *path, enum tree_tar_filter filter, long long mtime);
/* Add an entry; a file's bytes come from `data` (`size` of them) or, when data is NULL, from
 * `fd` read to its end (`from` names it in messages). A file whose size is not the entry's
 * changed since it was described: an error. Returns 0 or -1 after error(). */
int tree_tar_add(struct tree_tar *t, const struct tree_tar_entry *e, const void *data, int fd,
                 const char *from);
/* Finish and rename into place (`keep`), or abandon (nothing left). Frees `t`. 0 or -1. */
int tree_tar_close(struct tree_tar *t, bool keep);

/* ---- the tar reader ----
 * Members one by one, as stored, their data streamed and hashed (a member is never held whole
 * unless the caller keeps it): for `verify` and the checked unpacker below. */
struct tree_tar_member {
	char kind;            /* 'd', 'f', 'l'; 'h' a hard link; '?' anything else */
	unsigned mode;        /* permission bits as stored (07777) */
	const char *path;     /* as stored, without a trailing '/' */
	const char *link;     /* 'l': the target; 'h': the name it links to */
	long long size;       /* as the header says */
};
struct tree_tar_reader;
/* Open `path` (tar; through zstd only, or any compression libarchive knows). NULL with *why
 * (libarchive's words; free it) when it cannot be read. */
struct tree_tar_reader *tree_tar_read_open(const char *path, bool zstd_only, char **why);
/* The next member's header into *m (valid until the next call): 1; 0 at the end; -1 if the
 * archive is damaged (tree_tar_read_error says how). */
int tree_tar_read_next(struct tree_tar_reader *r, const struct tree_tar_member **m);
/* The current member's bytes, read to its end: their sha256 and count; the first `keep_max`
 * of them also appended to `keep` (or NULL) unless there are more (*size says). 0, or -1 if
 * damaged. A member's data not read is skipped by the next tree_tar_read_next(). */
int tree_tar_read_data(struct tree_tar_reader *r, char sha256[DIGEST_HEX_LEN + 1],
                       long long *size, struct buf *keep, size_t keep_max);
const char *tree_tar_read_error(const struct tree_tar_reader *r);
void tree_tar_read_close(struct tree_tar_reader *r);

/* ---- the checked unpacker ----
 * Unpack `archive_path` (tar, zstd) into the directory `dest`: each entry must be an entry of
 * the (signed) manifest `m`, sorted by tree_entry_by_path, of its type, size and link target,
 * and appear once. Returns 0; 1 if the archive is refused (`why` says why: also when the
 * extractor refuses an entry the manifest lists); -1 on a local error (a full disk). Entry
 * names are taken relative to `dest` (entered for the time being), with libarchive's secure
 * flags: no absolute path, no `..`, nothing through a link. */
int tree_tar_unpack(const char *archive_path, const char *dest, const struct tree_manifest *m,
                    struct buf *why);
/* By path alone: each path is in a manifest once. */
int tree_entry_by_path(const void *a, const void *b);

#endif
