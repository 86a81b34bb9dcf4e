/* yamlfile: a thin layer over libyaml's document API that keeps the file's text so every
 * error can be printed as `file:line:column: message`, the offending line and a caret.
 *
 * Use: yamlfile_load(), then walk nodes with the getters below. Getters check the node's type
 * and report a mismatch through yamlfile_error() (counting it in `errors`) instead of failing
 * hard, so one run reports every problem of a file. Callers check `errors` at the end. */
#ifndef CROSSROOT_YAMLFILE_H
#define CROSSROOT_YAMLFILE_H

#include <stdbool.h>
#include <yaml.h>

#include "util.h"

struct yamlfile {
	char *path;          /* as given by the caller, used in messages */
	char *text;          /* whole file, for quoting lines in errors */
	yaml_document_t doc;
	bool has_doc;
	int errors;          /* problems reported so far */
};

/* Bounds on what a recipe may be: recipes are a few kilobytes and a few levels deep; beyond
 * these, libyaml's time grows fast (100,000 nested levels: 45 s). */
enum {
	YAMLFILE_MAX_BYTES = 1 << 20,
	YAMLFILE_MAX_DEPTH = 64,
};

/* Load and parse `path`. Returns -1 after printing the problem: missing or unreadable file,
 * not a regular file (a FIFO or device is refused before any read, so it cannot hang), more
 * than YAMLFILE_MAX_BYTES, a NUL byte, a syntax error with its mark, nesting deeper than
 * YAMLFILE_MAX_DEPTH, a second document, an empty document, a root that is not a mapping.
 * A key given twice in any mapping is reported at the second one, naming the first one's
 * line, and counted in `errors` (the load itself returns 0 so later checks report too). */
int yamlfile_load(struct yamlfile *f, const char *path);
void yamlfile_release(struct yamlfile *f);
yaml_node_t *yamlfile_root(struct yamlfile *f);

/* Report `file:line:col: message` for `node` (NULL: the file itself) and count it. */
void yamlfile_error(struct yamlfile *f, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Check a mapping's keys: every key a scalar, each in `allowed` (NULL-ended;
 * an unknown key gets the closest allowed one suggested), every `required` one present. */
void yamlfile_check_keys(struct yamlfile *f, yaml_node_t *map, const char *const allowed[],
                         const char *const required[]);

/* The value node of `key` in mapping `map`, or NULL. */
yaml_node_t *yamlfile_get(struct yamlfile *f, yaml_node_t *map, const char *key);
/* The scalar text of a node, or NULL (with an error) if it is not a scalar. */
const char *yamlfile_scalar(struct yamlfile *f, yaml_node_t *node, const char *what);
/* A scalar or a sequence of scalars, appended to `out`. */
int yamlfile_strings(struct yamlfile *f, yaml_node_t *node, const char *what, struct strlist *out);
/* Items of a sequence node: sets *items and *count, or reports an error and returns -1. */
int yamlfile_sequence(struct yamlfile *f, yaml_node_t *node, const char *what,
                      yaml_node_t ***items, size_t *count);
/* Key/value pairs of a mapping of scalars, appended as "key" and "value" alternately. */
int yamlfile_string_map(struct yamlfile *f, yaml_node_t *node, const char *what,
                        struct strlist *out);
/* Iterate a mapping's pairs: returns the number of pairs; keys/values via index. */
size_t yamlfile_map_size(yaml_node_t *map);
yaml_node_t *yamlfile_map_key(struct yamlfile *f, yaml_node_t *map, size_t i);
yaml_node_t *yamlfile_map_value(struct yamlfile *f, yaml_node_t *map, size_t i);

#endif
