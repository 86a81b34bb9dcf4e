/* util: error reporting, memory, strings and small file-system helpers shared by every module.
 * Nothing here knows about targets or stages. */
#ifndef CROSSROOT_UTIL_H
#define CROSSROOT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

/* Exit codes of the crossroot command (documented in README.md). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILED = 1,      /* a build step or a sysroot test failed */
	EXIT_CONFIG = 2,      /* bad command line, missing or invalid YAML */
	EXIT_FETCH = 3,       /* a source could not be fetched or verified, or extracted */
	EXIT_LOCKED = 4,      /* another crossroot holds the work directory */
	EXIT_MISMATCH = 5,    /* verify: files differ from the manifest; build --check: the builds differ */
	EXIT_NO_SESSION = 125,   /* exec: no session was made, the command never ran (env's 125) */
	EXIT_INTERRUPTED = 130,
};

/* Print "crossroot: <message>" on stderr. A message ending in ':' gets ": strerror(errno)"
 * appended (the samurai/sbase convention). Library code calls this and returns -1/NULL;
 * only main() decides to exit. */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line on stdout, flushed (the user follows progress through these). */
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Paths and commands that reach a shell (build steps, run wrappers) are kept to letters,
 * digits and /._+-,=:@%: the first other character of `s`, or '\0' if there is none. */
char shell_unsafe_char(const char *s);

/* Credentials never reach a message: error(), warn(), info() and the YAML messages
 * (yamlfile.h, recipes.h) pass their text through url_redact(), so a URL may be printed as it
 * was given. url_redact returns `text` (allocated) with the user information of every URL in
 * it hidden: "https://user:secret@host/x" becomes "https://user:***@host/x", and a user name
 * alone (often a token: "https://TOKEN@host") becomes three stars before the '@'. */
char *url_redact(const char *text);
/* fmt and ap formatted, redacted, written to `f` (no newline added). */
void vprint_redacted(FILE *f, const char *fmt, va_list ap);

/* A status line on a terminal, redrawn in place; info(), warn() and error() erase it first
 * so log lines never mix with it. */
void status_show(const char *text);
void status_clear(void);

/* Allocation that cannot fail: out of memory aborts (there is nothing sensible to do). */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* A growable string; `s` is always NUL-terminated once anything was added. */
struct buf {
	char *s;
	size_t len, cap;
};
void buf_add(struct buf *b, const char *s, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_release(struct buf *b);
/* Return the string (never NULL) and leave `b` empty. */
char *buf_detach(struct buf *b);

/* A growable array of owned strings. */
struct strlist {
	char **v;
	size_t n, cap;
};
void strlist_add(struct strlist *l, const char *s);   /* copies s */
void strlist_take(struct strlist *l, char *s);        /* takes ownership of s */
bool strlist_has(const struct strlist *l, const char *s);
void strlist_sort(struct strlist *l);
void strlist_release(struct strlist *l);

/* File system. All return 0 on success, -1 after error() has described the failure. */
int mkdir_p(const char *path, mode_t mode);
int remove_tree(const char *path);                    /* rm -rf; a missing path is fine */
/* Read a whole file; returns NULL (with error()) on failure. *len may be NULL. */
char *read_file(const char *path, size_t *len);
/* A file a user names (a key, a configuration), opened for reading only if it is a regular
 * file (after links): a FIFO, device or directory is refused at once, naming it as `what`
 * ("signing key"), never waited on. Returns the descriptor (blocking, CLOEXEC), or -1 after
 * error(). read_regular_file: its whole text, as read_file. */
int open_regular(const char *path, const char *what);
char *read_regular_file(const char *path, const char *what, size_t *len);
/* Write all of data to fd; a short write is a full disk (ENOSPC). Reports "cannot write
 * 'name': <reason>" and returns -1 on failure. */
int write_all(int fd, const void *data, size_t len, const char *name);
/* Write data to path.tmp, fsync, rename over path: readers see the old or the new file. */
int write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
bool path_exists(const char *path);
bool is_dir(const char *path);
char *path_join(const char *a, const char *b);
/* Is `path` (its first `len` characters) `dir` or below it? */
bool path_below(const char *path, size_t len, const char *dir);
/* The absolute path of the program `name` as PATH finds it (only PATH's absolute entries;
 * "/usr/bin:/bin" when PATH is unset or empty), or NULL. A name holding '/' is itself, if
 * it can be executed. */
char *path_search(const char *name);
/* Directory entries (not . and ..), sorted by name; NULL list if the directory is missing. */
int list_dir(const char *path, struct strlist *out);
/* Copy a regular file, a symlink or a directory tree; `link_files` hardlinks regular files
 * instead of copying them (falling back to a copy across file systems). Existing regular
 * files at the destination are replaced. */
int copy_tree(const char *from, const char *to, bool link_files);

/* Monotonic seconds, for durations. */
double now_seconds(void);
/* "1.2 s", "3 min 04 s" */
const char *format_duration(double seconds, char out[32]);
/* "12.3 MB" */
const char *format_size(double bytes, char out[32]);

/* Levenshtein distance, for "did you mean" suggestions. */
/* `text` with every `what` replaced by `with`, newly allocated. */
char *str_replace_all(const char *text, const char *what, const char *with);
size_t edit_distance(const char *a, const char *b);

/* Set by the SIGINT/SIGTERM handler; long loops check it. */
extern volatile int interrupted;

/* A file's bytes, mapped read-only (an empty file: ""), or NULL after error(); the length in
 * *len. unmap_file() releases them. */
void *map_file(const char *path, size_t *len);
void unmap_file(void *data, size_t len);

#endif
