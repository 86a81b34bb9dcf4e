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

/* Open `path` as a directory without following a link in its last component. A link, or
 * anything else that is not a directory, is refused with an error naming it and `whose` (e.g.
 * "the stage 'musl' left"), or with "is not a directory" when whose is NULL. -1 after error(),
 * or -2 (no error printed) when it does not exist and `missing_ok`. */
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

#endif
